"""The committed results of the chapter's training runs, ``zoo/secretly-linear/`` (written by :mod:`.train`): where
they live, their card, and loaders that check every file against the zoo's checksums before use."""

from __future__ import annotations

import json
from functools import lru_cache

import numpy as np

from jtc_utils.core.models import catalogue, models
from jtc_utils.core.infra.paths import ZOO_DIR, file_fingerprint

BASE = "tiny-gpt2"
OUT_DIR = ZOO_DIR / "secretly-linear"
CARD = OUT_DIR / "card.json"
FIX = "restore it with `git checkout -- zoo/secretly-linear` or retrain with `make zoo-extras`"


def card() -> dict:
    """The card: every run's settings, times and records (an empty one before any run)."""
    if not CARD.exists():
        return {"base": BASE, "pretrain": {}, "snapshots": [], "finetune": {}, "distil": {}}
    return {"distil": {}, **json.loads(CARD.read_text())}


def committed_card() -> dict:
    if not CARD.exists():
        raise FileNotFoundError(f"{CARD} is missing: {FIX}")
    return card()


def checked_path(file: str):
    """The path of a stored file, after checking it against the zoo's manifest; returns (path, sha256)."""

    path = OUT_DIR / file
    expected = catalogue.manifest(OUT_DIR.name).get(file)
    if not path.exists() or expected is None:
        raise FileNotFoundError(f"{path} is missing or not in the zoo's manifest: {FIX}")
    digest = file_fingerprint(path)
    if digest != expected:
        raise ValueError(f"{path} has changed since it was trained (checksum differs): {FIX}")
    return path, digest


@lru_cache(maxsize=1)
def base():
    """``(config, tokenizer)`` of the zoo model every run starts from, loaded (and checked) once."""

    model, tok = models.load(BASE)
    return model.config, tok


def variant(file: str):
    """A stored pretraining run or snapshot (``pretrain/...``, ``trajectory/...``) as an Adapter keyed on its
    weights."""
    from safetensors.torch import load_file
    from transformers import GPT2LMHeadModel

    path, digest = checked_path(file)
    config, tok = base()
    model = GPT2LMHeadModel(config)
    state = {k: v.float() for k, v in load_file(path).items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or [k for k in missing if k != "lm_head.weight"]:
        raise ValueError(
            f"{path} is not a {BASE} checkpoint (missing {missing[:3]}, unexpected {unexpected[:3]}): {FIX}"
        )
    model.tie_weights()
    model.eval()
    ad = models.Adapter(model=model, tokenizer=tok, name=f"{OUT_DIR.name}/{file}")
    ad.__dict__["identity"] = variant_identity(digest)
    return ad


def variant_identity(digest: str) -> str:
    """What cached results of a stored run are keyed on: its weights and the zoo model it was trained from. The
    weights alone are not enough: the step-0 snapshot is the seeded initialisation, byte for byte the same in every
    world, while its tokenizer and the text it is scored on change with the world (a new world retrains the base
    model, whose committed files include its tokenizer)."""

    return f"sl-variant:{digest}:base={catalogue.manifest_digest(BASE)}"


def distil_file(strategy: str, k: int) -> str:
    return f"distil/{strategy.replace(' ', '-')}-k{k}.safetensors"


def distilled(strategy: str, k: int) -> dict:
    """{block: (M, c)}: the distilled replacement maps stored for ``strategy`` and ``k``."""
    from safetensors.numpy import load_file

    path, _ = checked_path(distil_file(strategy, k))
    t = load_file(path)
    blocks = sorted(int(n[1:]) for n in t if n.startswith("M"))
    return {b: (t[f"M{b}"].astype(np.float64), t[f"c{b}"].astype(np.float64)) for b in blocks}
