"""The generated two-domain corpus: an *encyclopedia* domain (stands in for the paper's Wikipedia sentences)
and a *news* domain (stands in for the Leipzig news sentences), both about one shared generated world.

Every word carries a label saying what kind of prediction it is:

=========  ==============================================================================================
label      meaning
=========  ==============================================================================================
function   function words and fixed template words ("the", "was", "born", "said")
content    open-class words chosen freely by the template (nouns, verbs, adjectives)
entity     the first mention of an entity (a person, city, organisation); cannot be predicted
fact       a word that can only be predicted by recalling a fact about an entity named earlier
           in the sentence (a birthplace, a founder, a currency); stated the same way everywhere
number     numbers and dates that are not facts (event dates, counts, percentages)
agree      a word whose form is fixed by agreement with an earlier word (was/were, he/she, a/an)
punct      punctuation
=========  ==============================================================================================

Public entry points: :func:`pool` (held-out experiment sentences, the paper's split sizes) and
:func:`training_sentences` (the models' training text). Both are deterministic for a given seed; the
two never share a sentence.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate

from . import validate
from .world import MONTHS, OCCUPATIONS, ORG_KINDS, WEEKDAYS, World, build_world

LABELS = ("function", "content", "entity", "fact", "number", "agree", "punct")
DOMAINS = ("encyclopedia", "news")
# the paper's sizes: Wikipedia 9,000 train + 3,000 validation; Leipzig 9,000 train + 1,000 validation
POOL_SIZES = {"encyclopedia": {"train": 9000, "validation": 3000},
              "news": {"train": 9000, "validation": 1000}}
TRAINING_SENTENCES = 130_000  # about 3 million words

_NO_SPACE_BEFORE = {",", ".", ";", ":", ")", "%"}
_NO_SPACE_AFTER = {"("}


@dataclass(frozen=True)
class Sentence:
    """One generated sentence: its text and, for every word, its character span and label."""

    text: str
    domain: str
    spans: tuple  # ((start, end, label), ...)

    def words(self) -> list[tuple[str, str]]:
        return [(self.text[a:b], lab) for a, b, lab in self.spans]

    def label_at(self, start: int, end: int) -> str:
        """Label of the word that a token with character offsets [start, end) belongs to.

        Sub-word tokens take the label of their word; a token holding only whitespace (the trailing
        newline of an encyclopedia sentence) is ``punct``.
        """
        for a, b, lab in self.spans:
            if a < end and start < b:
                return lab
        return "punct"


class _Builder:
    def __init__(self):
        self.parts: list[tuple[str, str]] = []

    def add(self, text: str, label: str) -> "_Builder":
        for w in text.split():
            self.parts.append((w, label))
        return self

    def f(self, text):
        return self.add(text, "function")

    def c(self, text):
        return self.add(text, "content")

    def e(self, text):
        return self.add(text, "entity")

    def fact(self, text):
        return self.add(text, "fact")

    def n(self, text):
        return self.add(str(text), "number")

    def a(self, text):
        return self.add(text, "agree")

    def p(self, text):
        return self.add(text, "punct")

    def build(self, domain: str, newline: bool) -> Sentence:
        text, spans = [], []
        pos = 0
        quote_open = False
        for i, (w, lab) in enumerate(self.parts):
            space = i > 0 and w not in _NO_SPACE_BEFORE and self.parts[i - 1][0] not in _NO_SPACE_AFTER
            if w == '"':
                if quote_open:
                    space = False
                quote_open = not quote_open
            elif i > 0 and self.parts[i - 1][0] == '"' and quote_open:
                space = False
            if space:
                text.append(" ")
                pos += 1
            text.append(w)
            spans.append((pos, pos + len(w), lab))
            pos += len(w)
        s = "".join(text)
        if newline:  # like the paper's Wikipedia sentences, which keep their trailing newline
            s += "\n"
        return Sentence(text=s, domain=domain, spans=tuple(spans))


def _fmt(n: int) -> str:
    return f"{n:,}"


def _article(word: str) -> str:
    return "an" if word[0].lower() in "aeiou" else "a"


def _was(p) -> str:
    return "is" if p.alive else "was"


# ---------------------------------------------------------------------------------------------------------
# vocabulary for the freely chosen (content) words
_PROJECTS = ["bridge", "hospital", "school", "railway line", "power station", "harbour", "library",
             "stadium", "factory", "airport", "water plant", "museum", "market hall", "tunnel", "highway",
             "dam", "theatre", "prison", "university campus", "ferry terminal", "wind farm", "shopping centre",
             "sports hall", "concert hall", "fire station", "police station", "housing estate", "canal"]
_BUILD_VERBS = ["built", "opened", "closed", "expanded", "repaired", "sold", "bought", "funded", "inspected",
                "rebuilt", "renovated", "replaced", "moved", "extended", "modernised", "demolished"]
_ADJ = ["strong", "weak", "disappointing", "record", "mixed", "better than expected", "worse than expected",
        "solid", "modest", "surprising", "steady", "poor", "excellent", "uneven"]
_VEHICLES = ["bus", "lorry", "train", "van", "tram", "car", "ferry", "truck", "minibus", "coach"]
_ACCIDENTS = ["crashed", "overturned", "caught fire", "left the road", "collided with a wall",
              "hit a bridge", "derailed", "skidded on ice"]
_TOPICS = ["river ecology", "medieval trade", "urban planning", "rural poverty", "early printing",
           "folk music", "coastal erosion", "public health", "railway history", "crop diseases",
           "ancient coins", "mountain glaciers", "labour law", "local dialects", "bird migration",
           "bridge design", "tax reform", "child nutrition", "water supply", "naval history",
           "stone carving", "solar energy", "market prices", "forest management", "church music"]
_WORKS = ["book", "study", "report", "essay", "survey", "thesis", "lecture", "article", "paper", "history"]
_QUOTE_VERBS = ["finish", "improve", "protect", "open", "complete", "support", "review", "defend", "change"]
_QUOTE_NOUNS = ["project", "plan", "service", "agreement", "programme", "station", "network", "budget",
                "contract", "proposal", "schedule", "reform"]
_WHEN = ["before the end of the year", "as soon as possible", "within two years", "next spring",
         "by the summer", "in the coming months", "this autumn", "without further delay"]
_UNITS = [("tonnes", "of grain"), ("kilometres", "of new track"), ("hectares", "of forest"),
          ("litres", "of fuel"), ("tonnes", "of steel"), ("kilometres", "of road"), ("homes", ""),
          ("jobs", ""), ("beds", ""), ("seats", "")]
_REPORT_VERBS = ["said", "announced", "confirmed", "told reporters", "stated", "warned"]
_EVENTS = ["a strike", "heavy rain", "a fire", "a power cut", "flooding", "a storm", "a protest", "snow"]


class _Gen:
    """Sentence templates for both domains over one world. One instance per random stream."""

    def __init__(self, world: World, rng: random.Random):
        self.w, self.rng = world, rng
        self._pcum = list(accumulate(world.person_w))
        self._ccum = list(accumulate(world.city_w))
        self._ocum = list(accumulate(world.org_w))

    # weighted entity draws (frequent entities can be learned; rare ones cannot)
    def person(self):
        return self.rng.choices(self.w.people, cum_weights=self._pcum)[0]

    def city(self):
        return self.rng.choices(self.w.cities, cum_weights=self._ccum)[0]

    def org(self):
        return self.rng.choices(self.w.orgs, cum_weights=self._ocum)[0]

    # ---- reusable clause pieces -------------------------------------------------------------------------
    def _org_name(self, b, o, label):
        b.f("the")
        b.add(o.name, label)

    def _person_ext(self, b, p, lo=0.0):
        """A continuation about person p (already named), adding about 8-14 words of facts."""
        r = lo + (1 - lo) * self.rng.random()
        if r < 0.25:
            b.p(",").f("and").a(p.subj).fact(_was(p)).a(_article(OCCUPATIONS[p.occupation][0]))
            b.fact(OCCUPATIONS[p.occupation][0]).f("at")
            self._org_name(b, p.employer, "fact")
        elif r < 0.5:
            b.p(",").f("and").a(p.poss).f("best known").c(self.rng.choice(_WORKS)).f("on")
            b.c(self.rng.choice(_TOPICS)).f("was written in").fact(p.birth_city.country.adjective)
        elif r < 0.75:
            c = p.birth_city
            b.p(",").f("having been born in").fact(c.name).p(",").a(_article(c.kind)).fact(c.kind)
            b.f("on the").fact(c.river).f("River")
        else:
            b.p(";").a(p.poss).f("employer").p(",").f("the").fact(p.employer.name).p(",")
            b.f("was founded in").fact(str(p.employer.founded)).f("in").fact(p.employer.city.name)

    def _org_ext(self, b, o):
        r = self.rng.random()
        if r < 0.5:
            b.p(",").f("and it employs").fact(_fmt(o.staff)).fact(ORG_KINDS[o.kind][2])
        else:
            f = o.founder
            b.p(",").f("and its founder").p(",").fact(f.name).p(",").f("was born in").fact(f.birth_city.name)
            b.f("in").fact(str(f.birth_year))

    def _city_ext(self, b, c):
        r = self.rng.random()
        if r < 0.5:
            b.p(",").f("and it lies on the").fact(c.river).f("River")
        else:
            b.p(";").f("the").a(c.kind).f("was founded in").fact(str(c.founded))

    def _extend(self, b, fn, x, p_more=0.5, **kw):
        while self.rng.random() < p_more:
            fn(b, x, **kw)
            p_more *= 0.8

    # ---- encyclopedia ------------------------------------------------------------------------------------
    def enc_bio(self, b):
        p = self.person()
        occ = OCCUPATIONS[p.occupation][0]
        nat = p.birth_city.country.adjective
        b.e(p.name).p("(").f("born").fact(str(p.birth_day)).fact(p.birth_month).fact(str(p.birth_year))
        b.f("in").fact(p.birth_city.name).p(")").fact(_was(p)).a(_article(nat)).fact(nat).fact(occ)
        b.f("who").fact("works" if p.alive else "worked").f("for")
        self._org_name(b, p.employer, "fact")
        self._extend(b, self._person_ext, p, lo=0.25)  # occupation and employer are stated already

    def enc_city(self, b):
        c = self.city()
        b.e(c.name).f("is").a(_article(c.kind)).fact(c.kind).f("in").fact(c.country.name).f("on the")
        b.fact(c.river).f("River").p(",").f("with a population of").fact(_fmt(c.population))
        if c.country.capital is c:
            b.p(",").f("and it is the capital of").fact(c.country.name)
        self._extend(b, self._city_ext, c, 0.3)

    def enc_org(self, b):
        o = self.org()
        f = o.founder
        b.f("The").e(o.name).f("is").a(_article(ORG_KINDS[o.kind][1])).fact(ORG_KINDS[o.kind][1])
        b.f("based in").fact(o.city.name).p(",").f("founded in").fact(str(o.founded)).f("by the")
        b.fact(OCCUPATIONS[f.occupation][0]).fact(f.name)
        self._extend(b, self._org_ext, o)

    def enc_move(self, b):
        p = self.person()
        o = p.employer
        b.f("In").n(str(p.birth_year + self.rng.randint(18, 35))).p(",").e(p.name).p(",")
        b.a(_article(OCCUPATIONS[p.occupation][0])).fact(OCCUPATIONS[p.occupation][0]).f("from")
        b.fact(p.birth_city.name).p(",").f("moved to").fact(o.city.name).p(",").f("where").a(p.subj)
        b.f("joined")
        self._org_name(b, o, "fact")
        self._extend(b, self._person_ext, p, 0.3)

    def enc_members(self, b):
        """Agreement over distance: a plural or singular subject, a long relative clause, then the verb."""
        o = self.org()
        members = ORG_KINDS[o.kind][2]
        if self.rng.random() < 0.5:
            b.f("The").c(members).f("of the").e(o.name).p(",").f("which was founded in").fact(str(o.founded))
            b.f("in the").fact(o.city.kind).f("of").fact(o.city.name).f("on the").fact(o.city.river)
            b.f("River").p(",").a("are").f("mostly").c(self.rng.choice(["young", "local", "foreign", "women",
                                                                          "volunteers", "students"]))
        else:
            b.f("The founder of the").e(o.name).p(",").f("which employs").fact(_fmt(o.staff))
            b.fact(members).f("in").fact(o.city.name).p(",").a("was").f("the")
            b.fact(OCCUPATIONS[o.founder.occupation][0]).fact(o.founder.name)
        self._extend(b, self._org_ext, o, 0.3)

    def enc_pair(self, b):
        """Coordination: two people, facts stated 'respectively'."""
        p, q = self.person(), self.person()
        b.e(p.name).f("and").e(q.name).p(",").f("who").a("were").f("born in").fact(str(p.birth_year))
        b.f("and").fact(str(q.birth_year)).f("respectively").p(",").f("both").c(self.rng.choice(
            ["wrote about", "lectured on", "worked on", "published on"])).c(self.rng.choice(_TOPICS))
        b.f("and").c(self.rng.choice(["met", "corresponded", "quarrelled", "collaborated"])).f("in")
        b.n(str(max(p.birth_year, q.birth_year) + self.rng.randint(20, 40)))

    def enc_country(self, b):
        c = self.rng.choice(self.w.countries)
        big = sum(1 for ct in self.w.cities if ct.country is c and ct.population >= 100_000)
        b.e(c.name).f("has").fact(str(big)).a("city" if big == 1 else "cities").f("with more than")
        b.f("100,000 inhabitants").p(",").f("and its capital").p(",").fact(c.capital.name).p(",")
        b.f("lies on the").fact(c.capital.river).f("River").p(";").f("the official language is")
        b.fact(c.adjective).f("and the currency is the").fact(c.currency)

    # ---- news --------------------------------------------------------------------------------------------
    def news_said(self, b):
        p = self.person()
        rng = self.rng
        b.e(p.name).p(",").f("the").fact(OCCUPATIONS[p.occupation][0]).f("at")
        self._org_name(b, p.employer, "fact")
        b.p(",").c(rng.choice(_REPORT_VERBS)).f("on").n(rng.choice(WEEKDAYS)).f("that the")
        b.c(rng.choice(_PROJECTS)).f("in").e(self.city().name).f("would be").c(rng.choice(_BUILD_VERBS))
        b.n(rng.choice(["in " + rng.choice(MONTHS), "by " + str(rng.randint(2024, 2035))]))
        if rng.random() < 0.5:
            b.p(",").f("and").a(p.subj).f("added that").n(str(rng.randint(2, 900))).c(rng.choice(_UNITS)[0])
            b.f("would be needed")
            self._extend(b, self._person_ext, p, 0.3)

    def news_quote(self, b):
        p = self.person()
        rng = self.rng
        b.p('"').f("We will").c(rng.choice(_QUOTE_VERBS)).f("the").c(rng.choice(_QUOTE_NOUNS))
        b.c(rng.choice(_WHEN)).p(",").p('"').f("said").e(p.name).p(",").f("who").fact(
            "has worked" if p.alive else "worked").f("for the").fact(p.employer.name).f("in")
        b.fact(p.employer.city.name)
        self._extend(b, self._person_ext, p, 0.35)

    def news_shares(self, b):
        o = self.org()
        rng = self.rng
        b.f("Shares in the").e(o.name).c(rng.choice(["rose", "fell"])).n(f"{rng.randint(1, 30)}.{rng.randint(0, 9)}")
        b.f("percent to").n(str(rng.randint(2, 400))).fact(o.city.country.currency + "s").f("on")
        b.n(rng.choice(WEEKDAYS)).p(",").f("after the").fact(ORG_KINDS[o.kind][1]).f("reported")
        b.c(rng.choice(_ADJ)).f("results")
        self._extend(b, self._org_ext, o, 0.35)

    def news_police(self, b):
        c = self.city()
        rng = self.rng
        n = rng.choice([1, 1, 2, 3, 4, 5, 6, 8, 12, 15, 20, 31])
        b.f("Police in").e(c.name).p(",").a(_article(c.kind)).fact(c.kind).f("of").fact(_fmt(c.population))
        b.f("people in").fact(c.country.name).p(",").f("said").n(str(n)).a("person was" if n == 1 else "people were")
        b.f("injured on").n(rng.choice(WEEKDAYS)).f("when a").c(rng.choice(_VEHICLES)).c(rng.choice(_ACCIDENTS))
        b.f("near the").fact(c.river).f("River")

    def news_gov(self, b):
        c = self.rng.choice(self.w.countries)
        rng = self.rng
        proj = rng.choice(_PROJECTS)
        b.f("The").e(c.adjective).f("government").c(rng.choice(_REPORT_VERBS)).f("on")
        b.n(f"{rng.randint(1, 28)} {rng.choice(MONTHS)}").f("that it would spend").n(str(rng.randint(2, 950)))
        b.n("million").fact(c.currency + "s").f("on a new").c(proj).f("in the capital").p(",")
        b.fact(c.capital.name)
        if rng.random() < 0.5:
            unit, what = rng.choice(_UNITS)
            b.p(",").f("and").n(_fmt(rng.randint(2, 90) * 100)).c(unit)
            if what:
                b.c(what)
            b.f("will be delivered").n(rng.choice(["by " + rng.choice(MONTHS), "next year", "this week"]))

    def news_event(self, b):
        """Long coordination: an event, a reporting clause and two people with facts."""
        c = self.city()
        rng = self.rng
        p, q = self.person(), self.person()
        b.f("After").c(rng.choice(_EVENTS)).f("closed the").c(rng.choice(_PROJECTS)).f("in").e(c.name)
        b.f("on").n(rng.choice(WEEKDAYS)).p(",").e(p.name).f("of the").fact(p.employer.name).f("and")
        b.e(q.name).f("of the").fact(q.employer.name).a("were").f("asked to").c(rng.choice(_QUOTE_VERBS))
        b.f("the").c(rng.choice(_QUOTE_NOUNS))

    ENC = ("enc_bio", "enc_city", "enc_org", "enc_move", "enc_members", "enc_pair", "enc_country")
    ENC_W = (5, 2, 2, 3, 2, 1, 1)
    NEWS = ("news_said", "news_quote", "news_shares", "news_police", "news_gov", "news_event")
    NEWS_W = (4, 3, 2, 2, 2, 2)

    def sentence(self, domain: str) -> Sentence:
        names, weights = (self.ENC, self.ENC_W) if domain == "encyclopedia" else (self.NEWS, self.NEWS_W)
        b = _Builder()
        getattr(self, self.rng.choices(names, weights=weights)[0])(b)
        b.p(".")
        return b.build(domain, newline=domain == "encyclopedia")


@lru_cache(maxsize=4)
def world(seed: int = 0) -> World:
    return build_world(seed)


def _check_domain(domain):
    if domain not in DOMAINS:
        raise ValueError(f"unknown domain {domain!r}; choose one of {', '.join(DOMAINS)}")


def _check_seed(seed):
    validate.seed(seed)


@lru_cache(maxsize=8)
def _pool_all(domain: str, seed: int) -> tuple[Sentence, ...]:
    rng = random.Random(f"pool/{domain}/{seed}")
    gen = _Gen(world(seed), rng)
    total = sum(POOL_SIZES[domain].values())
    out, seen = [], set()
    while len(out) < total:  # sentences within a pool are distinct, so train and validation never overlap
        s = gen.sentence(domain)
        if s.text not in seen:
            seen.add(s.text)
            out.append(s)
    return tuple(out)


def pool(domain: str, split: str, n: int | None = None, seed: int = 0) -> list[Sentence]:
    """Held-out experiment sentences: ``split`` is ``train`` (for fitting maps) or ``validation``.

    The sizes are the paper's (encyclopedia 9,000 + 3,000, news 9,000 + 1,000); ``n`` takes the first n.
    """
    _check_domain(domain)
    _check_seed(seed)
    return take_split(_pool_all(domain, seed), POOL_SIZES[domain], domain, split, n)


def take_split(pool, sizes: dict, domain: str, split: str, n: int | None) -> list:
    """The ``split`` part of a pool laid out as [train | validation], first ``n`` items, with clear errors."""
    if split not in sizes:
        raise ValueError(f"unknown split {split!r}; choose 'train' or 'validation'")
    if n is not None and not (0 < n <= sizes[split]):
        raise ValueError(f"asked for {n} {domain}/{split} sentences but the split has {sizes[split]}; "
                         f"pass n between 1 and {sizes[split]} (or n=None for all)")
    start = 0 if split == "train" else sizes["train"]
    part = pool[start:start + sizes[split]]
    return list(part[:n] if n is not None else part)


def training_sentences(n: int = TRAINING_SENTENCES, seed: int = 0) -> list[Sentence]:
    """The models' training text: both domains mixed half and half, none of it in any experiment pool."""
    _check_seed(seed)
    held_out = {s.text for d in DOMAINS for s in _pool_all(d, seed)}
    rng = random.Random(f"train/{seed}")
    gen = _Gen(world(seed), rng)
    out = []
    while len(out) < n:
        s = gen.sentence(DOMAINS[len(out) % 2])
        if s.text not in held_out:
            out.append(s)
    return out
