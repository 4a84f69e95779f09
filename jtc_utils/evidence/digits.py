"""What a stored output shows: only the digits that survive other arithmetic. nbval compares a page's outputs with a
re-execution on the reader's machine, where another CPU, thread count or kernel moves float results in their last
bits, so :func:`bound` shows a quantity that should be zero up to rounding as the bound it is checked against
(``below 1e-05``), :func:`sig` prints a few significant digits in plain decimals, and :func:`frame` rounds a
table's numeric columns, to the decimals a noisy quantity's measured tolerance supports (:func:`decimals_for`,
``tests/noise.json``).
"""

from __future__ import annotations

import math


def bound(x: float, limit: float) -> str:
    """``"below 1e-05"`` when ``|x| < limit``; otherwise the value itself and the broken bound."""
    if abs(x) < limit:
        return f"below {limit:.0e}"
    return f"{x:.1e}, NOT below {limit:.0e}"


def sig(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits in plain decimals (``31.4``, ``124,000``, ``0.000123``: no exponent, so
    that a column reads in one notation)."""
    if x is None or not math.isfinite(x):
        return str(x)
    if x == 0:
        return "0"
    r = float(f"{x:.{digits}g}")
    return f"{r:,.{max(0, digits - 1 - math.floor(math.log10(abs(r))))}f}"


def decimals_for(tolerance: float) -> int:
    """The decimals a value with absolute ``tolerance`` can show: the place of the tolerance's leading digit, less
    one (a tolerance of 0.04 shows 0.6, one of 2e-3 shows 0.64)."""
    if tolerance <= 0:
        raise ValueError(f"a tolerance must be positive, got {tolerance}")
    return max(0, -math.floor(math.log10(tolerance)) - 1)


def frame(df, decimals: int | dict):
    """``df`` with every numeric column (or those named in a ``{column: decimals}`` dict) rounded; columns of mixed
    type (numbers stored as objects beside strings) are converted first, so that nothing is left at full
    precision."""
    import pandas as pd

    out = df.copy()
    cols = decimals if isinstance(decimals, dict) else {c: decimals for c in out.columns}
    for c, d in cols.items():
        numeric = pd.to_numeric(out[c], errors="coerce")
        if numeric.notna().sum() == out[c].notna().sum():
            out[c] = numeric.round(d)
    return out
