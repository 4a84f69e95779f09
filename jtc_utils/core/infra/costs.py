"""Where a page's time goes, as the build's cost model reads it: each figure a page computes (:func:`figure`, around
its registered computation) and, inside it, each heavy step computed rather than read from the cache
(:func:`step`, around :func:`jtc_utils.core.infra.cache.cached`'s computation), with its measured seconds and, where
the step states it, its arithmetic (multiply-adds by precision, counted from its shapes).

Nothing is recorded unless ``JTC_COSTS`` names a file (the runner sets it for each page it executes): each finished
figure is appended there as one JSON line, so that a page interrupted half-way keeps what it measured. The runner
reads the lines back and prints the table (:mod:`jtc_utils.book.build.costs`).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from jtc_utils.base.state import Setting

ENV = "JTC_COSTS"
FIGURE = Setting()  # the record of the figure being computed (None outside one)
STEP = Setting()  # the record of the step being computed inside it (None outside one)


def _target() -> Path | None:
    value = os.environ.get(ENV)
    return Path(value) if value else None


@contextlib.contextmanager
def figure(fig: str):
    """Measure the computation of figure ``fig``: its wall seconds, less those of figures it computes inside it
    (``seconds`` is its own share; nested figures are lines of their own), and the steps it computed."""
    target = _target()
    if target is None:
        yield
        return
    rec = {"figure": fig, "steps": [], "nested": 0.0, "f32": 0.0, "f64": 0.0}
    outer = FIGURE.value
    t = time.perf_counter()
    try:
        with FIGURE.within(rec), STEP.within(None):
            yield
    finally:
        wall = time.perf_counter() - t
        if outer is not None:
            outer["nested"] += wall
        line = {
            "figure": fig,
            "seconds": round(wall - rec["nested"], 3),
            "steps": rec["steps"],
            "f32": rec["f32"] + sum(st["f32"] for st in rec["steps"]),
            "f64": rec["f64"] + sum(st["f64"] for st in rec["steps"]),
        }
        with open(target, "a") as f:
            f.write(json.dumps(line, sort_keys=True) + "\n")


@contextlib.contextmanager
def step(kind: str):
    """Measure one heavy step of the figure being computed (a cache entry computed, of ``kind``); inside it,
    :func:`arithmetic` adds the multiply-adds the step does. A step inside a step is a row of its own, its seconds
    taken out of the outer one's, so that a figure's steps add up."""
    fig = FIGURE.value
    if fig is None or _target() is None:
        yield
        return
    rec = {"kind": kind, "seconds": 0.0, "f32": 0.0, "f64": 0.0, "nested": 0.0}
    outer = STEP.value
    t = time.perf_counter()
    try:
        with STEP.within(rec):
            yield
    finally:
        wall = time.perf_counter() - t
        if outer is not None:
            outer["nested"] += wall
        rec["seconds"] = round(wall - rec.pop("nested"), 3)
        fig["steps"].append(rec)


def arithmetic(f32: float = 0.0, f64: float = 0.0) -> None:
    """Add multiply-adds (counted from shapes, by precision) to the step being measured, or to the figure being
    computed outside any step (nothing outside a figure)."""
    into = STEP.value or FIGURE.value
    if into is not None:
        into["f32"] += float(f32)
        into["f64"] += float(f64)


def forward(adapter, batch: int, tokens: int) -> None:
    """Add the multiply-adds of one forward pass of ``batch`` sequences of ``tokens`` through ``adapter``'s blocks:
    per token, every linear layer's weights but the output matrix's (embeddings are looked up, not multiplied), and
    attention's QKᵀ and AV (2·T·d per layer)."""
    if (STEP.value or FIGURE.value) is None:
        return
    V = adapter.vocab_size
    weights = sum(
        m.weight.numel()
        for m in adapter.model.modules()
        if type(m).__name__ in ("Linear", "Conv1D") and V not in m.weight.shape  # not embeddings, not the output
    )
    arithmetic(f32=batch * tokens * (weights + 2 * adapter.n_layers * tokens * adapter.d))


def read(path: Path) -> list[dict]:
    """The figure lines a page wrote to ``path`` (none where it wrote nothing)."""
    if not Path(path).exists():
        return []
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
