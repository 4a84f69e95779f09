"""Lens evaluations cached on disk: :func:`jtc_utils.lenses.evaluate.evaluate_many`, each lens's result keyed on
the model, the validation samples, the lens's own numbers and the layers (:func:`evaluated_many`).
"""

from __future__ import annotations

import hashlib

import numpy as np

from jtc_utils.core.analysis.hidden import samples_identity
from jtc_utils.core.infra import cache, costs

from . import evaluate
from .registry import Lens


def _lens_digest(ln: Lens) -> str:
    h = hashlib.sha256(ln.label.encode())
    for a in (ln.M, ln.c):
        if a is not None:
            h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    return h.hexdigest()


def _eval_key(exp, ln: Lens, layers, n_val: int | None = None) -> dict:
    first = {} if n_val is None else {"n_val": int(n_val)}  # the first n_val validation samples
    return {
        "what": "lens-eval",
        "version": 4,
        "model": exp.adapter.identity,
        "val": samples_identity(exp.val),
        "lens": _lens_digest(ln),
        "layers": None if layers is None else list(layers),
        "ks": list(evaluate.KS),
        **first,
    }


def _flat(r: dict) -> dict:
    flat = {k: v for k, v in r.items() if k not in ("precision", "label", "name")}
    flat.update({f"precision/{k}": v for k, v in r["precision"].items()})
    return flat


def _unflat(flat: dict, ln: Lens) -> dict:
    out = {k: v for k, v in flat.items() if not k.startswith("precision/")}
    out["precision"] = {int(k.split("/")[1]): v for k, v in flat.items() if k.startswith("precision/")}
    out.update(label=ln.label, name=ln.name, params=int(out["params"]), n_layers=int(out["n_layers"]))
    return out


def evaluated_many(exp, lenses, layers=None, n_val: int | None = None) -> list[dict]:
    """:func:`jtc_utils.lenses.evaluate.evaluate_many`, each lens's result cached on disk (keyed on the model, the
    validation samples, the lens's own numbers and the layers); the lenses not in the cache are evaluated together.
    ``n_val``: on the first ``n_val`` validation samples only."""
    paths = [cache.path_for("lens_eval", _eval_key(exp, ln, layers, n_val)) for ln in lenses]
    hits = [cache.load(p) for p in paths]
    todo = [i for i, h in enumerate(hits) if h is None]
    if todo:
        with costs.step("lens_eval"):
            done = evaluate.evaluate_many(exp, [lenses[i] for i in todo], layers, n_val=n_val)
        for i, r in zip(todo, done):
            hits[i] = {k: np.asarray(v) for k, v in _flat(r).items()}
            cache.save(paths[i], hits[i])
    return [_unflat(h, ln) for h, ln in zip(hits, lenses)]


def evaluated(exp, ln: Lens, layers=None) -> dict:
    """:func:`jtc_utils.lenses.evaluate.evaluate`, cached on disk."""
    return evaluated_many(exp, [ln], layers)[0]
