"""The rules of the JTC claims on the shortcut's implications: early exit (section 5) and sub-module maps (section 6).

Each function takes ``get`` (a figure id -> its numbers) and returns a
:func:`jtc_utils.evidence.claims.claim_record`, as the rules of :mod:`jtc_utils.jtc.shortcut_claims` do.
"""

from __future__ import annotations

import numpy as np

from jtc_utils.core.analysis.early_exit import curve_points
from jtc_utils.evidence import figdata, verdicts
from jtc_utils.evidence.claims import NotComputed, available, claim_record, magnitude_part
from jtc_utils.evidence.instruments import state_check
from jtc_utils.jtc.shortcut_claims import scaled_layer


def _saved(get, fig):
    d = get(fig)
    return {m: d["saved"][m] for m in ("mat", "id")}, d["n_layers"]


# the paper's layers saved at 95% P@1 out of 24, and the shares it states (spec 6)
PAPER_SAVED = {"fig8": {"mat": (3.3, 0.138), "id": (1.4, 0.059)}, "fig9": {"mat": (4.8, 0.20), "id": (3.5, 0.146)}}
_EE_QUOTE = (
    "aiming at 95% average precision, mat saves ~3.3 (13.8%) layers in GPT-2 compared to only ~1.4 (5.9%) "
    "layers by id, and ~4.8 (20%) layers in BERT versus ~3.5 (14.6%) layers by id."
)


def _ee_claim(cid, fig, get):
    s, L = _saved(get, fig)
    (paper_mat, pm), (paper_id, pi) = PAPER_SAVED[fig]["mat"], PAPER_SAVED[fig]["id"]
    sm, si = s["mat"]["share"], s["id"]["share"]
    model = "GPT-2" if fig == "fig8" else "BERT"
    about = verdicts.value("about")
    return claim_record(
        cid,
        f"{model}: at 95% Precision@1, early exit with mat saves more layers than with id",
        f"{fig.replace('fig', 'Fig ')}",
        f"mat {s['mat']['saved']:.2f} vs id {s['id']['saved']:.2f} of {L}",
        sm - si,
        "share of layers saved by mat - by id > 0",
        magnitude_part(
            f"mat {paper_mat} ({pm:.1%}) vs id {paper_id} ({pi:.1%}) of 24",
            f"mat {sm:.1%} vs id {si:.1%}",
            abs(sm - pm) <= about and abs(si - pi) <= about,
            f"each share of layers saved within {about} of the paper's",
        ),
        quote=_EE_QUOTE,
        words=("better", "about"),
        unit="share of layers",
        statistic="saved_gain",
    )


def c8(get):
    return _ee_claim("C8", "fig8", get)


def c9(get):
    return _ee_claim("C9", "fig9", get)


def _interp_early(d, m):
    x, y = curve_points(figdata.as_array(d["early"][m]["x"]), figdata.as_array(d["early"][m]["y"]))
    L = d["n_layers"]
    grid = np.arange(1, L)
    grid = grid[(grid >= x.min()) & (grid <= x.max())]
    return grid, np.interp(grid, x, y)


def c10(get):
    parts, gaps = [], []
    for f, d in available(get, ("fig8", "fig9", "fig20", "fig21")).items():
        for m in ("mat", "id"):
            grid, y = _interp_early(d, m)
            gap = float(np.mean(y - figdata.as_array(d["fixed"][m])[grid])) if len(grid) else np.nan
            gaps.append(gap)
            parts.append(f"{f} {m} {gap:+.3f}")
    return claim_record(
        "C10",
        "early exit beats fixed exit, in both models and for both mappings",
        "Figs 8, 9, 20, 21",
        "mean P@1 of early minus fixed exit over the layer counts both cover: " + ", ".join(parts),
        min(gaps),
        "the mean over the integer layer counts both curves cover of P@1(early) - P@1(fixed) > 0, "
        "for every model and mapping (margin: the smallest)",
        quote="Notably, in both models and using each of the two mapping methods, early exit obtains better "
        "results than fixed layer exit, as expected.",
        words=("every", "better"),
        unit="P@1",
        statistic="early_vs_fixed",
    )


def c11(get):
    g, _ = _saved(get, "fig8")
    b, _ = _saved(get, "fig9")
    dg = g["mat"]["share"] - g["id"]["share"]
    db = b["mat"]["share"] - b["id"]["share"]
    about = verdicts.value("about")
    return claim_record(
        "C11",
        "mat saves layers on top of id's early exit, in GPT-2 and in BERT",
        "abstract",
        f"GPT-style {dg:+.1%}, BERT-style {db:+.1%}",
        min(dg, db),
        "share of layers saved by mat - by id > 0 in both models (margin: the smaller)",
        magnitude_part(
            "+7.9% (GPT-2), +5.4% (BERT)",
            f"{dg:+.1%}, {db:+.1%}",
            abs(dg - 0.079) <= about and abs(db - 0.054) <= about,
            f"each within {about} of the paper's",
        ),
        quote="when aiming, for example, at retention of 95% accuracy, our approach saves additional 7.9% "
        "layers for GPT-2 and 5.4% layers for BERT, on top of the savings of the original approach.",
        words=("every", "better", "about"),
        unit="share of layers",
        statistic="saved_gain",
    )


def _parts_p1(d):
    return {m: figdata.as_array(c["p@1"]) for m, c in d["curves"].items()}


def _reads_state(d, layers, mappings=("mat_attn", "mat_ln1_ln2", "mat_ffn")) -> list:
    """The check that each sub-module cast a claim reads depends on its start state at the start layers it reads
    (:func:`jtc_utils.evidence.instruments.state_check`; none for a figure saved before it counted the top-1s)."""
    distinct = d.get("distinct_top1")
    if distinct is None:
        return []
    return [state_check({m: distinct[m] for m in mappings}, [int(x) for x in layers])]


def c12a(get):
    d = get("fig10")
    L = d["n_layers"]
    start = scaled_layer(7, 24, L)
    p = _parts_p1(d)
    done = np.isfinite(p["mat_attn"])  # the start layers computed (all of them, but on the real model)
    done[:start] = False
    done[L:] = False
    if not done.any():  # a shallow model with every fifth start layer computed (a reader's own, say)
        raise NotComputed(f"no start layer from {start} to {L - 1} of its {L} layers was computed")
    gaps = {m: float((p[m][done] - p["mat"][done]).min()) for m in ("mat_attn", "mat_ln1_ln2", "mat_ffn")}
    return claim_record(
        "C12a",
        "from layer ~7 of 24 on, every sub-module map does better than mat (P@1)",
        "Fig 10",
        f"from l = {start} of {L}, smallest P@1 gain over mat: " + ", ".join(f"{m} {v:+.3f}" for m, v in gaps.items()),
        min(gaps.values()),
        f"P@1(sub-module map) - P@1(mat) > 0 for each map at every l in {start}..{L - 1} (margin: the smallest)",
        quote="from a certain layer (~7), all sub-module mappings achieve better results than the full-block "
        "mapping mat.",
        words=("every", "better", "depth"),
        unit="P@1",
        statistic="parts_vs_mat",
        checks=_reads_state(d, np.flatnonzero(done)),
    )


def c12b(get):
    d = get("fig10")
    L = d["n_layers"]
    p = _parts_p1(d)
    done = np.isfinite(p["mat_attn"][:L])
    means = {m: float(p[m][:L][done].mean()) for m in ("mat_attn", "mat_ln1_ln2", "mat_ffn")}
    gaps = {m: float(verdicts.substantially(means["mat_attn"], means[m])) for m in ("mat_ln1_ln2", "mat_ffn")}
    return claim_record(
        "C12b",
        "replacing attention is much less harmful than replacing the FFN or the layer norms",
        "Figs 10, 11, 34, 35",
        "mean P@1 over the computed layers: " + ", ".join(f"{m} {v:.3f}" for m, v in means.items()),
        min(gaps.values()),
        "mean P@1(mat_attn) above the mean P@1 of mat_ffn and of mat_ln1_ln2 by at least "
        "a fifth of the larger (margin: the smaller relative gap minus 0.2)",
        quote="the linear approximation of attention sub-modules is much less harmful than that of the FFN or "
        "layer normalization sub-modules.",
        words=("substantially", "better"),
        unit="relative gap - 0.2",
        statistic="attn_vs_parts",
        checks=_reads_state(d, np.flatnonzero(done)),
    )


def c12c(get):
    d = get("fig10")
    L = d["n_layers"]
    a, b = scaled_layer(5, 24, L), scaled_layer(8, 24, L)
    p = _parts_p1(d)
    done = np.flatnonzero(np.isfinite(p["mat_ln1_ln2"][: L + 1]))  # computed start layers: the nearest spanning a..b
    a, b = int(done[done <= a].max()), int(done[done >= b].min())
    rise = {m: float(v[b] - v[a]) for m, v in p.items()}
    ln = rise["mat_ln1_ln2"]
    margin = min(float(verdicts.substantially(ln, r)) for m, r in rise.items() if m != "mat_ln1_ln2")
    if ln <= 0:  # not an ascent at all
        margin = min(margin, ln)
    return claim_record(
        "C12c",
        "mat_ln1_ln2 rises sharply between layers 5 and 8 of 24",
        "Fig 10",
        f"rise of P@1 from l = {a} to {b}: " + ", ".join(f"{m} {v:+.3f}" for m, v in rise.items()),
        margin,
        "the rise of mat_ln1_ln2 over those layers (depth-scaled) is positive and above each other curve's "
        "rise by at least a fifth of the larger (margin: the smallest relative gap minus 0.2)",
        quote="remark the sharp ascent of the results of the layer normalization mapping between layers 5-8",
        words=("sharp", "substantially", "depth"),
        unit="relative gap - 0.2",
        statistic="ln_rise",
        checks=_reads_state(d, (a, b)),
    )
