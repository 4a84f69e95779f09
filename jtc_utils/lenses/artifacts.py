"""Trained lenses committed with the zoo (``zoo/lenses/<model>/<lens>.safetensors``): training the tuned lens and
the all-pairs low-rank shortcuts of the larger stand-ins takes minutes on two cores, so ``python -m
jtc_utils.lenses.train`` trains them once and the book loads them. Each file carries the key it was trained under
(model weights, train samples, hyper-parameters, recipe) in its metadata; a file whose key differs from the one asked
for is not used, so a retrained model or a new corpus never meets an old lens.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from jtc_utils.core.infra.cache import key_hash
from jtc_utils.core.infra.paths import ZOO_DIR, atomic_open

from . import lowrank, tuned

FOLDER = "lenses"
# arrays stored in half precision, by model, to keep the committed zoo within its budget (tests/training/test_zoo.py):
# the real model's tuned lens (``M``, ``c``: 30 maps of 576 x 576, 40 MB in float32; their entries lie within +-3, far
# inside float16's range; the low-rank lenses' losses and running variances do not fit it and stay float32). They are
# loaded as float32, so the lens computes in single precision from weights rounded to half; the real model's lens
# table is computed so.
HALF = {"smollm2-135m": ("M", "c")}


def path(model: str, label: str) -> Path:
    safe = label.replace("<-", "_from_").replace("+", "_plus_")
    return ZOO_DIR / FOLDER / model / f"{safe}.safetensors"


def lookup(model: str, label: str, key: dict) -> dict | None:
    """The stored arrays of ``label`` for ``model`` if a file exists and was trained under ``key``, else None."""
    from safetensors import safe_open

    f = path(model, label)
    if not f.is_file():
        return None
    with safe_open(str(f), framework="numpy") as s:
        meta = s.metadata() or {}
        if meta.get("key") != key_hash(key):
            return None
        out = {k: s.get_tensor(k).astype(np.float32) for k in s.keys()}
    out["card"] = json.loads(meta.get("card", "{}"))
    return out


def key_of(model: str, label: str) -> dict | None:
    """The key a stored lens was trained under (None if there is no file)."""
    from safetensors import safe_open

    f = path(model, label)
    if not f.is_file():
        return None
    with safe_open(str(f), framework="numpy") as s:
        return json.loads((s.metadata() or {}).get("key_json", "null"))


def store(model: str, label: str, key: dict, arrays: dict, card: dict) -> Path:
    """Write the arrays (float32; float16 for those :data:`HALF` names) with their key and card, atomically."""
    from safetensors.numpy import save

    f = path(model, label)
    half = HALF.get(model, ())
    tensors = {
        k: np.ascontiguousarray(np.asarray(v, dtype=np.float16 if k in half else np.float32))
        for k, v in arrays.items()
        if v is not None
    }
    meta = {
        "key": key_hash(key),
        "key_json": json.dumps(key, sort_keys=True, default=str),
        "card": json.dumps(card, sort_keys=True, default=str),
    }
    with atomic_open(f) as out:
        out.write(save(tensors, metadata=meta))
    return f


def convergence(out: dict) -> dict:
    """A trained lens's convergence for its card: whether it met its recipe's criterion and by how much (the
    low-rank lenses: the gap of every pair's train loss to its function class's optimum; the tuned lens: the last
    10% of its steps' improvement against the 1% it must reach)."""
    if "gap" in out:
        gap = np.asarray(out["gap"], dtype=float)
        return {
            "converged": bool(np.all(np.asarray(out["converged"]) > 0)),
            "pairs_converged": int(np.sum(np.asarray(out["converged"]) > 0)),
            "pairs": int(gap.size),
            "largest_gap": float(gap.max()),
            "criterion": f"train loss within {lowrank.CONVERGED['converge_gap']:.0%} of its function class's optimum",
        }
    if "improvement" in out:
        below = tuned.RECIPE["converged_below"]
        return {
            "converged": bool(float(np.asarray(out["improvement"]).reshape(-1)[0]) <= below),
            "criterion": f"the last 10% of the steps lower the train KL by at most {below:.0%}",
        }
    return {}


def unstage(model: str, staged: str, label: str) -> Path:
    """A staged lens (``staged``: its tagged label, trained under the convergence rule beside the book's) made the one
    the book reads: stored under ``label`` with its card named so (its key, and so its lookups, unchanged), replacing
    the capped lens there, and the staged file removed. For a model added to ``registry.BOOK_CONVERGED``."""
    from safetensors import safe_open

    src = path(model, staged)
    if not src.is_file():
        raise FileNotFoundError(
            f"no staged lens {staged!r} of {model} in {src.parent}: train it first with `python -m "
            f"jtc_utils.lenses.train --models {model} --lowrank-only --converged`"
        )
    with safe_open(str(src), framework="numpy") as s:
        meta = dict(s.metadata() or {})
        arrays = {k: s.get_tensor(k) for k in s.keys()}
    card = {**json.loads(meta.get("card", "{}")), "lens": label}
    meta["card"] = json.dumps(card, sort_keys=True, default=str)
    from safetensors.numpy import save

    f = path(model, label)
    with atomic_open(f) as out:
        out.write(save(arrays, metadata=meta))
    src.unlink()
    return f
