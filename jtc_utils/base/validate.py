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


# The least sizes that give every statistic of the book a value: r² and a bootstrap need a variance, which one
# sample does not have (r² of one validation sample is 0 whatever the map; a resample of one sample is that sample).
LEAST_SAMPLES = 2


def size(value, name: str, least: int = LEAST_SAMPLES, why: str = "", example: str = "") -> int | None:
    """A sample size: None (the default size) or a whole number of at least ``least``; ``why`` says why fewer does
    not work."""
    if value is None:
        return None
    value = integer(value, name, example=example or f"{name}={max(least, 100)}")
    if value < least:
        reason = f" ({why})" if why else ""
        raise ValueError(
            f"{name} must be at least {least}{reason}, got {value}; pass {name}={max(least, 100)} or "
            f"more, or None for the default size"
        )
    return value


def sizes(n_train, n_val) -> tuple:
    """``(n_train, n_val)`` of an experiment, each None or a whole number of at least :data:`LEAST_SAMPLES`."""
    why = "r² and its resamples need at least two samples to have a variance"
    return size(n_train, "n_train", why=why), size(n_val, "n_val", why=why)


def index_list(values, name: str, n: int, what: str) -> list[int]:
    """A list of indices into ``n`` things (``what``: e.g. "validation samples"), each in 0..n-1; a single number
    or a string is refused with the list form to use."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a list of indices such as [0, 1], got {values!r}; pass [{values!r}] for one")
    out = [integer(v, f"each of {name} (an index into the {n} {what}, 0..{n - 1})", 0, n - 1) for v in values]
    if not out:
        raise ValueError(f"{name} is empty; pass at least one index into the {n} {what}, such as [0]")
    return out


def layer(value, n_layers: int, name: str = "layer", model: str = "the model") -> int:
    """A layer index 0..n_layers (0: the embeddings, n_layers: the last layer)."""
    return integer(value, f"{name} (of {model}, which has layers 0..{n_layers})", 0, n_layers, example=f"{name}=1")


def layer_list(values, n_layers: int, model: str = "the model") -> list[int]:
    """A list of layer indices, each 0..n_layers; a single number is refused with the list form to use."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(
            f"layers must be a list of layer indices such as [1, {n_layers // 2}], got {values!r}; pass "
            f"[{values!r}] for one layer"
        )
    out = [
        integer(
            v,
            f"each layer (of {model}, which has layers 0..{n_layers})",
            0,
            n_layers,
            example=f"layers=[1, {n_layers // 2}]",
        )
        for v in values
    ]
    if not out:
        raise ValueError(f"layers is empty; pass at least one layer of 0..{n_layers}, or None for the default")
    return out
