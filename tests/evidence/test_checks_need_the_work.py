"""Every exercise check needs the work: it fails on the starting cell (``answer = None``), on constants (0, −1e9,
−inf, NaN, empty collections, pairs of zeros) and on the values a student can copy from the page (the number the page
prints beside the asked one, the formula the exercise names). The checks read the book's numbers (``book/data``) and,
where the figures alone cannot pin the answer down, the book's own answer, which the grader's reference run passes as
:data:`~jtc_utils.evidence.exercises.SOLUTION`; here that answer is a stand-in value, and the check must pass it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jtc_utils.book.display import exercises
from jtc_utils.evidence import figdata
from jtc_utils.evidence.exercises import SOLUTION
from jtc_utils.evidence.registry import get as registered

# (1 is no such constant: it is the right answer of ex-sec4-half on the book's numbers)
CONSTANTS = (None, ..., 0, 0.0, -1e9, -math.inf, math.inf, math.nan, "", (), [], {}, set(), (0, 0), (0.0, 0.0), "0")
# numbers a page passes to its check and that book/data does not hold
PASSED = {"check": {"mat": [0.2, 0.5, 0.9, 1.0], "id": [0.1, 0.6, 0.4, 1.0]}}


def _exits() -> dict:
    """The mean exit layer of ``mat`` at each λ of the figure (section 5's Figure 1)."""
    e = figdata.load("fig8")["data"]["early"]["mat"]
    return dict(zip(e["lambdas"], e["x"]))


def _real_attn_ffn():
    f = figdata.load("real_fig10")["data"]
    a, b = (figdata.as_array(f["curves"][m]["p@1"])[: f["n_layers"]] for m in ("mat_attn", "mat_ffn"))
    done = np.isfinite(a)
    return a[done], b[done]


def _r2_24() -> float:
    return float(figdata.as_array(figdata.load("fig23")["data"]["r2_mat"])[2, 4])


# label -> (the book's answer as the reference run would pass it, answers copied from the page that must fail)
SOLVED = {
    "ex-sec3-intercept": (
        lambda: _r2_24() + 0.0012,
        lambda: [_r2_24(), _r2_24() + 0.001, _r2_24() - 0.049, _r2_24() + 0.0012 + 2e-4],
    ),
    "ex-sec6-single": (
        lambda: (0.0, 41.5),
        lambda: [(0.0, 1.0), (0.0, 0.0), (-1e9, 41.5), (-math.inf, 41.5), (0.0, -41.5), 0.0],
    ),
    "ex-lenses-rrr": (lambda: (3.75e6, 3.75e6), lambda: [(1.0, 1.0), (3.76e6, 3.76e6), (0.0, 3.75e6)]),
    "sl-ex-identity": (lambda: (0.7291760877, 0.7291760877), lambda: [(0.5, 0.5), (1.0, 1.0), (0.0, 0.7291760877)]),
    "ex-world-best": (lambda: "tiny-gpt2-medium", lambda: ["tiny-gpt2-small", "gpt2"]),
    "ex-world-length": (lambda: 11.25, lambda: [11.0, 12.0]),
    "ex-claims-almost": (lambda: 0.875, lambda: [0.9, 1.0]),
    "ex-claims-magnitudes": (lambda: 7, lambda: [6, 8]),
    # λ = 0.75 lies between two of the figure's points: the book's answer is between them, and no point passes
    "ex-sec5-one-lambda": (lambda: (_exits()[0.7] + _exits()[0.8]) / 2, lambda: list(_exits().values())),
}
# answers the page shows or names outright, for checks judged on the figures alone
COPIED = {
    # the share of start layers where mat_attn is above (the question the page asked before), and its guess 1
    "ex-sec6-real": lambda: [float((_real_attn_ffn()[0] > _real_attn_ffn()[1]).mean()), 1.0],
    "sl-ex-null": lambda: [{n: 48 / (n - 1) for n in (50, 100, 1000, 10000)}, {n: 0.0 for n in (50, 100, 1000, 10000)}],
}


def numbers(label: str, solution=None) -> dict:
    figs, _ = registered().exercise_checks[label]
    out = {f: PASSED[f] if f in PASSED else figdata.load(f)["data"] for f in figs}
    if solution is not None:
        out[SOLUTION] = solution
    return out


def judged(label, answer, data) -> bool:
    return bool(exercises.check(label, answer, data=data))


@pytest.mark.parametrize("label", sorted(registered().exercise_checks))
def test_no_check_passes_a_constant_or_the_starting_cell(label, capsys):
    solution = SOLVED[label][0]() if label in SOLVED else None
    for answer in CONSTANTS:
        assert not judged(label, answer, numbers(label, solution)), f"{label} passes the constant {answer!r}"


@pytest.mark.parametrize("label", sorted(set(SOLVED) | set(COPIED)))
def test_no_check_passes_what_the_page_shows(label, capsys):
    solution = SOLVED[label][0]() if label in SOLVED else None
    copied = (SOLVED[label][1] if label in SOLVED else COPIED[label])()
    for answer in copied:
        assert not judged(label, answer, numbers(label, solution)), f"{label} passes the copied {answer!r}"


@pytest.mark.parametrize("label", sorted(SOLVED))
def test_a_check_that_reads_the_books_answer_passes_it(label, capsys):
    solution = SOLVED[label][0]()
    assert judged(label, solution, numbers(label, solution))


def test_every_check_that_compares_with_the_books_answer_is_tried_here():
    """A check that reads SOLUTION (itself or through exercises.expected) is listed in SOLVED (with its copied
    values), so that the tests above reach it."""
    import ast
    import inspect
    import textwrap

    def reads_solution(fn) -> bool:
        for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(fn)))):
            if isinstance(node, ast.Name) and node.id == "SOLUTION":
                return True
            if isinstance(node, ast.Call):
                called = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
                if called == "expected":
                    return True
        return False

    reads = {label for label, (_, fn) in registered().exercise_checks.items() if reads_solution(fn)}
    assert reads == set(SOLVED), reads ^ set(SOLVED)


def test_a_close_answer_is_judged_on_the_books_answer_not_the_figure():
    """With the book's answer given, the intercept check's tolerance is the refit's (1e-4), not the figure's 0.05."""
    base = _r2_24()
    data = numbers("ex-sec3-intercept", base + 0.0012)
    assert judged("ex-sec3-intercept", base + 0.0012 + 5e-5, data)
    assert not judged("ex-sec3-intercept", base + 0.0012 + 5e-4, data)
    # without it (a student's own notebook), the loose reading stands
    assert judged("ex-sec3-intercept", base + 0.01, numbers("ex-sec3-intercept"))
    assert np.isfinite(base)
