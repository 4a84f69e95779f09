"""The book's one figure registry: every paper package registers the figures it computes, and the book computes,
saves and returns any of them by id through :func:`figure`.

Each paper package's ``figures`` module has a ``compute(fig, profile, n_train, n_val, seed) -> (data, params)`` for
its figure ids (``profile`` a :class:`~jtc_utils.core.profiles.Profile`: the name a notebook passes is resolved once,
here); :func:`jtc_utils.book.papers.register` registers each (:func:`register`), with the paper's claims and
exercise checks, so that a chapter reaches every figure by id. A figure id belongs to exactly one paper."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from jtc_utils.core import profiles
from jtc_utils.base import validate
from jtc_utils.core.profiles import Profile

from . import figdata

REAL_PREFIX = "real_"  # a figure computed on the real model (profile "real"), beside its stand-in twin
CUSTOM = "custom"  # the profile of a reader's own model, which plays the real model's part (its ``real_`` figures)


@dataclass(frozen=True)
class Registered:
    paper: str  # "jtc", "lenses", "ffn" or "linearity"
    compute: Callable  # (fig, profile: Profile, n_train, n_val, seed) -> (data, params)
    params_in_result: bool  # whether :func:`figure` returns the parameters under "params" beside the data


FIGURES: dict[str, Registered] = {}


def register(paper: str, ids, compute: Callable, params_in_result: bool = True) -> None:
    """Register ``compute`` for the figure ids ``ids`` of ``paper``. ``params_in_result=False`` for a paper whose
    figure data are keyed by model (the parameters would read as one more model)."""
    for fig in ids:
        if fig in FIGURES and FIGURES[fig].paper != paper:
            raise ValueError(f"figure {fig!r} is registered by {FIGURES[fig].paper!r} and {paper!r}")
        FIGURES[fig] = Registered(paper, compute, params_in_result)


def profile_of(fig: str, profile: Profile | str) -> Profile:
    """The profile a figure is computed on: ``real`` for the real model's figures (the reader's own model under the
    custom profile), the chapter's otherwise (``profile``: a :class:`Profile` or its name)."""
    p = profiles.get(profile)
    if fig.startswith(REAL_PREFIX) and p.name != CUSTOM:
        return profiles.get("real")
    return p


def entry(fig: str) -> Registered:
    if fig not in FIGURES:
        papers = sorted({r.paper for r in FIGURES.values()})
        known = "; ".join(f"{p}: {', '.join(f for f, r in FIGURES.items() if r.paper == p)}" for p in papers)
        raise ValueError(f"unknown figure {fig!r}: no paper package registered it (known ids, by paper: "
                         f"{known or 'none'}; every paper's figures are registered by "
                         "jtc_utils.book.papers.register(), which every book module that reads a registry calls)")
    return FIGURES[fig]


def compute(fig: str, profile: Profile | str = "tiny", n_train=None, n_val=None, seed: int = 0) -> tuple[dict, dict]:
    """``(data, params)`` of figure ``fig``, computed by the paper package that registered it, on the profile the
    figure belongs to (:func:`profile_of`). The sizes and seed are checked here, before anything is computed."""
    registered = entry(fig)
    n_train, n_val = validate.sizes(n_train, n_val)
    return registered.compute(fig, profile_of(fig, profile), n_train, n_val, validate.seed(seed))


def figure(fig: str, profile: Profile | str = "tiny", n_train=None, n_val=None, seed: int = 0) -> dict:
    """Compute figure ``fig``, save its numbers to ``book/data/<fig>.json`` and return them as saved (plain JSON
    values, NaN as None; the same a reader gets from ``figdata.load(fig)["data"]``), with the parameters under
    ``params`` where the paper registered so."""
    data, params = compute(fig, profile, n_train, n_val, seed)
    record = figdata.save(fig, data, params)
    if entry(fig).params_in_result:
        return {**record["data"], "params": record["params"]}
    return dict(record["data"])
