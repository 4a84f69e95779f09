"""Where experiment sentences come from, per profile: ``tiny`` (default, offline), the generated corpus, domains
``encyclopedia`` and ``news`` (:mod:`jtc_utils.embedded.corpus`); ``real`` (offline), ``wiki`` and ``bbc``
(:mod:`jtc_utils.core.data.real_text`); ``custom``, a reader's ``text`` and ``news``
(:mod:`jtc_utils.core.data.user_text`); ``paper``, ``wikipedia`` (paragraph-final sentences of the
``wikimedia/wikipedia`` dump, sampled as the authors' script does: spec 1.1) and ``leipzig`` (``eng_news_2020_10K``,
shuffled with a fixed seed and split 9,000/1,000: spec 1.2), which need internet on first use and are cached under
``.cache/paper-data``.
"""

from __future__ import annotations

import json
import random
import tarfile
import urllib.request
from dataclasses import dataclass

from jtc_utils.embedded import corpus

from jtc_utils.core.data import profiles, real_text, user_text
from jtc_utils.core.infra.paths import CACHE_DIR, atomic_write_text

PAPER_SIZES = {"wikipedia": {"train": 9000, "validation": 3000}, "leipzig": {"train": 9000, "validation": 1000}}
LEIPZIG_URL = "https://downloads.wortschatz-leipzig.de/corpora/eng_news_2020_10K.tar.gz"
WIKIPEDIA = ("wikimedia/wikipedia", "20231101.en")


@dataclass(frozen=True)
class TextSentence:
    """A sentence of real text (no word labels)."""

    text: str


class DataUnavailableError(RuntimeError):
    pass


def sentences(profile: profiles.Profile | str, domain: str, split: str, n: int | None = None, seed: int = 0):
    """The sentences of ``domain`` (one of the profile's two domains) in ``split``; ``profile``: a
    :class:`~jtc_utils.core.data.profiles.Profile` or its name."""
    p = profiles.get(profile)
    if domain not in p.domains:
        raise ValueError(f"unknown domain {domain!r} for profile {p.name!r}; choose one of {', '.join(p.domains)}")
    if p.name == "tiny":
        return corpus.pool(domain, split, n=n, seed=seed)
    if p.name == "custom":
        path = dict(p.texts).get(domain)
        if path is None:
            raise ValueError(f"the custom profile was given no {domain!r} text (the second domain: pass --text-news)")
        n_train, n_val = p.sizes
        data = user_text.prepared(path, n_train, n_val, seed)
        pool = data["train"] + data["validation"]
        return [
            TextSentence(t) for t in corpus.take_split(pool, {"train": n_train, "validation": n_val}, domain, split, n)
        ]
    if p.name == "real":
        return [TextSentence(t) for t in real_text.sentences(domain, split, n=n, seed=seed)]
    pool = wikipedia_pool(seed) if domain == "wikipedia" else leipzig_pool(seed)
    return [TextSentence(t) for t in corpus.take_split(pool, PAPER_SIZES[domain], domain, split, n)]


def _cached_list(name: str, make) -> list[str]:
    path = CACHE_DIR / "paper-data" / f"{name}.json"
    if path.exists():
        try:
            return json.loads(path.read_text())
        except ValueError:
            path.unlink()  # damaged: rebuild
    data = make()
    atomic_write_text(path, json.dumps(data))
    return data


def leipzig_pool(seed: int = 0) -> list[str]:
    """The 10,000 Leipzig news sentences, ids stripped, shuffled with ``seed`` (first 9,000 train, last 1,000
    validation)."""

    def make():
        tar_path = CACHE_DIR / "paper-data" / "eng_news_2020_10K.tar.gz"
        if not tar_path.exists():
            tar_path.parent.mkdir(parents=True, exist_ok=True)
            try:
                with urllib.request.urlopen(LEIPZIG_URL, timeout=20) as r:
                    data = r.read()
            except OSError as e:
                raise DataUnavailableError(
                    f"could not download the Leipzig corpus from {LEIPZIG_URL} ({e}). The paper profile needs "
                    f"internet on first use; or place the file at {tar_path} by hand. The default 'tiny' "
                    f"profile works offline."
                ) from None
            tmp = tar_path.with_suffix(".part")
            tmp.write_bytes(data)
            tmp.rename(tar_path)
        with tarfile.open(tar_path) as tf:
            member = next(m for m in tf.getmembers() if m.name.endswith("-sentences.txt"))
            lines = tf.extractfile(member).read().decode("utf-8").splitlines()
        texts = [ln.split("\t", 1)[1] for ln in lines if "\t" in ln]
        random.Random(seed).shuffle(texts)
        return texts

    return _cached_list(f"leipzig-{seed}", make)


def wikipedia_pool(seed: int = 0, total: int = 12_000) -> list[str]:
    """Paragraph-final Wikipedia sentences, drawn as the authors' script does (spec 1.1), seeded."""

    def make():
        import numpy as np

        try:
            import spacy
            from datasets import load_dataset
        except ImportError as e:
            raise DataUnavailableError(
                f"the paper profile needs spaCy and datasets ({e}); install them with "
                f"`pip install -r requirements-paper.txt`"
            ) from None
        try:
            nlp = spacy.load("en_core_web_sm")
        except OSError:
            raise DataUnavailableError(
                "spaCy model en_core_web_sm is missing: `python -m spacy download en_core_web_sm`"
            ) from None
        nlp.max_length = 10_000_000
        try:
            ds = load_dataset(*WIKIPEDIA, split="train")
        except Exception as e:  # noqa: BLE001
            raise DataUnavailableError(
                f"could not load {WIKIPEDIA} from the Hugging Face hub ({e}); the paper "
                f"profile needs internet on first use. The 'tiny' profile works "
                f"offline."
            ) from None
        rng = np.random.default_rng(seed)
        used, out = set(), []
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc="wikipedia sentences")
        while len(out) < total:
            doc = int(rng.integers(0, len(ds)))
            if doc in used:
                continue
            sents = [str(s) for s in nlp(ds[doc]["text"]).sents]
            if not sents:
                continue
            for _ in range(10):
                s = sents[int(rng.integers(0, len(sents)))]
                if s.endswith("\n"):
                    out.append(s)
                    used.add(doc)
                    bar.update(1)
                    break
        bar.close()
        return out

    return _cached_list(f"wikipedia-{seed}-{total}", make)
