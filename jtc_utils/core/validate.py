"""Checks of user-given numbers, shared by every module that takes them: a clear error naming the value and the
fix, instead of a silent truncation (``k=2.7`` used as 2) or a failure deep inside numpy."""

from __future__ import annotations

import numbers


def integer(value, name: str, minimum: int | None = None, maximum: int | None = None, example: str = "") -> int:
    """``value`` as an int, if it is a whole number (not a bool, not 2.7) within [minimum, maximum]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        hint = f"; pass e.g. {example}" if example else ""
        raise TypeError(f"{name} must be a whole number, got {value!r} ({type(value).__name__}){hint}")
    value = int(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        lo = "" if minimum is None else f"{minimum}"
        hi = "" if maximum is None else f"{maximum}"
        rng = f"between {lo} and {hi}" if lo and hi else (f"at least {lo}" if lo else f"at most {hi}")
        raise ValueError(f"{name} must be {rng}, got {value}")
    return value


def seed(value) -> int:
    """A seed: a whole number >= 0 (numpy's generators refuse negative seeds)."""
    return integer(value, "seed", minimum=0, example="seed=0")
