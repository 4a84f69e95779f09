"""The exercises' checks, registered by each paper package: one function per exercise whose answer is a number or
a property. A check reads the numbers behind the figures it names and returns None when the answer passes, else a
hint; :func:`jtc_utils.book.exercises.check` runs it for a notebook and prints the verdict.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

# label -> (figures the check reads, check); a check returns None when the answer passes, else a hint
CHECKS: dict[str, tuple[tuple[str, ...], Callable[[Any, dict], str | None]]] = {}


def exercise(label: str, *figs: str):
    """Register the check of exercise ``label``, reading the numbers of ``figs``."""

    def register(fn):
        if label in CHECKS:
            raise ValueError(f"exercise {label!r} registered twice")
        CHECKS[label] = (figs, fn)
        return fn

    return register


def close(answer, expected, tol: float, what: str) -> str | None:
    """None where ``answer`` is within ``tol`` of ``expected``, else a hint naming ``what``."""
    a = float(answer)
    if not np.isfinite(a) or abs(a - expected) > tol:
        return f"{what} should be within {tol:g} of the figure's number; got {a:.6g}"
    return None
