"""Which paper figure shows what, and the one function that computes the numbers behind each.

The notebooks call :func:`compute`; the regression tests call it too and compare with ``book/data/<fig>.json``.
"""

from __future__ import annotations

from functools import lru_cache

from . import profiles
from .experiment import Experiment

# paper figure -> (kind, model role, domain); spec section 8
FIGURES = {
    "fig2": ("r2", "gpt48", "main"),
    "fig3": ("r2", "bert24", "main"),
    "fig12": ("r2", "gpt24", "second"),
    "fig13": ("r2", "bert24", "second"),
    "fig22": ("r2", "gpt12", "main"),
    "fig23": ("r2", "gpt24", "main"),
    "fig24": ("r2", "gpt36", "main"),
    "fig25": ("r2", "bert12", "main"),
}


@lru_cache(maxsize=16)
def experiment(model: str, domain: str, profile: str = "tiny", n_train=None, n_val=None, seed: int = 0):
    """One shared :class:`Experiment` per setting, so that figures on the same model reuse its hidden states."""
    return Experiment(model, domain, profile=profile, n_train=n_train, n_val=n_val, seed=seed)


def setting(fig: str, profile: str = "tiny") -> tuple[str, str, str]:
    """``(kind, model, domain)`` of a paper figure under a profile."""
    if fig not in FIGURES:
        raise ValueError(f"unknown figure {fig!r}; known: {', '.join(FIGURES)}")
    kind, role, dom = FIGURES[fig]
    p = profiles.get(profile)
    return kind, p.role(role), p.domain(dom)


def compute(fig: str, profile: str = "tiny", n_train=None, n_val=None, seed: int = 0) -> tuple[dict, dict]:
    """The numbers behind paper figure ``fig`` and the parameters that produced them."""
    kind, model, domain = setting(fig, profile)
    exp = experiment(model, domain, profile, n_train, n_val, seed)
    params = {"profile": profile, "model": model, "paper_model": profiles.PAPER_NAME.get(model, model),
              "domain": domain, "seed": seed, "n_train": len(exp.train), "n_val": len(exp.val)}
    if kind == "r2":
        return exp.layer_r2(), params
    raise NotImplementedError(kind)
