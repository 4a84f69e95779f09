"""The JTC claims on each training seed of the stand-in of GPT2-XL (the verdicts' second review).

Every stand-in verdict rests on one trained model per role, and training randomness alone can move a shape. The zoo
holds two more training seeds of the stand-in of GPT2-XL (:data:`jtc_utils.core.models.catalogue.REPLICAS`: the same
texts, architecture and budget; another initialisation and batch order). Every figure of that role (``gpt48``) that a
claim reads is recomputed on each replica (:func:`replica_getter`), every claim is judged again by the same rules,
and a shape verdict that differs between the seeds is undecided on the stand-in (:func:`combine`). The other roles
have one seed each, so a claim that reads none of this role's figures is the same on every seed; its record says
that it was not replicated.
"""

from __future__ import annotations

import dataclasses

from jtc_utils.core.models import catalogue
from jtc_utils.core.data import profiles
from jtc_utils.core.data.profiles import Profile
from jtc_utils.core.data.setting import Setting
from jtc_utils.evidence import claims, figure_registry, findings, verdicts

from . import claims as jtc_claims
from . import figures

ROLE = "gpt48"  # the paper's GPT2-XL, whose stand-in has training-seed replicas


def prefix(model: str) -> str:
    """The ``book/data`` prefix of the figures recomputed on a replica: ``seed1_`` for ``tiny-gpt2-xl-seed1``."""
    return f"seed{catalogue.ALL[model].seed}_"


def replicas(profile: Profile | str = "tiny") -> list[str]:
    """The role's model on ``profile`` and its training-seed replicas, seed 0 first (only the model when it has
    none, as on the real and paper profiles)."""
    return catalogue.replicas_of(profiles.get(profile).role(ROLE))


def replica_profile(profile: Profile | str, model: str) -> Profile:
    """``profile`` with ``model`` in the role of GPT2-XL and every other role as it is."""
    p = profiles.get(profile)
    return dataclasses.replace(p, gpt=p.gpt[:3] + (model,))


def role_figure(fig: str) -> bool:
    """Whether stand-in figure ``fig`` is computed on the role's model."""
    return (
        fig in figures.FIGURES and figures.FIGURES[fig][1] == ROLE and not fig.startswith(figure_registry.REAL_PREFIX)
    )


def replica_figure(fig: str, s: Setting) -> tuple[dict, dict]:
    """``seed<k>_<fig>``: figure ``<fig>`` of the role recomputed under ``s`` on its training-seed replica ``k``."""
    for model in replicas(s.profile)[1:]:
        if fig.startswith(prefix(model)):
            return figures.compute(fig.removeprefix(prefix(model)), s.on(replica_profile(s.profile, model)))
    raise ValueError(f"{fig!r} names no training-seed replica of {s.profile.role(ROLE)}")


def replica_getter(
    model: str, profile: Profile | str = "tiny", results: dict | None = None, params: dict | None = None
):
    """A claims ``get`` that computes each figure of the role on replica ``model``, once (:func:`replica_figure`; its
    numbers kept in ``results``, its parameters in ``params``), and reads every other figure from ``book/data``."""
    s = Setting.of(profile)
    return claims.computing_getter(
        lambda fig: replica_figure(prefix(model) + fig, s), results, params, role_figure, prefix(model)
    )


def stored_getter(model: str):
    """A claims ``get`` that reads the role's figures of replica ``model`` as the claims page saved them
    (``<prefix><fig>``, see :func:`prefix`) and every other figure as stored."""

    def get(fig):
        return claims.default_get(prefix(model) + fig if role_figure(fig) else fig)

    return get


def reads_role(cid: str, get=claims.default_get) -> bool:
    """Whether JTC claim ``cid``'s rule reads any figure of the role (on the numbers ``get`` gives)."""
    watch = claims.reading(get)
    try:
        jtc_claims.CLAIMS[cid](watch)
    except claims.NotComputed:
        pass
    return any(role_figure(f) for f in watch.figs)


def seed_claims(
    profile: Profile | str = "tiny", results: dict | None = None, params: dict | None = None
) -> dict[str, list[dict]]:
    """Every JTC claim judged on each replica of the role (model -> records); ``results`` and ``params`` collect
    the figures computed, by model."""
    results = {} if results is None else results
    params = {} if params is None else params
    p = profiles.get(profile)
    return {
        m: jtc_claims.all_claims(replica_getter(m, p, results.setdefault(m, {}), params.setdefault(m, {})), p)
        for m in replicas(p)[1:]
    }


def combine(records: list[dict], by_seed: dict[str, list[dict]], profile: Profile | str = "tiny") -> list[dict]:
    """The stand-in's records (seed 0) with each seed's shape verdict under ``per_seed`` (``seed``, ``model``,
    ``verdict``, seed 0 first) for
    every claim that reads the role's figures; where those differ, the claim is undecided on the stand-in
    (``seeds_differ``), its margin and interval still seed 0's, and its reason says how the seeds split."""
    models = replicas(profile)
    index = {m: {r["id"]: r for r in recs} for m, recs in by_seed.items()}
    out = []
    for r in records:
        if r.get("kind") != "claim" or r["verdict"] is None or not by_seed or not reads_role(r["id"]):
            out.append(r)
            continue
        per_seed = [
            {
                "seed": catalogue.ALL[m].seed,
                "model": m,
                "verdict": findings.shape_verdict(index[m][r["id"]] if m in index else r),
            }
            for m in models
        ]
        rec = {**r, "per_seed": per_seed}
        if len({s["verdict"] for s in per_seed}) > 1:
            split = ", ".join(f"seed {s['seed']} {s['verdict']}" for s in per_seed)
            why = (
                f"The training seeds of the stand-in of GPT2-XL disagree ({split}): a shape that training "
                f"randomness alone moves is undecided on the stand-in; the margin and interval shown are seed 0's."
            )
            rec.update(
                verdict=verdicts.UNDECIDED,
                holds=None,
                seeds_differ=True,
                reason=why + (" " + r["reason"] if r.get("reason") else ""),
            )
        out.append(claims.typed(rec))
    return out


def all_claims(profile: Profile | str = "tiny") -> list[dict]:
    """Every JTC claim on the stand-in as the claims page shows it, from ``book/data``: seed 0's records combined
    with the replicas' (:func:`combine`), each replica's figures read as saved."""
    p = profiles.get(profile)
    by_seed = {m: jtc_claims.all_claims(stored_getter(m), p) for m in replicas(p)[1:]}
    return combine(jtc_claims.all_claims(profile=p), by_seed, p)


def table(records: list[dict]):
    """The claims that read the role's figures, one row each: the shape verdict on every seed and on the stand-in."""
    import pandas as pd

    rows = [
        {
            "claim": r["id"],
            **{f"seed {s['seed']}": s["verdict"] for s in r["per_seed"]},
            "on the stand-in": findings.shape_verdict(r),
        }
        for r in records
        if r.get("per_seed")
    ]
    return pd.DataFrame(rows).set_index("claim")


# the figures of the role recomputed on each replica of the stand-in, as the claims page saves them
RECORDS = {prefix(m) + f: replica_figure for m in replicas("tiny")[1:] for f in figures.FIGURES if role_figure(f)}
