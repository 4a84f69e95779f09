"""The paper's statistical regime: how many training vectors per dimension ``mat`` is fitted with. The paper's 9,000
vectors are 11.7 per dimension for GPT-2 and 5.6 for GPT-2 XL; the stand-ins are 8-30 times narrower, so they get
94-188, where a least-squares map barely overfits. :func:`sample_size_curve` gives ``mat``'s held-out (and training)
r² and Precision@1 fitted on the first n training vectors, from below one per dimension to all; and
:func:`paper_regime_claims` judges the claims on figures recomputed at the paper's vectors per dimension
(``n_train = 9000 · d_stand-in / d_paper``). The first n vectors are a seeded random subset of the 9,000.
"""

from __future__ import annotations

import warnings

import numpy as np

from jtc_utils.core.infra import cache
from jtc_utils.core.analysis import linear, readout
from jtc_utils.core.models import models
from jtc_utils.core.data import profiles
from jtc_utils.core.analysis.experiment import shared
from jtc_utils.core.data.profiles import Profile
from jtc_utils.core.data.setting import Setting
from jtc_utils.evidence import claims, figure_registry, findings
from jtc_utils.evidence.registry import Caption, View, legend_below

from . import claims as jtc_claims
from . import figures

PAPER_TRAIN = 9000
# the widths of the paper's models (reproduction spec section 2)
PAPER_WIDTH = {
    "gpt2": 768,
    "gpt2-medium": 1024,
    "gpt2-large": 1280,
    "gpt2-xl": 1600,
    "bert-base-uncased": 768,
    "bert-large-uncased": 1024,
}
# training vectors per dimension on the curve (the paper's and the full set are added per model)
RATIOS = (0.25, 0.5, 1, 2, 4, 8, 16, 32, 64)
REGIME_PREFIX = "regime_"


def paper_ratio(model: str) -> float:
    """Training vectors per dimension in the paper for the model that ``model`` stands in for (or is)."""
    paper = profiles.PAPER_NAME.get(model, model)
    if paper not in PAPER_WIDTH:
        raise ValueError(
            f"{model!r} is not one of the paper's models or their stand-ins; known: "
            f"{', '.join(PAPER_WIDTH)} and {', '.join(profiles.PAPER_NAME)}"
        )
    return PAPER_TRAIN / PAPER_WIDTH[paper]


def paper_n_train(model: str, d: int) -> int:
    """Training vectors that give a model of width ``d`` the paper's vectors per dimension for ``model``."""
    return max(1, round(paper_ratio(model) * d))


def _sizes(d: int, n_full: int, ratios, extra) -> list[int]:
    return sorted({min(n_full, max(1, round(r * d))) for r in (*ratios, *extra)} | {n_full})


def sample_size_curve(exp, ratios=RATIOS) -> dict:
    """r² of ``mat`` l -> L on the validation and on its own training vectors, and its Precision@1, for every
    source layer l, fitted on the first n training vectors for each n in ``ratios`` · d, the paper's ratio for the
    model and all of them; with ``id`` (which fits nothing) for reference. Cached on disk with the experiment's
    fits key and the sizes."""
    L, d = exp.n_layers, exp.adapter.d
    sizes = _sizes(d, len(exp.train), ratios, [paper_ratio(exp.model_name)])
    key = {**exp.key("layer_pair_fits"), "what": "sample_size", "sizes": sizes}
    arrays = cache.cached("sample_size", key, lambda: _curve(exp, sizes))
    return {
        "model": exp.model_name,
        "paper_model": profiles.PAPER_NAME.get(exp.model_name, exp.model_name),
        "domain": exp.domain,
        "d": d,
        "n_layers": L,
        "n_full": len(exp.train),
        "paper_ratio": paper_ratio(exp.model_name),
        "n_train": sizes,
        "ratio": [n / d for n in sizes],
        **{k: arrays[k].tolist() for k in ("r2_mat", "r2_mat_train", "p1_mat")},
        "r2_id": np.asarray(exp.layer_r2()["r2_id"])[:L, L].tolist(),
        "p1_id": exp.predictions["precision"]["id"][1][:L].mean(1).tolist(),
    }


def _curve(exp, sizes) -> dict:
    L = exp.n_layers
    final = readout.final_stats(exp, ks=(1,))
    out = {"r2_mat": [], "r2_mat_train": [], "p1_mat": []}
    for n in sizes:
        with warnings.catch_warnings():  # below one vector per dimension the minimum-norm solution is the point
            warnings.simplefilter("ignore", linear.UnderdeterminedFitWarning)
            fits = linear.layer_pair_r2(exp.X_train[:, :n], exp.X_val, train_r2=True)
        top1 = np.zeros((L, exp.X_val.shape[1]), dtype=np.int64)
        for layer in range(L):
            H = (exp.X_val[layer].astype(np.float64) @ fits["maps"][layer]).astype(np.float32)
            top1[layer] = readout.readout_stats(exp.adapter, H)[0][:, 0]
        out["r2_mat"].append(fits["r2_mat"][:L, L])
        out["r2_mat_train"].append(fits["r2_mat_train"][:L, L])
        out["p1_mat"].append(readout.evaluate(exp, top1, ks=(1,), final=final)["precision"][1].mean(1))
    return {k: np.asarray(v) for k, v in out.items()}


def crossing(curve: dict, what: str = "r2") -> list[float | None]:
    """Per source layer, the fewest vectors per dimension on the curve from which ``mat`` scores at least as well
    as ``id`` at every larger size (``what``: ``"r2"`` held-out r² or ``"p1"`` Precision@1); None where it never
    does."""
    m = np.asarray(curve["r2_mat" if what == "r2" else "p1_mat"])  # [sizes, L]
    ref = np.asarray(curve["r2_id" if what == "r2" else "p1_id"])
    out = []
    for layer in range(m.shape[1]):
        ok = m[:, layer] >= ref[layer]
        tail = np.flatnonzero(~ok)
        first = 0 if not len(tail) else tail[-1] + 1
        out.append(curve["ratio"][first] if first < len(ok) else None)
    return out


def summary(curve: dict) -> list[dict]:
    """For the paper's vectors per dimension and for the full set: the mean over source layers of ``mat``'s
    held-out and training r² to the last layer and of its Precision@1, and the share of layers where ``mat`` beats
    ``id`` on each (one row per size)."""
    rows = []
    for label, n in (("paper's ratio", paper_n_train(curve["model"], curve["d"])), ("all", curve["n_full"])):
        i = curve["n_train"].index(min(n, curve["n_full"]))
        r2, r2t, p1 = (np.asarray(curve[k][i]) for k in ("r2_mat", "r2_mat_train", "p1_mat"))
        rows.append(
            {
                "model": curve["model"],
                "vectors": label,
                "n_train": curve["n_train"][i],
                "per dimension": curve["ratio"][i],
                "r2 mat (held-out)": float(r2.mean()),
                "r2 mat (training)": float(r2t.mean()),
                "r2 mat > id": float(np.mean(r2 > curve["r2_id"])),
                "P@1 mat": float(p1.mean()),
                "P@1 mat > id": float(np.mean(p1 > curve["p1_id"])),
            }
        )
    return rows


def regime_figure(fig: str, s: Setting) -> tuple[dict, dict]:
    """``regime_<fig>``: JTC figure ``<fig>`` recomputed under ``s`` with the paper's vectors per dimension for the
    figure's model (:func:`paper_n_train`: its training size, in place of the setting's)."""
    base = fig.removeprefix(REGIME_PREFIX)
    model = figures.setting(base, s.profile)[1]
    return figures.compute(base, s.sized(paper_n_train(model, models.adapter(model).d), s.n_val))


def regime_getter(results: dict, profile: Profile | str = "tiny", params: dict | None = None):
    """A claims ``get`` that computes each figure a claim reads, once, in the paper's regime (:func:`regime_figure`),
    keeping the numbers in ``results`` and the parameters that produced them in ``params`` (figure name -> dict)."""
    s = Setting.of(profile)
    return claims.computing_getter(
        lambda fig: regime_figure(REGIME_PREFIX + fig, s), results, params, prefix=REGIME_PREFIX
    )


# the sample-size curves' records: each is read on the model and text of a figure of section 3
SAMPLE_SIZE_OF = {"sample_size_gpt12": "fig22", "sample_size_gpt48": "fig2"}


def sample_size_record(fig: str, s: Setting) -> tuple[dict, dict]:
    """``sample_size_<role>``: :func:`sample_size_curve` on the experiment of the role's section-3 figure."""
    _, model, domain = figures.setting(SAMPLE_SIZE_OF[fig], s.profile)
    exp = shared(model, domain, s.profile, s.n_train, s.n_val, s.seed)
    return sample_size_curve(exp), {
        "profile": s.profile.name,
        "model": exp.model_name,
        "domain": exp.domain,
        "seed": s.seed,
    }


def stored_getter(fig: str):
    """A claims ``get`` of the figures in the paper's regime as the claims page saved them (``regime_<fig>``)."""
    return claims.default_get(REGIME_PREFIX + fig)


RECORDS = {
    **{REGIME_PREFIX + f: regime_figure for f in figures.FIGURES if not f.startswith(figure_registry.REAL_PREFIX)},
    **dict.fromkeys(SAMPLE_SIZE_OF, sample_size_record),
}


def paper_regime_claims(
    profile: Profile | str = "tiny", results: dict | None = None, params: dict | None = None
) -> list[dict]:
    """Every claim of the paper judged at the paper's vectors per dimension (see :func:`regime_getter`);
    ``results`` and ``params`` collect the figures it computed."""
    profile = profiles.get(profile)  # once: the getter and the claims receive the same object
    results = {} if results is None else results
    return jtc_claims.all_claims(get=regime_getter(results, profile, params), profile=profile)


def compare(full: list[dict], regime: list[dict]):
    """The shape verdicts of the same claims at 9,000 training vectors and at the paper's vectors per dimension,
    side by side, with our numbers in each regime."""
    import pandas as pd

    by_id = {r["id"]: r for r in regime}
    return pd.DataFrame(
        [
            {
                "claim": r["id"],
                "at 9,000": findings.shape_verdict(r),
                "at the paper's ratio": findings.shape_verdict(by_id[r["id"]]),
                "ours at 9,000": r["ours"],
                "ours at the paper's ratio": by_id[r["id"]]["ours"],
            }
            for r in full
            if r["id"] in by_id
        ]
    ).set_index("claim")


R2_FLOOR = -0.5  # an r² below it is drawn at it (an interpolating map's r² runs to large negative values)


def plot_curves(curves: list[dict], what: str = "r2", fractions=(0.25, 0.5, 0.75), r2_floor: float = R2_FLOOR):
    """One panel per model: held-out r² (``what="r2"``) or Precision@1 (``"p1"``) of ``mat`` from three source
    layers (at ``fractions`` of the depth) against training vectors per dimension, ``id`` dashed in the same colour,
    the paper's ratios for GPT-2 and GPT-2 XL dotted and the stand-in's full 9,000 solid. r² below ``r2_floor`` is
    drawn at the floor (the axis says so)."""
    import matplotlib.pyplot as plt

    if what not in ("r2", "p1"):
        raise ValueError(f"what must be 'r2' or 'p1', got {what!r}")
    from matplotlib.lines import Line2D

    m, ref = ("r2_mat", "r2_id") if what == "r2" else ("p1_mat", "p1_id")
    papers = {"gpt2": ":", "gpt2-xl": "-."}  # the paper's ratios, told apart by their line style
    depth = {0.25: "a quarter", 0.5: "half", 0.75: "three quarters"}
    fig, axes = plt.subplots(1, len(curves), figsize=(4.6 * len(curves), 4.6), squeeze=False)
    for ax, c in zip(axes[0], curves):
        x = np.asarray(c["ratio"])
        for i, frac in enumerate(fractions):
            layer = round(frac * c["n_layers"])
            y = np.asarray(c[m])[:, layer]
            if what == "r2":
                y = np.maximum(y, r2_floor)
            ax.plot(x, y, "o-", color=f"C{i}", ms=3)
            ax.axhline(c[ref][layer], color=f"C{i}", ls="--", lw=1)
        for paper, ls in papers.items():
            ax.axvline(paper_ratio(paper), color="0.4", ls=ls, lw=1.2)
        ax.axvline(c["n_full"] / c["d"], color="k", lw=0.8)
        ax.set(
            xscale="log",
            xlabel="training vectors per dimension",
            ylabel="held-out r² to the last layer" if what == "r2" else "Precision@1",
            title=f"{c['model']} (for {c['paper_model']}, d = {c['d']})",
            ylim=(r2_floor - 0.05, 1.02) if what == "r2" else (-0.02, 1.02),
        )
    # one legend under the panels, filled column by column: the source layers (the same share of each model's
    # depth), the maps, the chapters' ratio and the paper's
    layers = [
        Line2D(
            [],
            [],
            color=f"C{i}",
            lw=3,
            label=f"{depth.get(frac, f'{frac:g} of the')} deep (layer{'s' if len(curves) > 1 else ''} "
            + ", ".join(str(round(frac * c["n_layers"])) for c in curves)
            + ")",
        )
        for i, frac in enumerate(fractions)
    ]
    keys = [
        Line2D([], [], color="0.25", marker="o", ms=3, label="mat"),
        Line2D([], [], color="0.25", ls="--", lw=1, label="id"),
        Line2D([], [], color="k", lw=0.8, label="the chapters' ratio"),
        *(Line2D([], [], color="0.4", ls=ls, lw=1.2, label=f"paper: {paper}") for paper, ls in papers.items()),
    ]
    legend_below(fig, layers + keys)
    return fig


def _sample_size_view(what: str, see: str, alt: str) -> View:
    """Both models' curves in one figure (``also``: the other models' numbers), linking both records."""
    return View(
        lambda d, p, also=(): plot_curves([d, *also], what),
        lambda d, p, also=(): Caption(
            "beyond the paper: the paper's regime",
            see.format(n_full=d["n_full"], floor=R2_FLOOR),
            alt,
            figs=tuple(SAMPLE_SIZE_OF) if also else (),
        ),
    )


# the sample-size curves' drawings: held-out r² (section 3) and Precision@1 (section 4), the stand-ins of GPT-2 and
# GPT-2 XL side by side
DRAWINGS = {
    "sample_size_gpt12": {
        "r2": _sample_size_view(
            "r2",
            "Held-out r² of mat from three source layers to the last layer against the training vectors per "
            "dimension it was fitted on, with id (dashed) for reference (an r² below {floor} is drawn at "
            "{floor}). Below one vector per dimension mat interpolates its training set and generalises worst; "
            "the grey lines are the paper's ratios (GPT-2 dotted, GPT-2 XL dash-dotted), the solid black line the "
            "ratio of the stand-in's chapters ({n_full:,} training vectors).",
            "Two log-x line charts of held-out r-squared against training vectors per dimension, one per model, three "
            "source layers each, with the id reference as dashed lines",
        ),
        "p1": _sample_size_view(
            "p1",
            "Precision@1 of mat from three source layers against the training vectors per dimension it was fitted on, "
            "with id (dashed) for reference; the grey lines are the paper's ratios (GPT-2 dotted, GPT-2 XL "
            "dash-dotted), the solid black line the ratio of the stand-in's chapters ({n_full:,} training vectors).",
            "Two log-x line charts of Precision@1 against training vectors per dimension, one per model, three source "
            "layers each, with the id reference as dashed lines",
        ),
    }
}
