"""Running the book's exercise checks: every paper's checks (marked in its ``exercises`` module, declared by
its ``PAPER``, read from the one registry) behind one :func:`check`.

An exercise's solution cell (tagged ``solution``; ``make student`` blanks it) leaves its result in ``answer``; the
cell after it calls ``check(label, answer)``, which prints ✓ or ✗ with a hint and returns whether the answer passes.
A check compares the answer with the numbers behind the chapter's figures: read from ``book/data`` by default, or
passed as ``data={fig: numbers}`` where the chapter just computed them (the real model's pages, whose test runs use
a subset of sentences). A blank answer (``None``, the student edition's starting point) never passes.
"""

from __future__ import annotations

from typing import Any

from jtc_utils.evidence import figdata
from jtc_utils.evidence.registry import get as registered


class Verdict:
    """What :func:`check` returns: true when the answer solves the exercise. It has already printed its verdict, so
    as the last line of a notebook cell it shows nothing more (no stray ``True``)."""

    __slots__ = ("ok",)

    def __init__(self, ok: bool):
        self.ok = bool(ok)

    def __bool__(self) -> bool:
        return self.ok

    def __eq__(self, other) -> bool:
        return self.ok == bool(other) if isinstance(other, (bool, Verdict)) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.ok)

    def __repr__(self) -> str:
        return f"Verdict({self.ok})"

    def _ipython_display_(self) -> None:
        pass  # printed by check() already


def check(label: str, answer: Any, data: dict | None = None) -> Verdict:
    """Print whether ``answer`` solves exercise ``label`` (with a hint when not); returns a :class:`Verdict`, true
    when it does."""
    checks = registered().exercise_checks
    if label not in checks:
        raise ValueError(f"no check for exercise {label!r}; exercises with checks: {', '.join(sorted(checks))}")
    figs, fn = checks[label]
    if answer is None or answer is Ellipsis:
        print(f"✗ {label}: no answer yet (set `answer` in the cell above)")
        return Verdict(False)
    numbers = dict(data or {})
    for f in figs:
        if f not in numbers:
            if not figdata.exists(f):
                raise ValueError(
                    f"exercise {label!r} needs the numbers of {f!r}: pass data={{{f!r}: ...}} with "
                    "what the page computed"
                )
            numbers[f] = figdata.load(f)["data"]
    try:
        problem = fn(answer, numbers)
    except (TypeError, ValueError, KeyError, IndexError, ArithmeticError, AttributeError) as e:
        problem = f"the answer does not have the expected form ({type(e).__name__}: {e})"
    print(f"✓ {label}: correct" if problem is None else f"✗ {label}: {problem}")
    return Verdict(problem is None)
