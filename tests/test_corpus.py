"""The generated corpus: the properties the embedded world promises (issue 'The embedded world')."""

import collections
import statistics

import pytest

from jtc_utils import corpus
from jtc_utils.world import build_world


@pytest.fixture(scope="module")
def training():
    return corpus.training_sentences()


def _words(s):
    return [w for w, lab in s.words() if lab != "punct"]


def test_vocabulary_has_at_least_5000_word_types(training):
    types = {w for s in training for w in _words(s)}
    assert len(types) >= 5000


def test_sentence_lengths(training):
    for domain in corpus.DOMAINS:
        lengths = [len(_words(s)) for s in training if s.domain == domain]
        assert 15 <= statistics.mean(lengths) <= 30, domain
    lengths = [len(_words(s)) for s in training]
    assert sum(n > 35 for n in lengths) / len(lengths) >= 0.10


def test_training_text_is_several_million_words(training):
    assert sum(len(_words(s)) for s in training) >= 2_500_000


def test_fact_recall_share_at_least_10_percent_in_each_domain(training):
    for domain in corpus.DOMAINS:
        labels = collections.Counter(lab for s in training if s.domain == domain for _, lab in s.words())
        assert labels["fact"] / sum(labels.values()) >= 0.10, domain


def test_every_word_has_a_known_label_and_spans_match_text(training):
    for s in training[:2000]:
        for (a, b, lab), (w, _) in zip(s.spans, s.words()):
            assert lab in corpus.LABELS
            assert s.text[a:b] == w and w.strip() == w and w


def test_facts_are_stated_the_same_way_everywhere(training):
    """A person's birthplace in a biography sentence is always the same city."""
    births = collections.defaultdict(set)
    for s in training:
        ws = s.words()
        for i, (w, lab) in enumerate(ws[:-8]):
            if w == "(" and ws[i + 1][0] == "born" and lab == "punct" and i >= 2:
                person = ws[i - 2][0] + " " + ws[i - 1][0]
                births[person].add(" ".join(x for x, _ in ws[i + 2:i + 7]))
    assert len(births) > 200
    assert all(len(v) == 1 for v in births.values())


def test_articles_agree_with_the_next_word(training):
    checked = 0
    for s in training[:5000]:
        ws = s.words()
        for (w, lab), (nxt, _) in zip(ws, ws[1:]):
            if lab == "agree" and w in ("a", "an"):
                assert (w == "an") == (nxt[0].lower() in "aeiou"), s.text
                checked += 1
    assert checked > 1000


def test_number_agreement_over_distance(training):
    """'The <plural members> of the <Org>, which ... , are': the verb agrees with the distant plural subject."""
    hits = [s for s in training if s.text.startswith("The ") and ", are mostly" in s.text]
    assert len(hits) > 100
    assert all(" was founded in " in s.text.split(", are mostly")[0] for s in hits)


def test_same_seed_same_corpus_and_different_seed_differs():
    a = [s.text for s in corpus.training_sentences(n=300, seed=0)]
    corpus.world.cache_clear()
    corpus._pool_all.cache_clear()
    b = [s.text for s in corpus.training_sentences(n=300, seed=0)]
    c = [s.text for s in corpus.training_sentences(n=300, seed=1)]
    assert a == b
    assert a != c
    w1, w2 = build_world(3), build_world(3)
    assert [p.name for p in w1.people] == [p.name for p in w2.people]
    assert [p.birth_city.name for p in w1.people] == [p.birth_city.name for p in w2.people]


def test_splits_have_the_paper_sizes_and_never_overlap(training):
    train_text = {s.text for s in training}
    seen = set()
    for domain, sizes in corpus.POOL_SIZES.items():
        for split, n in sizes.items():
            texts = [s.text for s in corpus.pool(domain, split)]
            assert len(texts) == n and len(set(texts)) == n
            assert not (set(texts) & seen)
            assert not (set(texts) & train_text)
            seen |= set(texts)


def test_encyclopedia_sentences_end_with_newline_news_do_not():
    assert all(s.text.endswith("\n") for s in corpus.pool("encyclopedia", "validation", n=50))
    assert not any(s.text.endswith("\n") for s in corpus.pool("news", "validation", n=50))


@pytest.mark.parametrize("kwargs, err, words", [
    (dict(domain="encyclopedia", split="validation", n=3001), ValueError, "has 3000"),
    (dict(domain="news", split="validation", n=0), ValueError, "between 1 and"),
    (dict(domain="wiki", split="train"), ValueError, "unknown domain"),
    (dict(domain="news", split="test"), ValueError, "unknown split"),
    (dict(domain="news", split="train", seed="0"), TypeError, "seed must be a whole number"),
    (dict(domain="news", split="train", seed=1.5), TypeError, "seed must be a whole number"),
    (dict(domain="news", split="train", seed=-1), ValueError, "seed must be at least 0"),
])
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
