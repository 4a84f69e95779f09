"""The numbers behind every figure: saved to ``book/data/<figure>.json`` with the parameters and library
versions that produced them, and read back by the regression tests."""

from __future__ import annotations

import json
import os
import platform
import re
from pathlib import Path

import numpy as np

from jtc_utils.base.state import Memo
from jtc_utils.core.infra.paths import DATA_DIR, atomic_write_text


def environment() -> dict:
    import sklearn
    import torch
    import transformers

    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "scikit-learn": sklearn.__version__,
        "machine": platform.machine(),
    }


def plain(x):
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return plain(x.tolist())
    if isinstance(x, (np.floating, float)):
        return None if not np.isfinite(x) else float(x)
    if isinstance(x, np.integer):
        return int(x)
    return x


def output_dir() -> Path:
    """Where :func:`save` writes: ``book/data``, or ``$JTC_DATA_OUT`` (the tests set it, so that re-executing the
    notebooks under nbval never rewrites the committed numbers they are compared with)."""
    return Path(os.environ.get("JTC_DATA_OUT", DATA_DIR))


# figure -> the file this process last wrote for it; a chapter executed by the runner writes into a staging folder
# that becomes book/data only when every cell has passed, so its own later cells must read from there
SAVED = Memo()


_NUM = r"(?:-?[0-9][0-9.eE+-]*|null|NaN|-?Infinity|true|false)"
_FLAT_LIST = re.compile(r"\[\s+(" + _NUM + r"(?:,\s+" + _NUM + r")*)\s+\]")


def _compact(text: str) -> str:
    """JSON indented by one space, with every innermost list of numbers on one line (a resampled curve is 200 of
    them: one number per line made ``book/data`` ten times larger)."""
    return _FLAT_LIST.sub(lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text)


def save(figure: str, data: dict, params: dict) -> dict:
    """Write ``book/data/<figure>.json``: ``{"figure", "params", "environment", "data"}``; NaN becomes null."""
    record = {"figure": figure, "params": plain(params), "environment": environment(), "data": plain(data)}
    out = output_dir() / f"{figure}.json"
    atomic_write_text(out, _compact(json.dumps(record, indent=1)) + "\n")
    SAVED.put(figure, out)
    return record


def path(figure: str) -> Path:
    """The file holding ``figure``'s numbers as this process sees them: the one it saved itself into the current
    :func:`output_dir` (a chapter's own figures, before the runner moves them into ``book/data``), else
    ``book/data``'s. Without the first, a chapter's exercise checks and verdicts would read the numbers of its
    previous execution."""
    mine = SAVED.peek(figure)
    if mine is not None and mine.parent == output_dir() and mine.exists():
        return mine
    return DATA_DIR / f"{figure}.json"


def exists(figure: str) -> bool:
    return path(figure).exists()


def load(figure: str) -> dict:
    """The record of ``figure`` (see :func:`path` for which file)."""
    return json.loads(path(figure).read_text())


def committed(figure: str) -> dict:
    """The record of ``figure`` in the committed book (``book/data``), whatever this process has saved under the
    same id (a reader's custom book computes the paper's figures under their ids)."""
    return json.loads((DATA_DIR / f"{figure}.json").read_text())


def as_array(values) -> np.ndarray:
    """A JSON list (with nulls for NaN) back to a float array; an array (or any sequence of numbers) as floats."""
    if isinstance(values, np.ndarray):
        return values.astype(float)
    values = list(values)
    return (
        np.array([[np.nan if v is None else v for v in row] for row in values], dtype=float)
        if values and isinstance(values[0], list)
        else np.array([np.nan if v is None else v for v in values], dtype=float)
    )
