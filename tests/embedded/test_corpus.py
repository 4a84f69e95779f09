"""The generated corpus (jtc_utils.embedded): the properties the embedded world promised from the start, and the
leak, duplicate and artefact measures of its second version (issue 13) that the first failed."""

import collections
import re
import statistics

import pytest

from jtc_utils.embedded import corpus, leaks, words
from jtc_utils.embedded.world import COUNTRY_FORMS, PRESENT, build_world


@pytest.fixture(scope="module")
def training():
    return corpus.training_sentences()


@pytest.fixture(scope="module")
def pools():
    return {d: corpus.pool(d, "train") + corpus.pool(d, "validation") for d in corpus.DOMAINS}


def _words(s):
    return [w for w, lab in s.words() if lab != "punct"]


# ---- what the first corpus promised ---------------------------------------------------------------------
@pytest.mark.slow
def test_size_vocabulary_and_sentence_lengths(training):
    assert sum(len(_words(s)) for s in training) >= 2_500_000
    assert len({w for s in training for w in _words(s)}) >= 5000
    for domain in corpus.DOMAINS:
        lengths = [len(_words(s)) for s in training if s.domain == domain]
        assert 15 <= statistics.mean(lengths) <= 30, domain
    assert sum(len(_words(s)) > 35 for s in training) / len(training) >= 0.10


def test_fact_recall_share_at_least_10_percent_in_each_domain(training):
    for domain in corpus.DOMAINS:
        labels = collections.Counter(lab for s in training if s.domain == domain for _, lab in s.words())
        assert labels["fact"] / sum(labels.values()) >= 0.10, domain


def test_labels_are_known_and_spans_match_the_text(training):
    for s in training[:3000]:
        for (a, b, lab), (w, _) in zip(s.spans, s.words()):
            assert lab in corpus.LABELS
            assert s.text[a:b] == w and w.strip() == w and w


def test_articles_agree_with_the_next_word(training):
    for s in training[:20000]:
        ws = s.words()
        for (w, lab), (nxt, _) in zip(ws, ws[1:]):
            if lab == "agree" and w in ("a", "an"):
                assert w == ("an" if nxt[0].lower() in "aeiou" else "a"), s.text


def test_same_seed_same_corpus_and_another_seed_differs():
    assert [s.text for s in corpus.training_sentences(300)] == [s.text for s in corpus.training_sentences(300)]
    assert [s.text for s in corpus.training_sentences(300, seed=1)] != [s.text for s in corpus.training_sentences(300)]
    assert corpus.pool("news", "validation", n=50) == corpus.pool("news", "validation", n=50)


def test_splits_have_the_paper_sizes_and_never_overlap(training):
    for domain in corpus.DOMAINS:
        tr, va = corpus.pool(domain, "train"), corpus.pool(domain, "validation")
        assert (len(tr), len(va)) == ((9000, 3000) if domain == "encyclopedia" else (9000, 1000))  # the paper's
        assert not {s.text for s in tr} & {s.text for s in va}
        assert not ({s.text for s in tr} | {s.text for s in va}) & {s.text for s in training}
        assert all(s.text.endswith("\n") == (domain == "encyclopedia") for s in tr[:200])
    with pytest.raises(ValueError, match="unknown domain"):
        corpus.pool("wiki", "train")
    with pytest.raises(ValueError, match="between 1 and 1000"):
        corpus.pool("news", "validation", n=5000)


# ---- no leaks -------------------------------------------------------------------------------------------
def test_no_pool_sentence_shares_a_five_word_opening_with_the_training_text(training, pools):
    opening = lambda s: tuple(s.text.split()[: corpus.PREFIX_WORDS])  # noqa: E731
    seen = {opening(s) for s in training}
    for domain, sentences in pools.items():
        assert not any(opening(s) in seen for s in sentences), domain
        assert leaks.prefix_leak(sentences[-3000:], training) == 0.0, domain


def test_the_prefix_leak_measure_finds_a_pool_sentence_that_begins_a_training_one():
    """The measure itself (the first corpus leaked 31.6% of its encyclopedia validation sentences this way)."""
    train = [
        corpus.Sentence(text=t, domain="news", spans=())
        for t in ("Ana Bel was born in Kor in 1901 and died in 1950.", "The bank opened in 1920.")
    ]
    pool = [
        corpus.Sentence(text=t, domain="news", spans=())
        for t in ("Ana Bel was born in Kor in 1901.", "The bank closed in 1920.", "The bank opened in 1920.")
    ]
    assert leaks.prefix_leak(pool, train) == pytest.approx(2 / 3)


def test_no_duplicates_and_no_clause_said_twice(training, pools):
    assert leaks.duplicate_share(training) < 0.01
    assert leaks.repeated_clause_share(training[:30000]) < 0.01
    for sentences in pools.values():
        assert leaks.repeated_clause_share(sentences) < 0.01


# ---- artefacts of the first world ---------------------------------------------------------------------------
def test_founders_are_born_before_their_organisations_and_nothing_is_founded_in_the_future():
    w = build_world(0)
    for o in w.orgs:
        assert o.founder.birth_year + 25 <= o.founded <= min(o.founder.birth_year + 60, PRESENT)
        assert o.founded >= o.city.founded
    for p in w.people:  # an employer that existed when they joined (or the oldest one)
        assert p.employer.founded <= max(p.birth_year + 30, min(o.founded for o in w.orgs))


def test_country_adjectives_follow_the_patterns_of_real_ones():
    w = build_world(0)
    forms = dict(COUNTRY_FORMS)
    for c in w.countries:
        end = next(e for e, _ in COUNTRY_FORMS if e and c.name.endswith(e)) if not c.adjective.endswith("ese") else ""
        stem = c.name[: len(c.name) - len(end)]
        assert c.adjective == stem + forms[end] and stem[-1] not in "aeiouy", (c.name, c.adjective)


def test_no_past_event_after_the_present(pools, training):
    for sentences in (*pools.values(), training[:30000]):
        assert leaks.late_past_share(sentences, PRESENT) == 0.0
    joined = re.compile(r"^In (\d{4}), .* where (?:he|she) joined the ([^,.;]+?)[,.;]")
    founded = {o.name: o.founded for o in corpus.world(0).orgs}
    n = 0
    for s in training[:30000]:
        m = joined.match(s.text)
        if m and m.group(2) in founded:
            n += 1
            assert founded[m.group(2)] <= int(m.group(1)) <= PRESENT, s.text
    assert n > 100


def test_multi_hop_facts_are_consistent(training):
    """'... family moved from CITY to ..., and she later returned to COUNTRY': COUNTRY is CITY's country (two hops
    from the person, stated the same way every time)."""
    w = corpus.world(0)
    country = {c.name: c.country.name for c in w.cities}
    pattern = re.compile(r"family moved from (\w+) to \w+, and (?:he|she) \w+ returned to (\w+)")
    found = [m for s in training for m in [pattern.search(s.text)] if m]
    assert len(found) > 200
    assert all(country[m.group(1)] == m.group(2) for m in found)


def test_rare_words_form_a_zipfian_tail(training):
    counts = collections.Counter()
    for s in training[:40000]:
        for t in re.findall(r"(?:on|about) ([a-z]+ [a-z]+)(?: and|[.;,]|$)", s.text):
            counts[t] += 1
    topics = [counts[t] for t in words.TOPICS if counts[t]]
    assert len(topics) > 300  # many distinct topics ...
    assert sum(c <= 2 for c in topics) / len(topics) > 0.5  # ... most of them rare
    assert max(topics) >= 20 * statistics.median(topics)  # and a few frequent


def test_the_bigram_baseline_predicts_the_most_frequent_next_token():
    from jtc_utils.jtc import hardness

    class Words:  # a tokenizer that maps each word to a fixed id
        def __call__(self, texts, add_special_tokens=False):
            return {"input_ids": [[ord(w) for w in t.split()] for t in texts]}

    sents = [corpus.Sentence(text=t, domain="news", spans=()) for t in ("a b a c", "a b", "c a", "b c b a")]
    table = hardness.bigram_table(Words(), sents)
    assert table == {ord("a"): ord("b"), ord("b"): ord("a"), ord("c"): ord("a")}  # c->a and c->b tie: the smaller id


def test_a_persons_birth_facts_are_the_same_in_every_biography(training):
    """'NAME (born DAY MONTH YEAR ...': one birth date per person however often they are written about."""
    births = collections.defaultdict(set)
    pattern = re.compile(r"^(\w+ \w+) \(born (\d+ \w+ \d{4})")
    for s in training:
        m = pattern.match(s.text)
        if m:
            births[m.group(1)].add(m.group(2))
    assert len(births) > 200
    assert all(len(v) == 1 for v in births.values())


def test_number_agreement_over_distance(training):
    """'The <plural members> of the <Org>, which was founded in ... River, are mostly': the verb agrees with the
    distant plural subject."""
    hits = [s for s in training if s.text.startswith("The ") and " River, are mostly" in s.text]
    assert len(hits) > 100
    assert all(" which was founded in " in s.text.split(", are mostly")[0] for s in hits)


@pytest.mark.parametrize(
    "kwargs, err, words",
    [
        (dict(domain="encyclopedia", split="validation", n=3001), ValueError, "has 3000"),
        (dict(domain="news", split="validation", n=0), ValueError, "between 1 and"),
        (dict(domain="wiki", split="train"), ValueError, "unknown domain"),
        (dict(domain="news", split="test"), ValueError, "unknown split"),
        (dict(domain="news", split="train", seed="0"), TypeError, "seed must be a whole number"),
        (dict(domain="news", split="train", seed=1.5), TypeError, "seed must be a whole number"),
        (dict(domain="news", split="train", seed=-1), ValueError, "seed must be at least 0"),
    ],
)
def test_bad_requests_get_clear_errors(kwargs, err, words):
    with pytest.raises(err, match=words):
        corpus.pool(**kwargs)


def test_bad_seed_for_world_and_training_text():
    with pytest.raises(TypeError, match="seed must be a whole number"):
        build_world("x")
    with pytest.raises(TypeError, match="seed must be a whole number"):
        corpus.training_sentences(n=5, seed=None)
    with pytest.raises(ValueError, match="seed must be at least 0"):
        build_world(-3)


def test_the_same_seed_builds_the_same_world():
    w1, w2 = build_world(3), build_world(3)
    assert [p.name for p in w1.people] == [p.name for p in w2.people]
    assert [p.birth_city.name for p in w1.people] == [p.birth_city.name for p in w2.people]
