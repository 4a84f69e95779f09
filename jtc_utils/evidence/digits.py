"""What a stored output shows: only the digits that survive other arithmetic.

A page's outputs are compared with a re-execution on the reader's machine (nbval), where another CPU, thread count
or kernel moves float results in their last bits. A number printed to more digits than survive that comparison
makes the test fail on noise; these helpers print what the reader needs instead:

* :func:`bound`: a quantity that should be zero up to rounding (a decomposition's deviation, an identity's gap) is
  shown as the bound it is checked against, ``below 1e-05``, and printed in full only when it breaks the bound;
* :func:`sig`: a number to a few significant digits, in plain decimals (perplexities that range from 30 to
  10^5);
* :func:`frame`: a table with its numeric columns rounded to fixed decimals, also where pandas' own ``round``
  leaves a mixed-type column untouched.

The measured spread of every figure-data quantity is in ``tests/noise.json`` (``benchmarks/noise.py``); a table of
a noisy quantity rounds to the decimals its tolerance supports (:func:`decimals_for`).
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
