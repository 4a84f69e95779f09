"""The corpus's long word lists (topics, projects, vehicles, ...), drawn with weights 1/rank so that a few words are
common and most are rare (a Zipfian tail)."""

from __future__ import annotations

import random
from itertools import accumulate

_TOPIC_MODS = ["river", "medieval", "urban", "rural", "early", "folk", "coastal", "public", "railway", "crop",
               "ancient", "mountain", "labour", "local", "bird", "bridge", "tax", "child", "water", "naval", "stone",
               "solar", "market", "forest", "church", "desert", "island", "textile", "glass", "copper", "salt",
               "wool", "silk", "harbour", "village", "border", "winter", "tidal", "volcanic", "monastic", "postal",
               "colonial", "peasant", "guild", "canal", "mining", "dairy", "tobacco", "timber", "printing", "lunar"]
_TOPIC_NOUNS = ["ecology", "trade", "planning", "poverty", "music", "erosion", "health", "history", "diseases",
                "coins", "glaciers", "law", "dialects", "migration", "design", "reform", "nutrition", "supply",
                "carving", "energy", "prices", "management", "architecture", "songs", "festivals", "maps",
                "weaving", "pottery", "farming", "schools", "theatre", "medicine", "customs", "tools", "weather",
                "manuscripts", "roads", "markets", "shipbuilding", "fisheries", "households", "guilds", "courts"]
TOPICS = [f"{m} {n}" for n in _TOPIC_NOUNS for m in _TOPIC_MODS]
random.Random("topics").shuffle(TOPICS)  # the rank (and so the weight) of a topic is arbitrary
PROJECTS = ["bridge", "hospital", "school", "railway line", "power station", "harbour", "library", "stadium",
             "factory", "airport", "water plant", "museum", "market hall", "tunnel", "highway", "dam", "theatre",
             "prison", "university campus", "ferry terminal", "wind farm", "shopping centre", "sports hall",
             "concert hall", "fire station", "police station", "housing estate", "canal", "lighthouse", "reservoir",
             "ring road", "bus station", "tram line", "cable car", "swimming pool", "town hall", "courthouse",
             "observatory", "sewage works", "grain silo", "flood barrier", "footbridge", "aqueduct", "cathedral",
             "botanical garden", "zoo", "ice rink", "velodrome", "marina", "quarry", "brewery", "paper mill",
             "steelworks", "shipyard", "orphanage", "retirement home", "nursery", "archive", "printing works"]
BUILD_VERBS = ["built", "opened", "closed", "expanded", "repaired", "sold", "bought", "funded", "inspected",
                "rebuilt", "renovated", "replaced", "moved", "extended", "modernised", "demolished", "restored",
                "enlarged", "privatised", "reopened", "redesigned", "insured", "surveyed", "leased"]
ADJ = ["strong", "weak", "disappointing", "record", "mixed", "better than expected", "worse than expected",
        "solid", "modest", "surprising", "steady", "poor", "excellent", "uneven", "robust", "flat", "sluggish",
        "healthy", "lacklustre", "buoyant", "volatile", "resilient", "dismal", "encouraging", "patchy"]
VEHICLES = ["bus", "lorry", "train", "van", "tram", "car", "ferry", "truck", "minibus", "coach", "tractor",
             "fuel tanker", "school bus", "taxi", "motorcycle", "delivery van", "cement mixer", "horse cart"]
ACCIDENTS = ["crashed", "overturned", "caught fire", "left the road", "collided with a wall", "hit a bridge",
              "derailed", "skidded on ice", "rolled down an embankment", "struck a lamp post", "lost its brakes",
              "ran into a ditch", "jack-knifed", "came off the rails"]
WORKS = ["book", "study", "report", "essay", "survey", "thesis", "lecture", "article", "paper", "history",
          "monograph", "atlas", "dictionary", "memoir", "catalogue", "biography", "handbook", "treatise"]
QUOTE_VERBS = ["finish", "improve", "protect", "open", "complete", "support", "review", "defend", "change",
                "rescue", "simplify", "expand", "fund", "rebuild", "examine", "speed up", "reconsider"]
QUOTE_NOUNS = ["project", "plan", "service", "agreement", "programme", "station", "network", "budget",
                "contract", "proposal", "schedule", "reform", "scheme", "timetable", "strategy", "inquiry"]
REPORT_VERBS = ["said", "announced", "confirmed", "told reporters", "stated", "warned", "explained", "insisted",
                 "admitted", "claimed", "revealed", "noted"]
EVENTS = ["a strike", "heavy rain", "a fire", "a power cut", "flooding", "a storm", "a protest", "snow",
           "a landslide", "a gas leak", "fog", "a bomb scare", "high winds", "a burst water main", "a heatwave"]
WHEN = ["before the end of the year", "as soon as possible", "within two years", "next spring", "by the summer",
         "in the coming months", "this autumn", "without further delay", "step by step", "if the money comes"]
ROLES = ["director", "chairman", "treasurer", "spokesman", "chief executive", "head of research", "editor",
          "conductor", "coach", "president", "secretary", "archivist"]
UNITS = [("tonnes", "of grain"), ("kilometres", "of new track"), ("hectares", "of forest"), ("litres", "of fuel"),
          ("tonnes", "of steel"), ("kilometres", "of road"), ("homes", ""), ("jobs", ""), ("beds", ""),
          ("seats", ""), ("classrooms", ""), ("tonnes", "of coal"), ("kilometres", "of pipeline")]


def rank_weights(items) -> list[float]:
    """Cumulative weights 1/rank of a list's words, as ``random.choices`` takes them."""
    return list(accumulate(1.0 / (i + 1) for i in range(len(items))))


# each list (by identity) -> its cumulative weights
CUMULATIVE = {id(x): rank_weights(x) for x in (TOPICS, PROJECTS, BUILD_VERBS, ADJ, VEHICLES, ACCIDENTS, WORKS,
                                               QUOTE_VERBS, QUOTE_NOUNS, REPORT_VERBS, EVENTS, ROLES, UNITS)}
