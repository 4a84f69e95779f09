"""Lenses: one abstraction ``T_l(h) = h M_l + c_l`` read out by the model, which every method plugs into (``id``,
``mat``, the closed forms, NJTC/N-NJTC, the tuned lens; ``get("rrr", rank=4).fit(exp)``), judged by one evaluator
(:mod:`.evaluate`); the prediction trajectories (:mod:`.trajectory`); ``paper`` declares its figures and claims."""

from .base import DivergedError, LensError, NotFittedError, StaleLensError
from .registry import LENSES, Lens, get

__all__ = ["Lens", "LensError", "NotFittedError", "DivergedError", "StaleLensError", "LENSES", "get"]
