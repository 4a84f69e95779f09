"""The numbers behind every figure: saved to ``book/data/<figure>.json`` with the parameters and library
versions that produced them, and read back by the regression tests."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

import numpy as np

from .paths import DATA_DIR, atomic_write_text


def environment() -> dict:
    import sklearn
    import torch
    import transformers

    return {"python": platform.python_version(), "numpy": np.__version__, "torch": torch.__version__,
            "transformers": transformers.__version__, "scikit-learn": sklearn.__version__,
            "machine": platform.machine()}


def _plain(x):
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return _plain(x.tolist())
    if isinstance(x, (np.floating, float)):
        return None if not np.isfinite(x) else float(x)
    if isinstance(x, np.integer):
        return int(x)
    return x


def output_dir() -> Path:
    """Where :func:`save` writes: ``book/data``, or ``$JTC_DATA_OUT`` (the tests set it, so that re-executing the
    notebooks under nbval never rewrites the committed numbers they are compared with)."""
    return Path(os.environ.get("JTC_DATA_OUT", DATA_DIR))


def save(figure: str, data: dict, params: dict) -> dict:
    """Write ``book/data/<figure>.json``: ``{"figure", "params", "environment", "data"}``; NaN becomes null."""
    record = {"figure": figure, "params": _plain(params), "environment": environment(), "data": _plain(data)}
    atomic_write_text(output_dir() / f"{figure}.json", json.dumps(record, indent=1) + "\n")
    return record


def load(figure: str) -> dict:
    return json.loads((DATA_DIR / f"{figure}.json").read_text())


def as_array(values) -> np.ndarray:
    """A JSON list (with nulls for NaN) back to a float array; an array (or any sequence of numbers) as floats."""
    if isinstance(values, np.ndarray):
        return values.astype(float)
    values = list(values)
    return np.array([[np.nan if v is None else v for v in row] for row in values], dtype=float) \
        if values and isinstance(values[0], list) else np.array([np.nan if v is None else v for v in values],
                                                                dtype=float)
