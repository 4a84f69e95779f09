"""Lenses: one small abstraction every method of the book plugs into.

A lens casts a layer's hidden state to the last layer, ``T_l(h) = h M_l + c_l`` (row vectors), and the model's own
readout ``R`` (final norm + unembedding, or BERT's MLM head) turns the result into a distribution. ``id`` (the logit
lens) and ``mat`` (the paper's least-squares map) are lenses; so are the affine least-squares map, the closed-form
reduced-rank maps, the gradient-descent low-rank shortcuts of N-NJTC and the tuned lens. Every lens is fitted on the
same train split as ``mat`` and judged by one evaluator (:mod:`.evaluate`) on the same validation split.

    from jtc_utils.lenses import get, evaluate
    lens = get("rrr", rank=4).fit(exp)          # exp: a jtc_utils.core.experiment.Experiment
    result = evaluate.evaluate(exp, lens)

Modules: :mod:`.base` (the :class:`Lens` and its errors), :mod:`.closed_form` (id, mat, mat+b, reduced rank),
:mod:`.lowrank` (NJTC and N-NJTC by batched gradient descent), :mod:`.tuned` (the tuned lens), :mod:`.registry`
(names to lenses), :mod:`.evaluate` (every metric, early exit and the oracle), :mod:`.figures`, :mod:`.plots`,
:mod:`.claims` (the papers' claims), :mod:`.exercises` (the chapter's exercise checks).
"""

from .base import DivergedError, Lens, LensError, NotFittedError, StaleLensError
from .registry import LENSES, get

__all__ = ["Lens", "LensError", "NotFittedError", "DivergedError", "StaleLensError", "LENSES", "get"]
