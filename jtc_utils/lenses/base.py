"""The lens: a per-layer affine map to the last layer, ``T_l(h) = h M_l + c_l``, read out by the model.

Every lens of the book, however it is trained, is evaluated in this form: the closed-form maps are affine by
construction, NJTC is ``h A B``, N-NJTC in evaluation mode is affine (its BatchNorm is a fixed scale and shift), and
the tuned lens is ``h + h W + b``. A lens holds ``M`` [L, d, d] (or None for the identity), ``c`` [L, d] (or None),
the number of trained parameters per layer, and a record of how it was fitted; layer L is the true output for every
lens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


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


@dataclass
class Lens:
    """A lens by name and hyper-parameters; :meth:`fit` fills in its maps (see :func:`jtc_utils.lenses.get`)."""

    name: str
    hp: dict = field(default_factory=dict)
    M: np.ndarray | None = None  # [L, d, d], row form; None = identity
    c: np.ndarray | None = None  # [L, d]; None = no intercept
    n_layers: int | None = None
    d: int | None = None
    record: dict = field(default_factory=dict)  # how it was fitted (training log, epochs, losses)
    spec: Any = field(default=None, repr=False, compare=False)  # its LensSpec (how it is fitted, its parameters)

    def __post_init__(self):
        if self.spec is None:
            raise LensError(f"lens {self.name!r} was made without its spec: make it with jtc_utils.lenses.get(name)")

    @property
    def label(self) -> str:
        return lens_label(self.name, self.hp.get("rank"))

    @property
    def fitted(self) -> bool:
        return self.n_layers is not None

    def params(self, d: int | None = None) -> int:
        """Trained parameters per layer (0 for ``id``; JTC d², NJTC 2dr, N-NJTC 2dr + 4d, tuned d² + d)."""
        d = d or self.d
        if d is None:
            raise NotFittedError(f"lens {self.label!r} is not fitted; pass d, or call .fit(exp) first")
        return self.spec.params(d, self.hp.get("rank"))

    def fit(self, exp) -> "Lens":
        """Fit on ``exp``'s train split (an :class:`jtc_utils.core.experiment.Experiment`, or anything with ``X_train``
        [L+1, n, d], ``n_layers`` and ``adapter``); returns the lens itself."""
        L, d = exp.X_train.shape[0] - 1, exp.X_train.shape[2]
        rank = self.hp.get("rank")
        if rank is not None and rank > d:
            raise LensError(f"rank {rank} is above the width d = {d} of {getattr(exp, 'model_name', 'this model')}; "
                            f"use a rank from 1 to {d}")
        self.M, self.c, self.record = self.spec.fit(exp, **self.hp)
        self.n_layers, self.d = L, d
        self.check()
        return self

    def check(self) -> None:
        for what, a, shape in (("M", self.M, (self.n_layers, self.d, self.d)), ("c", self.c, (self.n_layers, self.d))):
            if a is not None and (a.shape != shape or not np.all(np.isfinite(a))):
                raise LensError(f"lens {self.label!r}: {what} has shape {a.shape} (expected {shape}) or non-finite "
                                f"values")

    def check_states(self, X: np.ndarray) -> None:
        """Refuse hidden states of another model: ``X`` [L+1, n, d] must match the layers and width fitted on."""
        if not self.fitted:
            raise NotFittedError(f"lens {self.label!r} is not fitted: call lens.fit(exp) before evaluating it")
        if X.ndim != 3 or X.shape[0] != self.n_layers + 1 or X.shape[2] != self.d:
            raise LensError(f"lens {self.label!r} was fitted on a model with {self.n_layers} layers and width "
                            f"{self.d}; these hidden states are {tuple(X.shape)} ([layers+1, n, d]): fit the lens on "
                            f"the model you evaluate")

    def transform(self, H: np.ndarray, layer: int) -> np.ndarray:
        """``T_layer(H)`` for vectors ``H`` [n, d] of layer ``layer`` (0..L); layer L is returned as it is."""
        if not self.fitted:
            raise NotFittedError(f"lens {self.label!r} is not fitted: call lens.fit(exp) before using it")
        if H.shape[-1] != self.d:
            raise LensError(f"lens {self.label!r} has width {self.d}; got vectors of width {H.shape[-1]}")
        if not 0 <= layer <= self.n_layers:
            raise LensError(f"layer {layer} is outside 0..{self.n_layers}")
        if layer == self.n_layers:
            return H
        out = H.astype(np.float64) @ self.M[layer] if self.M is not None else H.astype(np.float64)
        if self.c is not None:
            out = out + self.c[layer]
        return out.astype(np.float32)
