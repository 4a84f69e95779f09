"""The numbers behind every figure and table of the lens chapter, one function per figure id in :data:`COMPUTE`
(related-systems spec 6): N-NJTC's Figures 2 and 3 (``nnjtc_fig2``: r² of every layer pair for id, ``mat``, NJTC and
N-NJTC, every seed of :data:`SEEDS`, with the closed-form optimum's loss; ``nnjtc_fig3``: Precision@1 and both
surprisals), the closed-form rank sweep (``ext_nnjtc_rank``), objective against form (``tl_grid``), the tuned lens on
every zoo model (``tl_cmp``), every lens × layer × metric (``lens_table``), and their ``real_`` twins on the real
model's first :data:`REAL_VAL` validation samples (``real_nnjtc_fig2`` reads the pairs the claims read:
:func:`fig2_real`).
Evaluations are cached on disk (:mod:`jtc_utils.lenses.evaluated`); the tables are :mod:`jtc_utils.lenses.tables`.
"""

from __future__ import annotations

import numpy as np

from jtc_utils.core.models.models import CAUSAL
from jtc_utils.core.infra import resample
from jtc_utils.core.analysis import linear
from jtc_utils.core.data import profiles
from jtc_utils.core.data.profiles import Profile
from jtc_utils.core.data.setting import Setting
from jtc_utils.core.analysis.experiment import for_role, shared
from jtc_utils.evidence import figure_registry
from jtc_utils.evidence.verdicts import LEAST_SEEDS, seed_key

from . import artifacts, closed_form, evaluate, registry
from .base import lens_label
from .evaluated import evaluated, evaluated_many
from .registry import Lens

RANK = 4  # the zoo's rank (spec 3.2 item 3); the paper profile uses floor(d/100)
SEEDS = tuple(range(LEAST_SEEDS))  # the stand-in's low-rank lenses: every run the seed rule needs (train.SEEDS)
# the training runs of the lenses trained once: the tuned lens of the stand-in (each run doubles its steps until it
# converges, about an hour of two CPU cores) and the real model's NJTC and N-NJTC to the last layer and its tuned lens
# (a GPU job); the claims that compare them are not judged until they have three (evidence.instruments.LEAST_RUNS)
TUNED_SEEDS = (0,)
REAL_SEEDS = (0,)
SWEEP_RANKS = (1, 2, 4, 8, 16, 32)
GRID = ("id", "mat", "mat+b", "tuned", "tuned-lin", "tuned<-mat")
TABLE_LENSES = ("id", "mat", "mat+b", "rrr", "arrr", "njtc", "nnjtc", "tuned", "tuned-lin", "tuned<-mat")
# the real model's tuned lens is trained on a GPU by ``python -m jtc_utils.lenses.train --real-tuned`` and committed
REAL_LENSES = ("id", "mat", "mat+b", "rrr", "arrr", "njtc", "nnjtc", "tuned")
# the grid's lenses the real model has (its tuned lens: one, trained on a GPU)
REAL_GRID = ("id", "mat", "mat+b", "tuned")
# the real model's every-layer figures read out the first REAL_VAL validation samples (the real profile's validation
# subset, as its JTC figures): each layer of each lens is a readout over a 49,152-token vocabulary
REAL_VAL = profiles.REAL_SUBSET[1]
REAL_EXIT = ("id", "mat", "nnjtc", "tuned")  # the lenses whose early exit the real model's figure draws
LENS_FIGURES = {
    "nnjtc_fig2": "gpt48",
    "nnjtc_fig3": "gpt48",
    "ext_nnjtc_rank": "gpt48",
    "tl_grid": "gpt48",
    "tl_cmp": None,
    "lens_table": "gpt48",
    "real_lens_table": "gpt48",
    "real_nnjtc_fig3": "gpt48",
    "real_tl_grid": "gpt48",
    "real_lens_exit": "gpt48",
    "real_nnjtc_fig2": "gpt48",
}


def rank_for(d: int) -> int:
    """The chapter's rank: the paper's floor(d/100) where that is at least 1 (paper and real profiles), else 4."""
    return d // 100 if d >= 100 else RANK


def lens(exp, name: str, seed: int = 0) -> Lens:
    """A fitted lens of the bench (rank from :func:`rank_for` for the low-rank ones)."""
    spec = registry.LENSES[name]
    hp = {}
    if spec.rank:
        hp["rank"] = rank_for(exp.adapter.d)
    if spec.method.trained:
        hp["seed"] = seed
    return registry.get(name, **hp).fit(exp)


def _pair_r2(exp, M, c, pairs, boot=None):
    """[L+1, L+1] validation r² of the maps ``M``, ``c`` of ``pairs`` (other cells NaN, diagonal 1); with ``boot``
    ([B, n_val] draw counts) also each pair's r² under every resample, [B, P], from the same predictions."""
    L = exp.n_layers
    out = np.full((L + 1, L + 1), np.nan)
    np.fill_diagonal(out, 1.0)
    X = exp.X_val
    resampled = []
    for p, (a, b) in enumerate(pairs):
        pred = X[a].astype(np.float64) @ M[p] + (0 if c is None else c[p])
        out[a, b] = linear.r2_score(X[b], pred)
        if boot is not None:
            resampled.append(linear.r2_resampled(X[b], pred, boot))
    return out if boot is None else (out, np.stack(resampled, axis=1))


def _pair_optimum(exp, pairs, rank: int, affine: bool) -> np.ndarray:
    """Train SSE of the closed-form rank-r optimum of every pair (one factorisation per source layer)."""
    X = exp.X_train
    out, pinvs = np.zeros(len(pairs)), {}
    for p, (a, b) in enumerate(pairs):
        if a not in pinvs:
            pinvs[a] = linear.pinv(closed_form.with_ones(X[a]) if affine else X[a])
        fam = closed_form.RankFamily(X[a], X[b], affine=affine, M_ols=pinvs[a] @ X[b].astype(np.float64))
        out[p] = fam.train_sse(rank)
    return out


def fig2(exp) -> dict:
    """N-NJTC Figure 2 on ``exp``: r² heatmaps of id, JTC, NJTC and N-NJTC (seed 0), every seed's mean r² to the
    last layer, and the training loss of gradient descent against the closed-form optimum of the same rank."""
    rank = rank_for(exp.adapter.d)
    fits = exp.layer_r2()
    L = exp.n_layers
    out = {"rank": rank, "r2_id": fits["r2_id"], "r2_mat": fits["r2_mat"], "seeds": list(SEEDS)}
    n = exp.X_train.shape[1]
    closed, runs = {}, {}
    for norm, name in ((False, "njtc"), (True, "nnjtc")):
        to_last, ratio = [], []
        for seed in SEEDS:
            r = registry.all_pairs(exp, rank, norm, seed)
            runs[seed_key(lens_label(name, rank), seed)] = converged(r)
            pairs = [tuple(p) for p in r["pairs"]]
            heat = _pair_r2(exp, r["M"], r["c"], pairs)
            if seed == SEEDS[0]:
                out[f"r2_{name}"] = heat
            to_last.append(heat[:L, L])
            if name not in closed:  # the closed-form optimum of each pair's loss (rank r; with intercept for N-NJTC)
                closed[name] = _pair_optimum(exp, pairs, rank, norm) / n
            ratio.append(np.asarray(r["train_loss"]) / closed[name])
        out[f"r2_to_last_{name}"] = np.array(to_last)
        out[f"loss_ratio_min_{name}"] = float(np.min(ratio))
        out[f"loss_ratio_median_{name}"] = float(np.median(ratio))
    out["pairs"] = int(len(closed["njtc"]))
    out["converged"] = runs
    return out


def converged(out: dict) -> bool:
    """Whether a training run met its recipe's convergence criterion (:func:`artifacts.convergence`: every pair within
    its gap of its function class's optimum, or the tuned lens's last 10% of steps below its improvement); a run
    whose record does not say (trained before the criterion was recorded) has not shown it."""
    return bool(artifacts.convergence(out).get("converged", False))


def _runs_converged(fitted: dict) -> dict:
    """{curve key: whether that training run converged} for the trained lenses of ``fitted``."""
    return {k: converged(ln.record) for k, ln in fitted.items() if ln.spec.method.trained}


def _fitted(exp, names, seeds=(0,)) -> dict:
    """The fitted lenses ``names`` (the trained ones at every seed), by curve key (``label`` or ``label/seedN``)."""
    out = {}
    for name in names:
        trained = registry.LENSES[name].method.trained
        for seed in seeds if trained else (0,):
            ln = lens(exp, name, seed)
            out[seed_key(ln.label, seed)] = ln
    return out


def _curves(exp, fitted: dict, layers=None, boot: dict | None = None, n_val: int | None = None) -> dict:
    """Per-layer curves of each fitted lens; ``boot``: {label prefix: metrics} whose resamples are kept, for the
    curves the claims judge (see :func:`evaluate.curves`); ``n_val``: on the first validation samples only."""
    boot = boot or {}
    keys = {k: boot.get(ln.name, ()) for k, ln in fitted.items()}
    return {
        k: evaluate.curves(r, keys[k])
        for k, r in zip(fitted, evaluated_many(exp, list(fitted.values()), layers, n_val))
    }


def fig2_real(exp, seeds=REAL_SEEDS) -> dict:
    """N-NJTC Figure 2 on the real model: id and mat r² for every layer pair; NJTC and N-NJTC on the pairs its
    claims read, each layer to the next (seed ``seeds[0]``) and each layer to the last (every seed of ``seeds``)
    (every pair would be 465 trainings, hours of two CPU cores; ``python -m jtc_utils.lenses.train --models
    smollm2-135m`` trains and commits these), their other cells NaN; the r² to the last layer of every seed with its
    resamples of the validation samples, and gradient descent's training loss against the closed-form optimum on
    those pairs."""
    rank = rank_for(exp.adapter.d)
    fits = exp.layer_r2()
    L = exp.n_layers
    seed = seeds[0]
    out = {
        "rank": rank,
        "r2_id": fits["r2_id"],
        "r2_mat": fits["r2_mat"],
        "seeds": list(seeds),
        "pair_sets": ["adjacent", "to-last"],
    }
    n, w = exp.X_train.shape[1], resample.weights(exp.X_val.shape[1])
    boot, pairs_read, runs = {}, set(), {}
    for norm, name in ((False, "njtc"), (True, "nnjtc")):
        heat = np.full((L + 1, L + 1), np.nan)
        np.fill_diagonal(heat, 1.0)
        sets = {
            which: registry.trained_pairs(exp, rank, norm, seed, which, whole_split=True) for which in out["pair_sets"]
        }
        listed = {which: [tuple(int(x) for x in p) for p in r["pairs"]] for which, r in sets.items()}
        union = sorted(set().union(*listed.values()))  # each source layer's factorisation once for both sets
        optimum = dict(zip(union, _pair_optimum(exp, union, rank, norm) / n))
        ratio = []
        for which, r in sets.items():
            runs[seed_key(lens_label(name, rank), seed) + ("" if which == "to-last" else f" ({which} pairs)")] = (
                converged(r)
            )
            pairs = listed[which]
            if which == "to-last":
                part, resampled = _pair_r2(exp, r["M"], r["c"], pairs, boot=w)
                boot[f"r2_to_last_{name}"] = np.round(resampled[:, None, :], 6)  # [resamples, 1 seed, L]
            else:
                part = _pair_r2(exp, r["M"], r["c"], pairs)
            for a, b in pairs:
                heat[a, b] = part[a, b]
            pairs_read |= set(pairs)
            ratio.append(np.asarray(r["train_loss"]) / np.array([optimum[p] for p in pairs]))
        rows, resampled_rows = [heat[:L, L]], [boot[f"r2_to_last_{name}"][:, 0, :]]
        for other in seeds[1:]:  # the other seeds' maps to the last layer
            r = registry.trained_pairs(exp, rank, norm, other, "to-last", whole_split=True)
            runs[seed_key(lens_label(name, rank), other)] = converged(r)
            pairs = [tuple(int(x) for x in p) for p in r["pairs"]]
            part, resampled = _pair_r2(exp, r["M"], r["c"], pairs, boot=w)
            rows.append(np.array([part[a, b] for a, b in pairs]))
            resampled_rows.append(np.round(resampled, 6))
            ratio.append(np.asarray(r["train_loss"]) / np.array([optimum[p] for p in pairs]))
        boot[f"r2_to_last_{name}"] = np.stack(resampled_rows, axis=1)  # [resamples, seeds, L]
        out[f"r2_{name}"] = heat
        out[f"r2_to_last_{name}"] = np.stack(rows)  # [seeds, L]
        ratio = np.concatenate(ratio)
        out[f"loss_ratio_min_{name}"] = float(np.min(ratio))
        out[f"loss_ratio_median_{name}"] = float(np.median(ratio))
    out["pairs"] = len(pairs_read)
    out["converged"] = runs
    out["boot"] = boot
    return out


def fig3(exp, seeds=SEEDS, n_val: int | None = None) -> dict:
    """N-NJTC Figure 3: Precision@1 and surprisal jumping to the last layer for id, mat, the closed-form rank-r
    maps and NJTC/N-NJTC (every seed of ``seeds``; ``n_val``: on the first validation samples only)."""
    rank = rank_for(exp.adapter.d)
    fitted = _fitted(exp, ("id", "mat", "rrr", "arrr", "njtc", "nnjtc"), seeds)
    return {
        "rank": rank,
        "seeds": list(seeds),
        "curves": _curves(
            exp,
            fitted,
            boot={"id": ("p@1", "s_n"), "mat": ("p@1",), "njtc": ("p@1",), "nnjtc": ("p@1", "s_n")},
            n_val=n_val,
        ),
        "converged": _runs_converged(fitted),
    }


def rank_sweep(exp, ranks=SWEEP_RANKS) -> dict:
    """r² (every layer, to the last) and Precision@1 (at L/4, L/2, 3L/4) of the closed-form rank-r maps, with and
    without intercept, for ``ranks`` and the full width; parameters 2dr. One eigendecomposition per layer."""
    L, d = exp.n_layers, exp.adapter.d
    ranks = sorted({r for r in ranks if r < d} | {d})
    at = [L // 4, L // 2, 3 * L // 4]
    out = {"ranks": ranks, "params": [2 * d * r for r in ranks], "d": d, "layers_p1": at}
    for affine, name in ((False, "rrr"), (True, "arrr")):
        r2 = np.zeros((len(ranks), L))
        p1 = np.zeros((len(ranks), len(at)))
        fams = closed_form.families(exp, affine)
        sweep = []
        for i, r in enumerate(ranks):
            Ms, cs = zip(*(f.split(r) for f in fams))
            ln = Lens(name, {"rank": r}, np.stack(Ms), None if cs[0] is None else np.stack(cs), L, d)
            for layer in range(L):
                r2[i, layer] = linear.r2_score(exp.X_val[L], ln.transform(exp.X_val[layer], layer))
            sweep.append(ln)
        for i, res in enumerate(evaluated_many(exp, sweep, at)):
            p1[i] = res["precision"][1].mean(1)
        out[f"r2_{name}"], out[f"p1_{name}"] = r2, p1
    ident = evaluated(exp, lens(exp, "id"), at)["precision"][1].mean(1)
    out["p1_id"] = ident
    # r90: the smallest rank whose Precision@1 closes 90% of the id -> mat gap, where mat is above id
    full = out["p1_rrr"][-1]
    out["r90"] = [
        next((r for r, v in zip(ranks, out["p1_rrr"][:, j]) if v >= ident[j] + 0.9 * (full[j] - ident[j])), None)
        if full[j] > ident[j]
        else None
        for j in range(len(at))
    ]
    return out


def grid(exp, names=GRID, n_val: int | None = None, tuned_seeds=(0,)) -> dict:
    """Objective against form: KL, r², Precision@1 and the bias of each lens of ``names`` (the stand-in of GPT2-XL:
    :data:`GRID`), with the tuned lenses' training record (steps, doublings, last-10% improvement); ``n_val``: on
    the first validation samples only; ``tuned_seeds``: the training runs of the tuned lens (``tuned/seedN`` for
    the ones after the first, listed in ``seeds``), which the claims that read it average over."""
    fitted = _fitted(exp, names)
    if "tuned" in names:
        fitted.update({seed_key("tuned", s): lens(exp, "tuned", s) for s in tuned_seeds[1:]})
    curves = _curves(
        exp,
        fitted,
        boot={"id": ("p@1", "kl", "ce_gold"), "tuned": ("p@1", "kl", "ce_gold"), "mat+b": ("kl",)},
        n_val=n_val,
    )
    cards = {}
    for name in (n for n in names if registry.LENSES[n].method is registry.Method.TUNED_LENS):
        rec = fitted[name].record
        cards[name] = {
            k: float(np.asarray(rec[k]).reshape(-1)[0]) for k in ("steps", "doublings", "improvement") if k in rec
        }
        cards[name]["train_kl_start"] = float(np.asarray(rec["log"])[0].sum()) if "log" in rec else None
        cards[name]["train_kl_end"] = float(np.asarray(rec["log"])[-1].sum()) if "log" in rec else None
    return {
        "curves": curves,
        "training": cards,
        "converged": _runs_converged(fitted),
        **({"seeds": list(tuned_seeds)} if len(tuned_seeds) > 1 else {}),
    }


def compare_tuned(s: Setting) -> dict:
    """The tuned lens against id and mat on every model of the setting's profile: KL and Precision@1 per layer."""
    p = s.profile
    out = {}
    for model in p.models:
        exp = shared(model, p.main_domain, p, s.n_train, s.n_val, s.seed)
        out[model] = _curves(exp, _fitted(exp, ("id", "mat", "tuned")))
    return {"models": out}


def table(exp, names, with_exit: bool) -> dict:
    """Every lens in ``names`` × layer × metric, with parameters per layer; at all layers with the early-exit curve
    and the oracle frontier (``with_exit``), else at L/4, L/2 and 3L/4 only (the real model: each layer costs a
    readout over a 49k vocabulary)."""
    L = exp.n_layers
    layers = None if with_exit else [L // 4, L // 2, 3 * L // 4]
    rows = {}
    fitted = [lens(exp, name) for name in names]
    for ln, res in zip(fitted, evaluated_many(exp, fitted, layers)):
        row = {
            "method": ln.spec.method,
            "objective": ln.spec.objective,
            "params": ln.params(),
            "params_share": ln.params() / exp.adapter.d**2,
            **evaluate.curves(res),
        }
        if with_exit:
            row["exit"] = evaluate.exit_curves(exp, res)
        # the real table: how its GPU-trained lens was trained
        if ln.spec.method is registry.Method.TUNED_LENS and not with_exit:
            row["training"] = {
                k: kind(np.asarray(ln.record[k]).reshape(-1)[0])
                for k, kind in (("steps", int), ("doublings", int), ("improvement", float), ("n_train", int))
                if k in ln.record
            }
        rows[ln.label] = row
    return {
        "n_layers": L,
        "d": exp.adapter.d,
        "rank": rank_for(exp.adapter.d),
        "quarters": [L // 4, L // 2, 3 * L // 4],
        "lenses": rows,
    }


def exit_table(exp, names, n_val: int | None = None) -> dict:
    """Each lens of ``names`` read at every layer: section 5's early-exit curve with its oracle frontier
    (:func:`jtc_utils.lenses.evaluate.exit_curves`), in the layout of the lens table (``lenses`` by label, each with
    its ``method`` and ``exit``); ``n_val``: on the first validation samples only."""
    fitted = [lens(exp, name) for name in names]
    rows = {
        ln.label: {"method": ln.spec.method, "exit": evaluate.exit_curves(exp, res)}
        for ln, res in zip(fitted, evaluated_many(exp, fitted, None, n_val))
    }
    return {"n_layers": exp.n_layers, "rank": rank_for(exp.adapter.d), "lenses": rows}


def _real_table(exp, profile: Profile) -> dict:
    """The all-lenses table of the real model at three depths; a reader's own model has no tuned lens trained ahead
    of time (lenses.train)."""
    names = REAL_LENSES if profile.name == "real" else tuple(n for n in REAL_LENSES if n != "tuned")
    return table(exp, names, with_exit=False)


def _on_experiment(of, read_val=None):
    """A figure computed from the experiment of its role: ``of(exp, profile)`` gives its numbers; ``read_val``: how
    many validation samples it reads out (default: all of them)."""

    def figure(fig: str, s: Setting) -> tuple[dict, dict]:
        exp = for_role(s.profile, LENS_FIGURES[fig], s.n_train, s.n_val, s.seed)
        data = of(exp, s.profile)
        params = {
            "profile": s.profile.name,
            "model": exp.model_name,
            "paper_model": profiles.PAPER_NAME.get(exp.model_name, exp.model_name),
            "domain": exp.domain,
            "n_train": len(exp.train),
            "n_val": len(exp.val) if read_val is None else min(read_val, len(exp.val)),
            "seed": s.seed,
        }
        return {**data, **linear.regime_note(len(exp.train), exp.adapter.d)}, params

    return figure


def _tuned_comparison(fig: str, s: Setting) -> tuple[dict, dict]:
    return compare_tuned(s), {
        "profile": s.profile.name,
        "model": "every zoo model",
        "domain": s.profile.main_domain,
        "n_train": s.n_train,
        "n_val": s.n_val,
        "seed": s.seed,
    }


# the real model's every-layer figures, read out on its first REAL_VAL validation samples (its lenses trained
# REAL_SEEDS times)
EVERY_LAYER_REAL = {
    "real_nnjtc_fig3": _on_experiment(lambda exp, p: fig3(exp, seeds=REAL_SEEDS, n_val=REAL_VAL), REAL_VAL),
    "real_tl_grid": _on_experiment(lambda exp, p: grid(exp, REAL_GRID, n_val=REAL_VAL), REAL_VAL),
    "real_lens_exit": _on_experiment(lambda exp, p: exit_table(exp, REAL_EXIT, n_val=REAL_VAL), REAL_VAL),
}
# figure id -> the function that computes its numbers and parameters, (fig, setting)
COMPUTE = {
    "nnjtc_fig2": _on_experiment(lambda exp, p: fig2(exp)),
    "real_nnjtc_fig2": _on_experiment(lambda exp, p: fig2_real(exp, REAL_SEEDS)),
    "nnjtc_fig3": _on_experiment(lambda exp, p: fig3(exp)),
    "ext_nnjtc_rank": _on_experiment(lambda exp, p: rank_sweep(exp)),
    "tl_grid": _on_experiment(lambda exp, p: grid(exp, tuned_seeds=TUNED_SEEDS)),
    "lens_table": _on_experiment(lambda exp, p: table(exp, TABLE_LENSES, with_exit=True)),
    "real_lens_table": _on_experiment(_real_table),
    "tl_cmp": _tuned_comparison,
    **EVERY_LAYER_REAL,
}


# the real model's figures that the tests reproduce: computed once more at the real subset (the sizes `make test`
# re-executes the pages at) and stored as book/data/real_lens_check.json (:func:`real_check`)
REAL_CHECK = ("real_nnjtc_fig2", *EVERY_LAYER_REAL)


def real_check(fig: str, s: Setting) -> tuple[dict, dict]:
    """``(data, params)`` of the check the tests reproduce (``real_lens_check``): every figure of :data:`REAL_CHECK`
    computed on the first
    :data:`jtc_utils.core.data.profiles.REAL_SUBSET` training and validation sentences of the real model (its low-rank
    and tuned lenses as trained on the whole split: the build never trains them)."""
    n_train, n_val = profiles.REAL_SUBSET
    data = {f: compute(f, s.sized(n_train, n_val))[0] for f in REAL_CHECK}
    return data, {"profile": "real", "figures": list(REAL_CHECK), "n_train": n_train, "n_val": n_val, "seed": s.seed}


RECORDS = {"real_lens_check": real_check}  # what the chapter saves beside its figures (registered with them)


def compute(fig: str, s: Setting) -> tuple[dict, dict]:
    """``(data, params)`` of a lens-chapter figure under setting ``s`` (:data:`COMPUTE`; see the module docstring)."""
    if fig not in LENS_FIGURES:
        raise ValueError(f"unknown lens figure {fig!r}; known: {', '.join(LENS_FIGURES)}")
    return COMPUTE[fig](fig, s.on(figure_registry.profile_of(fig, s.profile)))


# the chapter's figures for a reader's own model (the custom book, jtc_utils.book.custom.plan): page -> kind -> ids
CUSTOM_FIGURES = {"lenses": {CAUSAL: ("real_lens_table",)}}
