"""Concept classes for every token of a real vocabulary: the real model's stand-in for Geva et al.'s annotators.

The rule, fixed before any value vector was read: a token is ``number`` or ``punct`` by its form, ``function``
when it is one of the :data:`FUNCTION_WORDS` most frequent word-start words of the training text, and every other
token with a letter (special tokens aside) is embedded by the project's sentence encoder (all-MiniLM-L6-v2, a model
trained on other
text) and clustered by k-means, one class per :data:`PER_CLASS` tokens. A token without a letter or that the
encoder reads as unknown has no class. :func:`validate` measures the classes on hand-checkable categories.
SmolLM2's classes are committed in ``zoo/concepts/`` (``python -m jtc_utils.core.data.token_concepts``).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import re
import time
from collections import Counter
from pathlib import Path

import numpy as np

from jtc_utils.core.models import catalogue, models, real_models
from jtc_utils.core.data import profiles, sources
from jtc_utils.core.infra.paths import ZOO_DIR, atomic_write_bytes, atomic_write_text, file_fingerprint
from jtc_utils.core.infra.progress import show_progress

FUNCTION_WORDS = 100  # the most frequent word-start tokens of the training text that are function words
PER_CLASS = 25  # tokens per embedded class, on average
ENCODER = "minilm-l6"  # the sentence encoder that embeds each token's text
MAX_PIECES = 16  # the encoder's word pieces read of one token's text
DIGITS = 4  # decimals kept of the unit-length embeddings before clustering
BATCH = 1024
CLUSTER_SEED = 0
FOLDER = ZOO_DIR / "concepts"
_NUMBER = re.compile(r"^\s*[0-9][0-9,.]*\s*$")
_PUNCT = re.compile(r"^\s*[^\w\s]+$")
_WORD = re.compile(r"^ [A-Za-z]+$")
_LETTER = re.compile(r"[^\W\d_]")

# hand-checkable categories (lower-case words; a token belongs when its stripped, lower-cased text is one of them)
HAND_CATEGORIES = {
    "months": (
        "january february march april may june july august september october november december jan feb "
        "mar apr jun jul aug sep sept oct nov dec"
    ).split(),
    "weekdays": "monday tuesday wednesday thursday friday saturday sunday mon tue wed thu fri sat sun".split(),
    "number words": (
        "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety "
        "hundred thousand million billion"
    ).split(),
    "nationalities": (
        "american british french german italian spanish chinese japanese russian indian canadian "
        "australian mexican brazilian dutch swedish polish greek turkish irish scottish korean "
        "egyptian danish norwegian finnish belgian swiss austrian portuguese"
    ).split(),
    "past-tense verbs": (
        "walked played worked lived died moved joined started finished called asked wanted used "
        "said went came took made gave found told became began wrote"
    ).split(),
    "colours": "red blue green yellow black white brown purple orange pink grey gray".split(),
}


def vocabulary_fingerprint(tokenizer) -> str:
    """SHA-256 of the tokenizer's vocabulary (token -> id), the key of a committed labelling."""
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda kv: (kv[1], kv[0]))
    return hashlib.sha256(json.dumps(vocab, ensure_ascii=False).encode()).hexdigest()


def _forms(tokenizer, ids) -> dict:
    return {int(t): tokenizer.decode([int(t)]) for t in ids}


def _word_counts(tokenizer, texts) -> Counter:
    counts = Counter()
    for ids in tokenizer(list(texts), add_special_tokens=False)["input_ids"]:
        counts.update(int(t) for t in ids)
    return counts


def _group(forms: list[str]) -> str:
    """Geva et al.'s kind of a class: ``names`` when most tokens start a capitalised word, ``syntactic`` when most
    continue a word (no leading space), else ``semantic``."""
    capital = sum(f.startswith(" ") and f[1:2].isupper() for f in forms)
    piece = sum(not f.startswith(" ") for f in forms)
    if 2 * capital > len(forms):
        return "names"
    if 2 * piece > len(forms):
        return "syntactic"
    return "semantic"


def embed(texts: list[str], progress: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(unit-length sentence-encoder embeddings of ``texts`` rounded to :data:`DIGITS` decimals, float64; a mask of
    the texts the encoder reads as more than unknown pieces). Mean of the last hidden states over the word pieces,
    the encoder's own pooling."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from tqdm.auto import tqdm

    folder = str(real_models.folder(ENCODER))
    tok, enc = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder).eval()
    b = tok(texts, padding=True, truncation=True, max_length=MAX_PIECES + 2, return_tensors="pt")
    ids, mask = b["input_ids"], b["attention_mask"]
    pieces = mask.bool() & (ids != tok.cls_token_id) & (ids != tok.sep_token_id)
    known = (pieces & (ids != tok.unk_token_id)).any(1).numpy()
    order = np.argsort(mask.sum(1).numpy(), kind="stable")  # batches of like length
    E = np.zeros((len(texts), enc.config.hidden_size))
    with torch.inference_mode():
        for s in tqdm(
            range(0, len(texts), BATCH),
            desc="embedding tokens",
            unit="batch",
            disable=not (show_progress() if progress is None else progress),
        ):
            idx = torch.as_tensor(order[s : s + BATCH])
            m = mask[idx]
            n = int(m.sum(1).max())
            h = enc(input_ids=ids[idx, :n], attention_mask=m[:, :n]).last_hidden_state.double()
            w = m[:, :n, None].double()
            E[idx.numpy()] = torch.nn.functional.normalize((h * w).sum(1) / w.sum(1), dim=1).numpy()
    return np.round(E, DIGITS), known


def concept_classes(tokenizer, texts, ids=None, progress: bool | None = None) -> dict:
    """The classes of the tokens ``ids`` of a vocabulary (default: every token) by the module's rule, the function
    words read from ``texts`` (training sentences): ``{"token_class": {token id: class}, "groups": {class: group},
    "examples": {class: its first five tokens}, "sizes": {class: tokens}, "counts": {...}}``; classes in order:
    function, number, punct, then class 1, 2, ... (numbered by their lowest token id)."""
    from sklearn.cluster import KMeans

    texts = [getattr(t, "text", t) for t in texts]
    if not texts:
        raise ValueError(
            "concept_classes needs training sentences to find the function words in, got none; pass "
            "the profile's training sentences"
        )
    every = sorted(int(t) for t in (range(len(tokenizer)) if ids is None else ids))
    ids = [t for t in every if t not in set(tokenizer.all_special_ids)]  # special tokens have no class
    forms = _forms(tokenizer, ids)
    counts = _word_counts(tokenizer, texts)
    token_class = {}
    for t in ids:
        if _NUMBER.match(forms[t]):
            token_class[t] = "number"
        elif _PUNCT.match(forms[t]):
            token_class[t] = "punct"
    words = sorted(
        (t for t in ids if t not in token_class and _WORD.match(forms[t]) and counts[t] > 0),
        key=lambda t: (-counts[t], t),
    )
    for t in words[:FUNCTION_WORDS]:
        token_class[t] = "function"
    rest = [t for t in ids if t not in token_class and _LETTER.search(forms[t])]
    E, known = embed([forms[t].strip() for t in rest], progress) if rest else (np.zeros((0, 1)), np.zeros(0, bool))
    rest = [t for t, k in zip(rest, known) if k]
    E = E[known]
    n_classes = len(rest) // PER_CLASS
    if n_classes >= 2:
        labels = KMeans(n_classes, n_init=1, random_state=CLUSTER_SEED).fit(E).labels_
        first = {}
        for t, c in zip(rest, labels):  # rest is in id order: a class is numbered by its lowest token id
            first.setdefault(int(c), len(first) + 1)
        for t, c in zip(rest, labels):
            token_class[t] = f"class {first[int(c)]}"
    return {
        "token_class": token_class,
        **describe(forms, token_class),
        "counts": {
            "sentences": len(texts),
            "vocabulary": len(every),
            "labelled": len(token_class),
            "embedded": len(rest),
            "classes": len(set(token_class.values())),
        },
    }


def describe(forms: dict, token_class: dict) -> dict:
    """``{"groups": {class: group}, "examples": {class: its first five tokens}, "sizes": {class: tokens}}`` of a
    labelling (``forms``: token id -> text), classes in order: function, number, punct, class 1, 2, ..."""
    members = {}
    for t in sorted(token_class):
        members.setdefault(token_class[t], []).append(forms[t])
    order = sorted(
        members,
        key=lambda c: (
            c.startswith("class "),
            int(c.split()[1]) if c.startswith("class ") else ("function", "number", "punct").index(c),
        ),
    )
    return {
        "groups": {c: _group(members[c]) if c.startswith("class ") else "syntactic" for c in order},
        "examples": {c: members[c][:5] for c in order},
        "sizes": {c: len(members[c]) for c in order},
    }


def validate(tokenizer, token_class: dict, categories: dict = HAND_CATEGORIES) -> list[dict]:
    """How the classes hold each hand-checkable category: its tokens in the vocabulary, the class holding most of
    them (ties to the lower class name), ``recall`` (the share of its tokens in that class) and
    ``precision`` (the share of that class's tokens in the category), with the class's first tokens."""
    forms = _forms(tokenizer, token_class)
    by_class = {}
    for t in sorted(token_class):
        by_class.setdefault(token_class[t], []).append(t)
    rows = []
    for name, words in categories.items():
        words = set(words)
        inside = [t for t in sorted(token_class) if forms[t].strip().lower() in words]
        held = Counter(token_class[t] for t in inside)
        if not held:
            rows.append({"category": name, "tokens": 0, "class": None, "recall": 0.0, "precision": 0.0, "examples": []})
            continue
        best = min(held, key=lambda c: (-held[c], sorted(by_class).index(c)))
        members = by_class[best]
        rows.append(
            {
                "category": name,
                "tokens": len(inside),
                "class": best,
                "recall": held[best] / len(inside),
                "precision": sum(forms[t].strip().lower() in words for t in members) / len(members),
                "examples": [forms[t] for t in members[:12]],
            }
        )
    return rows


NO_CLASS = np.iinfo(np.uint16).max  # a token without a class, in the stored array


def _files(model: str) -> tuple[Path, Path]:
    return FOLDER / model / "classes.npz", FOLDER / model / "card.json"


def _check(path: Path) -> None:
    rel = path.relative_to(FOLDER).as_posix()
    if catalogue.manifest("concepts").get(rel) != file_fingerprint(path):
        raise ValueError(
            f"{path} does not match its checksum in zoo/SHA256SUMS; restore it with `git checkout -- "
            f"zoo/concepts/{rel}` or make it again with `python -m jtc_utils.core.data.token_concepts`"
        )


def committed(model: str, tokenizer) -> dict | None:
    """The committed classes of ``model`` (the :func:`concept_classes` result), or None when none is committed or
    they were made for another vocabulary. A committed file that fails its checksum is an error."""
    path, card_path = _files(model)
    if not path.exists():
        return None
    for f in (path, card_path):
        _check(f)
    card = json.loads(card_path.read_text())
    if card["vocabulary"] != vocabulary_fingerprint(tokenizer):
        return None
    names = card["classes"]
    class_of = np.load(path)["class_of"]
    token_class = {t: names[c] for t, c in enumerate(class_of.tolist()) if c != NO_CLASS}
    return {
        "token_class": token_class,
        **describe(_forms(tokenizer, token_class), token_class),
        "counts": card["counts"],
    }


def save(model: str, tokenizer, classes: dict, card: dict) -> Path:
    """Write ``classes`` (a :func:`concept_classes` result) of ``model`` and its ``card`` to ``zoo/concepts/``, and
    the zoo's checksums."""
    names = list(classes["groups"])
    index = {n: i for i, n in enumerate(names)}
    class_of = np.full(len(tokenizer), NO_CLASS, dtype=np.uint16)
    for t, c in classes["token_class"].items():
        class_of[t] = index[c]
    path, card_path = _files(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    np.savez_compressed(buf, class_of=class_of)
    atomic_write_bytes(path, buf.getvalue())
    atomic_write_text(
        card_path,
        json.dumps(
            {**card, "vocabulary": vocabulary_fingerprint(tokenizer), "classes": names, "counts": classes["counts"]},
            indent=1,
            ensure_ascii=False,
        )
        + "\n",
    )
    catalogue.write_manifest()
    return path


def main(argv=None) -> None:
    """Make and commit the real model's classes (``zoo/concepts/<model>/``), with their card and checksums."""
    ap = argparse.ArgumentParser(prog="python -m jtc_utils.core.data.token_concepts", description=main.__doc__)
    ap.add_argument("--profile", default="real")
    args = ap.parse_args(argv)
    profile = profiles.get(args.profile)
    model = profile.role("gpt24")
    tok = models.adapter(model).tokenizer
    texts = sources.sentences(profile, profile.main_domain, "train", seed=0)
    start = time.time()
    c = concept_classes(tok, texts)
    seconds = time.time() - start
    path = save(
        model,
        tok,
        c,
        {
            "what": f"concept classes of every token of {model}'s vocabulary (jtc_utils.core.data.token_concepts)",
            "command": "python -m jtc_utils.core.data.token_concepts"
            + (f" --profile {args.profile}" if args.profile != "real" else ""),
            "profile": profile.name,
            "training_sentences": len(texts),
            "seconds": round(seconds),
            "settings": {
                k: globals()[k]
                for k in ("FUNCTION_WORDS", "PER_CLASS", "ENCODER", "MAX_PIECES", "DIGITS", "CLUSTER_SEED")
            },
            "validation": validate(tok, c["token_class"]),
        },
    )
    print(
        f"wrote {path} ({c['counts']['labelled']} of {c['counts']['vocabulary']} tokens in "
        f"{c['counts']['classes']} classes, {seconds:.0f} s)"
    )


if __name__ == "__main__":
    main()
