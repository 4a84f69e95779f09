"""The generated world behind the embedded corpus: countries, cities, rivers, people and organisations with facts
that hold together (founders born 25-60 years before their organisations, nothing founded after :data:`PRESENT`,
country adjectives that follow real patterns: Kelandia -> Kelandian, Tornland -> Tornish).

Everything is drawn from one ``random.Random(seed)``, iterating only over lists (never over sets or dict views of
strings, whose order depends on hash randomisation), so the same seed gives the same world on every machine and
Python 3 release. Names are pronounceable pseudo-words, so that no real-world knowledge helps a model: what a model
knows about ``Talven Morisk`` it learned from this corpus. The first world is in the repository's history (its
last commit is named in ``hardness_v1.json``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from jtc_utils.base import validate

MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

# (singular, plural) occupations
OCCUPATIONS = [
    ("engineer", "engineers"),
    ("painter", "painters"),
    ("architect", "architects"),
    ("physician", "physicians"),
    ("composer", "composers"),
    ("novelist", "novelists"),
    ("chemist", "chemists"),
    ("historian", "historians"),
    ("journalist", "journalists"),
    ("lawyer", "lawyers"),
    ("farmer", "farmers"),
    ("sculptor", "sculptors"),
    ("botanist", "botanists"),
    ("economist", "economists"),
    ("pilot", "pilots"),
    ("surgeon", "surgeons"),
    ("teacher", "teachers"),
    ("astronomer", "astronomers"),
    ("photographer", "photographers"),
    ("diplomat", "diplomats"),
    ("banker", "bankers"),
    ("poet", "poets"),
    ("geologist", "geologists"),
    ("linguist", "linguists"),
    ("mathematician", "mathematicians"),
    ("philosopher", "philosophers"),
    ("violinist", "violinists"),
    ("pianist", "pianists"),
    ("actor", "actors"),
    ("singer", "singers"),
    ("cyclist", "cyclists"),
    ("footballer", "footballers"),
    ("rower", "rowers"),
    ("judge", "judges"),
    ("merchant", "merchants"),
    ("carpenter", "carpenters"),
    ("nurse", "nurses"),
    ("librarian", "librarians"),
    ("biologist", "biologists"),
    ("physicist", "physicists"),
]

# organisation kinds: (template, descriptive noun phrase, plural member noun)
ORG_KINDS = [
    ("University of {city}", "public university", "professors"),
    ("{name} Institute", "research institute", "researchers"),
    ("{name} Bank", "commercial bank", "employees"),
    ("{city} Railway Company", "railway company", "employees"),
    ("{city} Football Club", "football club", "players"),
    ("{city} Symphony Orchestra", "orchestra", "musicians"),
    ("{name} Gazette", "daily newspaper", "reporters"),
    ("{name} Party", "political party", "members"),
    ("{city} Museum of Art", "art museum", "curators"),
    ("{name} Shipping Company", "shipping company", "employees"),
    ("{name} Mining Company", "mining company", "workers"),
    ("{city} Hospital", "hospital", "doctors"),
]

_ONSETS = [
    "b",
    "br",
    "d",
    "dr",
    "f",
    "g",
    "gr",
    "h",
    "k",
    "kr",
    "l",
    "m",
    "n",
    "p",
    "pr",
    "r",
    "s",
    "st",
    "t",
    "tr",
    "th",
    "v",
    "z",
    "c",
    "j",
    "w",
    "sh",
    "ch",
    "q",
    "y",
]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ei", "ou", "ae", "ia", "y"]
_CODAS = ["", "", "", "n", "r", "l", "s", "th", "m", "k", "nd", "rt", "x", "sk", "lv", "rn"]


class NameMaker:
    """Draws unique capitalised pseudo-words; a name is never reused across categories."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.used: set[str] = set()

    def word(self, min_syl: int = 2, max_syl: int = 3, ending: str = "") -> str:
        rng = self.rng
        for _ in range(1000):
            n = rng.randint(min_syl, max_syl)
            parts = [rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(n)]
            w = ("".join(parts) + ending).capitalize()
            if 4 <= len(w) <= 12 and w not in self.used:
                self.used.add(w)
                return w
        raise RuntimeError("name space exhausted; lower the number of entities")


@dataclass
class Country:
    name: str
    adjective: str  # also the language name
    currency: str  # plural form used after numbers ("4 million krels")
    capital: "City | None" = None


@dataclass
class City:
    name: str
    country: Country
    river: str
    population: int
    founded: int

    @property
    def kind(self) -> str:
        return "city" if self.population >= 100_000 else "town"


@dataclass
class Person:
    first: str
    last: str
    female: bool
    birth_day: int
    birth_month: str
    birth_year: int
    birth_city: City
    occupation: int  # index into OCCUPATIONS
    employer: "Org"
    alive: bool

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def subj(self) -> str:
        return "she" if self.female else "he"

    @property
    def poss(self) -> str:
        return "her" if self.female else "his"


@dataclass
class Org:
    name: str
    kind: int  # index into ORG_KINDS
    city: City
    founded: int
    staff: int
    founder: "Person | None" = None
    members: list = field(default_factory=list)


@dataclass
class World:
    countries: list[Country]
    cities: list[City]
    rivers: list[str]
    people: list[Person]
    orgs: list[Org]
    # popularity weights (Zipf-like) so that frequent entities can be learned and rare ones cannot
    city_w: list[float]
    person_w: list[float]
    org_w: list[float]


PRESENT = 2024  # the corpus's "now": past events are dated up to this year, plans after it
# country name endings and the adjective each one takes (also the language's name)
COUNTRY_FORMS = (("ia", "ian"), ("a", "an"), ("land", "ish"), ("stan", "stani"), ("", "ese"))
_CONSONANTS = ("n", "r", "l", "s", "t", "v", "d", "m")


def _consonant_stem(names: NameMaker, rng: random.Random) -> str:
    """A fresh name stem ending in a consonant (so that a suffix never meets a vowel)."""
    while True:
        stem = names.word(2, 2)
        if stem[-1] in "aeiouy":
            stem += rng.choice(_CONSONANTS)
        if all(stem + end not in names.used for end, _ in COUNTRY_FORMS):
            return stem


def plural(word: str) -> str:
    """The plural of a generated currency name: -es after s, x, z, sh, ch; else -s."""
    return word + ("es" if word.endswith(("s", "x", "z", "sh", "ch")) else "s")


def build_world(
    seed: int = 0,
    n_countries: int = 24,
    n_cities: int = 600,
    n_rivers: int = 140,
    n_people: int = 3000,
    n_orgs: int = 320,
) -> World:
    """Build the world of corpus v2. Same seed, same world, on every machine."""
    validate.seed(seed)
    rng = random.Random(f"world-v2/{seed}")
    names = NameMaker(rng)

    countries = []
    for i in range(n_countries):
        stem = _consonant_stem(names, rng)
        end, adj_end = COUNTRY_FORMS[i % len(COUNTRY_FORMS)]
        name, adj = stem + end, stem + adj_end
        names.used.update({stem, name, adj})
        countries.append(Country(name=name, adjective=adj, currency=names.word(1, 1).lower()))

    rivers = [names.word(2, 3) for _ in range(n_rivers)]
    cities = []
    for _ in range(n_cities):
        pop = int(10 ** rng.uniform(3.3, 6.5)) // 100 * 100
        cities.append(
            City(
                name=names.word(2, 3),
                country=rng.choice(countries),
                river=rng.choice(rivers),
                population=pop,
                founded=rng.randint(900, 1850),
            )
        )
    for c in countries:  # the capital is the largest city of the country
        mine = [ct for ct in cities if ct.country is c]
        if not mine:  # every country has at least one city
            mine = [rng.choice(cities)]
            mine[0].country = c
        c.capital = max(mine, key=lambda ct: ct.population)

    firsts_f = [names.word(2, 2, "a") for _ in range(180)]
    firsts_m = [names.word(1, 2) for _ in range(240)]
    lasts = [names.word(2, 3) for _ in range(2000)]

    people, full_names = [], set()
    for _ in range(n_people):
        female = rng.random() < 0.5
        year = rng.randint(1850, 1998)
        while True:  # full names are unique, so a name always identifies one person and one set of facts
            first, last = rng.choice(firsts_f if female else firsts_m), rng.choice(lasts)
            if (first, last) not in full_names:
                full_names.add((first, last))
                break
        people.append(
            Person(
                first=first,
                last=last,
                female=female,
                birth_day=rng.randint(1, 28),
                birth_month=rng.choice(MONTHS),
                birth_year=year,
                birth_city=rng.choice(cities),
                occupation=rng.randrange(len(OCCUPATIONS)),
                employer=None,
                alive=year > 1940 and rng.random() < 0.8,
            )
        )

    orgs, org_names = [], set()
    founders = [p for p in people if p.birth_year + 25 <= PRESENT - 5]
    for _ in range(n_orgs):
        kind = rng.randrange(len(ORG_KINDS))
        while True:
            founder, city = rng.choice(founders), rng.choice(cities)
            lo, hi = max(founder.birth_year + 25, city.founded), min(founder.birth_year + 60, PRESENT - 5)
            name = ORG_KINDS[kind][0].format(city=city.name, name=rng.choice(lasts))
            if lo <= hi and name not in org_names:
                break
        org_names.add(name)
        orgs.append(
            Org(
                name=name,
                kind=kind,
                city=city,
                founded=rng.randint(lo, hi),
                founder=founder,
                staff=rng.choice([40, 60, 80, 120, 150, 200, 300, 450, 600, 900, 1200, 2500, 4000]),
            )
        )
    for p in people:  # an employer that existed when the person was 30 (or the oldest one)
        ok = [o for o in orgs if o.founded <= p.birth_year + 30]
        p.employer = rng.choice(ok) if ok else min(orgs, key=lambda o: o.founded)
        p.employer.members.append(p)

    zipf = lambda n: [1.0 / (i + 8.0) for i in range(n)]  # noqa: E731 - popularity: frequent and rare entities
    return World(
        countries=countries,
        cities=cities,
        rivers=rivers,
        people=people,
        orgs=orgs,
        city_w=zipf(len(cities)),
        person_w=zipf(len(people)),
        org_w=zipf(len(orgs)),
    )
