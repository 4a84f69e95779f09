"""The exercises' checks, marked in each paper package's ``exercises`` module: one function per exercise whose answer is
a number or
a property. A check reads the numbers behind the figures it names and returns None when the answer passes, else a
hint; :func:`jtc_utils.book.display.exercises.check` runs it for a notebook and prints the verdict.

When a class is graded, the numbers also hold :data:`SOLUTION`: the book's own answer, computed by the book's
solution in the grader's reference run. A check whose answer the figures alone cannot pin down (a refit, a
difference that is zero when nothing is computed, a value read from the zoo) compares with it there.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np


class Checks(dict):
    """One paper's exercise checks (label -> (figures the check reads, check)), written with its :meth:`exercise`
    decorator in the paper's ``exercises`` module; a check returns None when the answer passes, else a hint. The
    paper's ``PAPER`` declares them, and the registry's ``exercise_checks`` holds every paper's."""

    def exercise(self, label: str, *figs: str):
        """Decorate the check of exercise ``label``, reading the numbers of ``figs``."""

        def add(fn):
            if label in self:
                raise ValueError(f"exercise {label!r} has two checks")
            self[label] = (tuple(figs), fn)
            return fn

        return add


# the key of the book's own answer in a check's numbers (given by the grader's reference run, absent in a notebook)
SOLUTION = "solution"


def expected(d: dict, compute: Callable[[], Any]) -> Any:
    """The answer a check compares with: the book's own (``d[SOLUTION]``) when the grader gave it, computed before
    any submission ran; in a reader's notebook, ``compute()`` now."""
    return d[SOLUTION] if SOLUTION in d else compute()


def close(answer, expected, tol: float, what: str) -> str | None:
    """None where ``answer`` is within ``tol`` of ``expected``, else a hint naming ``what``."""
    a = float(answer)
    if not np.isfinite(a) or abs(a - expected) > tol:
        return f"{what} should be within {tol:g} of the figure's number; got {a:.6g}"
    return None


def numbers_of(answer, n: int) -> tuple[float, ...]:
    """``answer`` as ``n`` finite numbers (a tuple or list of that length); raises ValueError otherwise."""
    if isinstance(answer, (str, bytes, dict)) or not hasattr(answer, "__len__") or len(answer) != n:
        raise ValueError(f"give {n} numbers as a tuple")
    out = tuple(float(v) for v in answer)
    if not all(np.isfinite(out)):
        raise ValueError("every number should be finite")
    return out


def a_set(answer) -> set:
    """``answer`` as a set of ids (a set, list or tuple, never a string); raises ValueError otherwise."""
    if isinstance(answer, (str, bytes, dict)) or not hasattr(answer, "__iter__"):
        raise ValueError("give a set of ids, such as {'C1a', 'C2'}")
    return set(answer)
