"""The grammar that writes the generated corpus (:mod:`jtc_utils.embedded.corpus`): the clause pieces and sentence
types of both domains over one world (:class:`Grammar`), one instance per random stream."""

from __future__ import annotations

import random
from itertools import accumulate

from .sentence import Builder, Sentence
from .words import (
    ACCIDENTS,
    ADJ,
    BUILD_VERBS,
    CUMULATIVE,
    EVENTS,
    PROJECTS,
    QUOTE_NOUNS,
    QUOTE_VERBS,
    REPORT_VERBS,
    ROLES,
    TOPICS,
    UNITS,
    VEHICLES,
    WHEN,
    WORKS,
)
from .world import MONTHS, OCCUPATIONS, ORG_KINDS, PRESENT, WEEKDAYS, World, plural


def _fmt(n: int) -> str:
    return f"{n:,}"


def _article(word: str) -> str:
    return "an" if word[0].lower() in "aeiou" else "a"


class Grammar:
    """The grammar over one world; one instance per random stream."""

    def __init__(self, world: World, rng: random.Random):
        self.w, self.rng = world, rng
        self._pcum = list(accumulate(world.person_w))
        self._ccum = list(accumulate(world.city_w))
        self._ocum = list(accumulate(world.org_w))
        self.papers = [o for o in world.orgs if ORG_KINDS[o.kind][1] == "daily newspaper"] or world.orgs

    # ---- draws -------------------------------------------------------------------------------------------
    def person(self):
        return self.rng.choices(self.w.people, cum_weights=self._pcum)[0]

    def city(self):
        return self.rng.choices(self.w.cities, cum_weights=self._ccum)[0]

    def org(self):
        return self.rng.choices(self.w.orgs, cum_weights=self._ocum)[0]

    def pick(self, items):
        """A word from a long list, rank-weighted (a Zipfian tail of rare words)."""
        return self.rng.choices(items, cum_weights=CUMULATIVE[id(items)])[0]

    def coin(self, p: float = 0.5) -> bool:
        return self.rng.random() < p

    def past_year(self, lo: int, hi: int) -> int:
        """A year for a past event, never after the present."""
        hi = min(hi, PRESENT)
        return self.rng.randint(min(lo, hi), hi)

    # ---- person facts, each a clause piece with several wordings -----------------------------------------
    @staticmethod
    def occ(p) -> str:
        return OCCUPATIONS[p.occupation][0]

    @staticmethod
    def was(p) -> str:
        return "is" if p.alive else "was"

    def p_birth(self, b, p):
        r = self.rng.random()
        if r < 0.4:
            b.f("was born in").fact(p.birth_city.name).f("in").fact(str(p.birth_year))
        elif r < 0.7:
            b.f("was born on").fact(str(p.birth_day)).fact(p.birth_month).fact(str(p.birth_year)).f("in")
            b.fact(p.birth_city.name)
        else:
            b.f("was born in the").fact(p.birth_city.kind).f("of").fact(p.birth_city.name)

    def p_job(self, b, p):
        o = p.employer
        if self.coin():
            b.fact("works" if p.alive else "worked").f("as").a(_article(self.occ(p))).fact(self.occ(p))
            b.f("for the").fact(o.name)
        else:
            b.fact(self.was(p)).a(_article(self.occ(p))).fact(self.occ(p)).f("at the").fact(o.name)

    def p_country(self, b, p):  # two hops: person -> birth city -> country
        b.f(self.rng.choice(["grew up in", "was raised in", "spent a childhood in"]))
        b.fact(p.birth_city.country.name)

    def p_language(self, b, p):  # three hops: person -> birth city -> country -> language
        if self.coin():
            b.f("wrote mostly in").fact(p.birth_city.country.adjective)
        else:
            b.f("speaks" if p.alive else "spoke").fact(p.birth_city.country.adjective).f("at home")

    def p_work(self, b, p):
        w = self.pick(WORKS)
        b.f("is best known for").a(_article(w)).c(w).f("on").c(self.pick(TOPICS))

    def join_year(self, p) -> int:
        """When p moved to join their employer: at 18-35, not before the employer existed, not after the present."""
        lo = max(p.birth_year + 18, p.employer.founded)
        return self.past_year(lo, max(lo, p.birth_year + 35))

    def p_moved(self, b, p):
        b.f("moved to").fact(p.employer.city.name).f("in").n(str(self.join_year(p)))

    def p_river(self, b, p):  # two hops: person -> birth city -> river
        b.f("grew up on the banks of the").fact(p.birth_city.river).f("River")

    def p_employer(self, b, p):  # two hops: person -> employer -> founding year
        b.f("joined the").fact(p.employer.name).p(",").f("which was founded in").fact(str(p.employer.founded))

    PERSON_PIECES = ("p_birth", "p_job", "p_country", "p_language", "p_work", "p_moved", "p_river", "p_employer")
    LATER = ("p_job", "p_work", "p_moved", "p_employer")  # pieces that may follow "and later"
    SAME_FACT = {"p_job": "p_employer", "p_employer": "p_job"}  # both name the employer: never in one sentence

    def person_pieces(self, b, p, k: int, skip=()):
        """``k`` more clauses about person p (already named), distinct, each opened by a pronoun that refers back
        (after a comma and "and", "and later", or a semicolon)."""
        skip = set(skip) | {self.SAME_FACT[x] for x in skip if x in self.SAME_FACT}
        chosen, pieces = [], [x for x in self.PERSON_PIECES if x not in skip]
        self.rng.shuffle(pieces)
        for name in pieces:
            if len(chosen) < k and self.SAME_FACT.get(name) not in chosen:
                chosen.append(name)
        for name in chosen:
            r = self.rng.random()
            if r < 0.45:
                b.p(",").f("and").a(p.subj)
            elif r < 0.75 or name not in self.LATER:
                b.p(";").a(p.subj)
            else:
                b.p(",").f("and later").a(p.subj)
            getattr(self, name)(b, p)

    def extra(self, lo: int = 0, hi: int = 2) -> int:
        """How many extra clauses a sentence gets: lo..hi, fewer more often."""
        return min(hi, lo + int(self.rng.expovariate(0.7)))

    # ---- encyclopedia: people ----------------------------------------------------------------------------
    def enc_bio(self, b):
        p = self.person()
        nat = p.birth_city.country.adjective
        b.e(p.name).p("(").f("born").fact(str(p.birth_day)).fact(p.birth_month).fact(str(p.birth_year))
        b.f("in").fact(p.birth_city.name).p(")").fact(self.was(p)).a(_article(nat)).fact(nat).fact(self.occ(p))
        self.person_pieces(b, p, self.extra(0, 4), skip=("p_birth", "p_country", "p_job"))

    def enc_bio_fronted(self, b):
        """A fronted birth phrase: the facts come before the name, so they are free choices, not recall."""
        p = self.person()
        b.f("Born in").c(p.birth_city.name).f("in").n(str(p.birth_year)).p(",").e(p.name)
        self.p_job(b, p)
        self.person_pieces(b, p, self.extra(0, 3), skip=("p_birth", "p_job"))

    def enc_known(self, b):
        p = self.person()
        b.e(p.name).fact(self.was(p)).f("a").c(
            self.rng.choice(["noted", "respected", "prolific", "little-known", "celebrated"])
        )
        b.fact(self.occ(p)).f("who")
        self.p_work(b, p)
        self.person_pieces(b, p, self.extra(1, 4), skip=("p_work",))

    def enc_among(self, b):
        o = self.org()
        if not o.members:
            return self.enc_bio(b)
        p = self.rng.choice(o.members)
        b.f("Among the").c(plural_occ(p)).f("of the").c(o.name).f("was").e(p.name).p(",").f("who")
        self.p_birth(b, p)
        self.person_pieces(b, p, self.extra(0, 1), skip=("p_birth", "p_job"))

    def enc_move(self, b):
        p = self.person()
        if self.coin():
            b.f("In").n(str(self.join_year(p))).p(",").e(p.name).p(",")
            b.a(_article(self.occ(p))).fact(self.occ(p)).f("from").fact(p.birth_city.name).p(",").f("moved to")
            b.fact(p.employer.city.name).p(",").f("where").a(p.subj).f("joined the").fact(p.employer.name)
        else:
            b.e(p.name).f("left").fact(p.birth_city.name).f("for").fact(p.employer.city.name).f("in")
            b.n(str(self.join_year(p))).f("to join the").fact(p.employer.name)
        self.person_pieces(b, p, self.extra(0, 3), skip=("p_moved", "p_job", "p_employer"))

    def enc_pair(self, b):
        p, q = self.person(), self.person()
        if p is q:
            return self.enc_bio(b)
        b.e(p.name).f("and").e(q.name).p(",").f("who").a("were").f("born in").fact(str(p.birth_year))
        b.f("and").fact(str(q.birth_year)).f("respectively").p(",").f("both").c(
            self.rng.choice(["wrote about", "lectured on", "worked on", "published on"])
        ).c(self.pick(TOPICS))
        b.f("and").c(self.rng.choice(["met", "corresponded", "quarrelled", "collaborated"])).f("in")
        b.n(str(self.past_year(max(p.birth_year, q.birth_year) + 20, max(p.birth_year, q.birth_year) + 40)))

    def enc_family(self, b):
        """A pronoun that refers back over a clause: gender agreement at a distance."""
        p = self.person()
        b.f("When").e(p.name).f("was").n(str(self.rng.randint(6, 17))).p(",").a(p.poss).f("family moved from")
        b.fact(p.birth_city.name).f("to").c(self.city().name).p(",").f("and").a(p.subj)
        b.f(self.rng.choice(["later", "soon", "never"])).f("returned to").fact(p.birth_city.country.name)
        self.person_pieces(b, p, self.extra(0, 1), skip=("p_birth", "p_country", "p_river"))

    # ---- encyclopedia: places, organisations, countries --------------------------------------------------
    def city_pieces(self, b, c, k: int):
        pieces = ["river", "population", "founded", "country"] + (["capital"] if c.country.capital is c else [])
        for name in self.rng.sample(pieces, min(k, len(pieces))):
            if self.coin(0.6):
                b.p(",").f("and")
            else:
                b.p(";")
            if name == "river":
                b.f("it lies on the").fact(c.river).f("River")
            elif name == "population":
                b.f("it has a population of").fact(_fmt(c.population))
            elif name == "founded":
                b.f("it was founded in").fact(str(c.founded))
            elif name == "country":
                b.f("it belongs to").fact(c.country.name)
            else:
                b.f("it is the capital of").fact(c.country.name)

    def enc_city(self, b):
        c = self.city()
        b.e(c.name).f("is").a(_article(c.kind)).fact(c.kind).f("in").fact(c.country.name)
        self.city_pieces(b, c, self.extra(1, 3))

    def enc_city_river(self, b):
        c = self.city()
        b.f("The").c(c.river).f("River flows through").e(c.name).p(",").a(_article(c.kind)).fact(c.kind)
        b.f("of").fact(_fmt(c.population)).f("people in").fact(c.country.name)
        if self.coin(0.4):
            b.f("that was founded in").fact(str(c.founded))

    def enc_city_founded(self, b):
        c = self.city()
        b.f("Founded in").n(str(c.founded)).p(",").e(c.name).f("grew into").a(_article(c.kind)).fact(c.kind)
        b.f("of").fact(_fmt(c.population)).f("on the").fact(c.river).f("River")
        self.city_pieces(b, c, self.extra(0, 1))

    def enc_org(self, b):
        o = self.org()
        f = o.founder
        kind = ORG_KINDS[o.kind][1]
        b.f("The").e(o.name).f("is").a(_article(kind)).fact(kind).f("based in").fact(o.city.name)
        if self.coin():
            b.p(",").f("founded in").fact(str(o.founded)).f("by the").fact(self.occ(f)).fact(f.name)
        else:
            b.f("that the").fact(self.occ(f)).fact(f.name).f("founded in").fact(str(o.founded))
        if self.coin(0.4):
            b.p(";").f("its founder was born in").fact(f.birth_city.country.name)  # three hops
        if self.coin(0.3):
            b.p(",").f("and it employs").fact(_fmt(o.staff)).fact(ORG_KINDS[o.kind][2])

    def enc_founder(self, b):
        o = self.org()
        f = o.founder
        b.e(f.name).p(",").f("the").fact(self.occ(f)).f("who founded the").e(o.name).f("in").fact(str(o.founded))
        b.p(",").f("was born in").fact(f.birth_city.name).f("in").fact(str(f.birth_year))
        self.person_pieces(b, f, self.extra(0, 1), skip=("p_birth", "p_job", "p_moved"))

    def enc_members(self, b):
        """Agreement over distance: a plural or singular subject, a long relative clause, then the verb."""
        o = self.org()
        members = ORG_KINDS[o.kind][2]
        if self.coin():
            b.f("The").c(members).f("of the").e(o.name).p(",").f("which was founded in").fact(str(o.founded))
            b.f("in the").fact(o.city.kind).f("of").fact(o.city.name).f("on the").fact(o.city.river)
            b.f("River").p(",").a("are").f("mostly").c(
                self.rng.choice(["young", "local", "foreign", "women", "volunteers", "students", "retired"])
            )
        else:
            b.f("The founder of the").e(o.name).p(",").f("which employs").fact(_fmt(o.staff)).fact(members)
            b.f("in").fact(o.city.name).p(",").a("was").f("the").fact(self.occ(o.founder)).fact(o.founder.name)

    def enc_country(self, b):
        c = self.rng.choice(self.w.countries)
        big = sum(1 for ct in self.w.cities if ct.country is c and ct.population >= 100_000)
        parts = ["cities", "capital", "language", "currency"]
        b.e(c.name)
        for i, name in enumerate(self.rng.sample(parts, self.rng.randint(2, 4))):
            if i and self.coin(0.6):
                b.p(",").f("and it")
            elif i:
                b.p(";").f("it")
            if name == "cities":
                b.f("has").fact(str(big)).a("city" if big == 1 else "cities").f("with more than 100,000 people")
            elif name == "capital":
                b.f("has its capital at").fact(c.capital.name).f("on the").fact(c.capital.river).f("River")
            elif name == "language":
                b.f("has").fact(c.adjective).f("as its official language")
            else:
                b.f("uses the").fact(c.currency).f("as its currency")

    # ---- news --------------------------------------------------------------------------------------------
    def n_plan(self, b):
        """What would happen to a project, with a date in the future (after 'by') or a month."""
        b.f("the").c(self.pick(PROJECTS)).f("in").e(self.city().name).f("would be").c(self.pick(BUILD_VERBS))
        if self.coin():
            b.f("by").n(str(self.rng.randint(PRESENT + 1, PRESENT + 8)))
        else:
            b.f("in").n(self.rng.choice(MONTHS))

    def news_said(self, b):
        p = self.person()
        r = self.rng.random()
        if r < 0.5:
            b.e(p.name).p(",").f("the").fact(self.occ(p)).f("at the").fact(p.employer.name).p(",")
            b.c(self.pick(REPORT_VERBS)).f("on").n(self.rng.choice(WEEKDAYS)).f("that")
            self.n_plan(b)
        elif r < 0.75:
            b.f("On").n(self.rng.choice(WEEKDAYS)).p(",").e(p.name).f("of the").fact(p.employer.name)
            b.c(self.pick(REPORT_VERBS)).f("that")
            self.n_plan(b)
        else:
            b.f("The").c(self.pick(PROJECTS)).f("in").e(self.city().name).f("will be").c(self.pick(BUILD_VERBS))
            b.f("by").n(str(self.rng.randint(PRESENT + 1, PRESENT + 8))).p(",").f("according to").e(p.name)
            b.p(",").f("who").fact("works" if p.alive else "worked").f("for the").fact(p.employer.name)
        if self.coin(0.4):
            b.p(",").f("and").a(p.subj).f("added that").n(str(self.rng.randint(2, 900)))
            unit, what = self.pick(UNITS)
            b.c(unit)
            if what:
                b.c(what)
            b.f("would be needed")
        self.person_pieces(b, p, self.extra(0, 3), skip=("p_job", "p_employer"))

    def news_quote(self, b):
        p = self.person()

        def quote():
            return b.f("We will").c(self.pick(QUOTE_VERBS)).f("the").c(self.pick(QUOTE_NOUNS)).c(self.rng.choice(WHEN))

        if self.coin(0.6):
            b.p('"')
            quote()
            b.p(",").p('"').f("said").e(p.name).p(",").f("who").fact("has worked" if p.alive else "worked")
            b.f("for the").fact(p.employer.name).f("in").fact(p.employer.city.name)
        else:
            b.e(p.name).p(",").a(_article(self.occ(p))).fact(self.occ(p)).f("born in").fact(p.birth_city.name)
            b.p(",").f("said").p(":").p('"')
            quote()
            b.p('"')
            return
        self.person_pieces(b, p, self.extra(0, 3), skip=("p_job",))

    def news_shares(self, b):
        o = self.org()
        cur = plural(o.city.country.currency)
        move = f"{self.rng.randint(1, 30)}.{self.rng.randint(0, 9)}"
        if self.coin():
            b.f("Shares in the").e(o.name).c(self.rng.choice(["rose", "fell"])).n(move).f("percent to")
            b.n(str(self.rng.randint(2, 400))).fact(cur).f("on").n(self.rng.choice(WEEKDAYS))
            b.p(",").f("after the").fact(ORG_KINDS[o.kind][1]).f("reported").c(self.pick(ADJ)).f("results")
        else:
            b.f("After").c(self.pick(ADJ)).f("results on").n(self.rng.choice(WEEKDAYS)).p(",").f("shares in the")
            b.e(o.name).p(",").f("which is based in").fact(o.city.name).p(",").c(self.rng.choice(["rose", "fell"]))
            b.n(move).f("percent to").n(str(self.rng.randint(2, 400))).fact(cur)

    def news_police(self, b):
        c = self.city()
        n = self.rng.choice([1, 1, 2, 3, 4, 5, 6, 8, 12, 15, 20, 31])
        hurt = lambda: b.n(str(n)).a("person was" if n == 1 else "people were").f("injured")  # noqa: E731
        if self.coin():
            b.f("Police in").e(c.name).p(",").a(_article(c.kind)).fact(c.kind).f("of").fact(_fmt(c.population))
            b.f("people in").fact(c.country.name).p(",").f("said")
            hurt()
            b.f("on").n(self.rng.choice(WEEKDAYS)).f("when a")
        else:
            hurt()
            b.f("on").n(self.rng.choice(WEEKDAYS)).f("in").e(c.name).p(",").f("on the").fact(c.river)
            b.f("River").p(",").f("when a")
        b.c(self.pick(VEHICLES)).c(self.pick(ACCIDENTS))
        if self.coin(0.4):
            b.f("near the").c(self.pick(PROJECTS))

    def news_gov(self, b):
        c = self.rng.choice(self.w.countries)
        b.f("The").e(c.adjective).f("government").c(self.pick(REPORT_VERBS)).f("on")
        b.n(f"{self.rng.randint(1, 28)} {self.rng.choice(MONTHS)}").f("that it would spend")
        b.n(str(self.rng.randint(2, 950))).n("million").fact(plural(c.currency)).f("on a new")
        b.c(self.pick(PROJECTS)).f("in").f(self.rng.choice(["the capital", "its capital"])).p(",")
        b.fact(c.capital.name)
        if self.coin(0.4):
            unit, what = self.pick(UNITS)
            b.p(",").f("and").n(_fmt(self.rng.randint(2, 90) * 100)).c(unit)
            if what:
                b.c(what)
            b.f("will be delivered by").n(str(self.rng.randint(PRESENT + 1, PRESENT + 5)))

    def news_event(self, b):
        c = self.city()
        p, q = self.person(), self.person()
        if p is q:
            return self.news_said(b)
        b.f("After").c(self.pick(EVENTS)).f("closed the").c(self.pick(PROJECTS)).f("in").e(c.name)
        b.f("on").n(self.rng.choice(WEEKDAYS)).p(",").e(p.name).f("of the").fact(p.employer.name).f("and")
        b.e(q.name).f("of the").fact(q.employer.name).a("were").f("asked to").c(self.pick(QUOTE_VERBS))
        b.f("the").c(self.pick(QUOTE_NOUNS))

    def news_appoint(self, b):
        p = self.person()
        o = p.employer
        b.f("The").e(o.name).f("has appointed").e(p.name).p(",").a(_article(self.occ(p))).fact(self.occ(p))
        b.f("from").fact(p.birth_city.name).p(",").f("as its new").c(self.pick(ROLES))
        if self.coin(0.5):
            b.p(";").a(p.subj).f("will start in").n(self.rng.choice(MONTHS))
        self.person_pieces(b, p, self.extra(0, 3), skip=("p_job", "p_employer", "p_birth"))

    def news_weather(self, b):
        c = self.city()
        ev = self.pick(EVENTS)
        b.c(ev[0].upper() + ev[1:]).f("closed the").c(self.pick(PROJECTS)).f("in").e(c.name).p(",")
        b.a(_article(c.kind)).fact(c.kind).f("on the").fact(c.river).f("River").p(",").f("on")
        b.n(self.rng.choice(WEEKDAYS)).p(",").f("and officials in").fact(c.country.name)
        b.c(self.pick(REPORT_VERBS)).f("it would reopen by").n(self.rng.choice(WEEKDAYS))

    def news_interview(self, b):
        p = self.person()
        g = self.rng.choice(self.papers)
        b.f("In an interview with the").e(g.name).p(",").e(p.name).f("said that").a(p.poss).f("work at the")
        b.fact(p.employer.name).f("had").c(self.rng.choice(["changed", "slowed", "grown", "suffered", "improved"]))
        b.f("since the").c(self.pick(PROJECTS)).f("opened in")
        b.fact(p.employer.city.name)
        self.person_pieces(b, p, self.extra(0, 2), skip=("p_job", "p_employer", "p_moved"))

    ENC = (
        "enc_bio",
        "enc_bio_fronted",
        "enc_known",
        "enc_among",
        "enc_move",
        "enc_pair",
        "enc_family",
        "enc_city",
        "enc_city_river",
        "enc_city_founded",
        "enc_org",
        "enc_founder",
        "enc_members",
        "enc_country",
    )
    ENC_W = (4, 2, 2, 1, 2, 1, 2, 2, 1, 1, 2, 1, 1, 1)
    NEWS = (
        "news_said",
        "news_quote",
        "news_shares",
        "news_police",
        "news_gov",
        "news_event",
        "news_appoint",
        "news_weather",
        "news_interview",
    )
    NEWS_W = (4, 3, 2, 2, 2, 1, 2, 1, 1)

    def sentence(self, domain: str) -> Sentence:
        names, weights = (self.ENC, self.ENC_W) if domain == "encyclopedia" else (self.NEWS, self.NEWS_W)
        b = Builder()
        getattr(self, self.rng.choices(names, weights=weights)[0])(b)
        b.p(".")
        return b.build(domain, newline=domain == "encyclopedia")


def plural_occ(p) -> str:
    return OCCUPATIONS[p.occupation][1]
