"""What every lens module shares: the lens errors and a lens's label (:func:`lens_label`). The lens itself is
:class:`jtc_utils.lenses.registry.Lens`, beside the table of every lens by name."""

from __future__ import annotations


class LensError(ValueError):
    """A lens asked for with a bad name or hyper-parameter, or applied to hidden states it does not fit."""


def lens_label(name: str, rank: int | None = None) -> str:
    """A lens's label: its name, and ``_<rank>`` for a low-rank one (``rrr_4``); the one writer of labels
    (:func:`jtc_utils.lenses.registry.label_of` reads one back)."""
    return name if rank is None else f"{name}_{rank}"


class NotFittedError(RuntimeError):
    """A lens used before it was fitted."""


class DivergedError(RuntimeError):
    """Gradient descent produced a non-finite loss."""


class StaleLensError(LookupError):
    """A trained lens on disk was trained on other weights, samples or hyper-parameters than asked for."""
