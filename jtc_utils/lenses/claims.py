"""The claims of N-NJTC (N0-N8) and of the tuned lens (T1-T3, H1), each judged by one function from the lens
chapter's numbers (related-systems spec 3.4 and 5.3; the rules are the spec's, written from the papers' words).

Every function takes ``get`` (a figure id to its numbers; by default read from ``book/data``) and returns the record
``{id, claim, quote, paper, ours, holds, rule, magnitude}`` of :mod:`jtc_utils.jtc.claims`. Curves of the
gradient-descent lenses are averaged over their seeds before a rule is applied. Layer L (where every lens is the
true output) is left out of every "at every layer" rule.
"""

from __future__ import annotations

import numpy as np

from jtc_utils.evidence import verdicts
from jtc_utils.evidence.claims import claim_record, claims_records, registry
from jtc_utils.evidence.instruments import convergence_check, runs_check

from jtc_utils.evidence.verdicts import seed_key

from . import lowrank
from .base import lens_label

PAPER_D, PAPER_RANK = 1600, 16  # GPT2-XL at N-NJTC's rank floor(d/100)
PAPER_SHARE = 0.03  # "> 97% fewer parameters" (N-NJTC's abstract)
OPTIMUM_RTOL = 1e-3  # the float32 training's precision: a loss this close to the optimum is the optimum


def _c(d, label, key="p@1"):
    return np.asarray(d["curves"][label][key], dtype=float)


def _runs(d) -> list[dict]:
    """The instrument checks of a rule that reads NJTC and N-NJTC: their training runs (the figure's seeds), each
    converged (the figure's ``converged``: every run it reads)."""
    return [
        runs_check("NJTC and N-NJTC", len(d.get("seeds") or [0])),
        convergence_check("NJTC and N-NJTC", d.get("converged", {})),
    ]


def _tuned_runs(d) -> list[dict]:
    """The instrument checks of a rule that reads the tuned lens: its training runs (``tuned`` and each
    ``tuned/seedN`` curve of the grid), each converged."""
    keys = [seed_key("tuned", s) for s in (d.get("seeds") or [0]) if seed_key("tuned", s) in d["curves"]]
    done = d.get("converged", {})
    return [
        runs_check("the tuned lens", len(keys)),
        convergence_check("the tuned lens", {k: done.get(k, False) for k in keys}),
    ]


def _tuned(d, key):
    """The tuned lens's curve of ``key``, the mean over its training runs (the grid's seeds)."""
    rows = [_c(d, "tuned", key)] + [
        _c(d, seed_key("tuned", s), key) for s in (d.get("seeds") or [0])[1:] if seed_key("tuned", s) in d["curves"]
    ]
    return np.mean(rows, 0)


def _seed_mean(d, name, key="p@1"):
    rank = d["rank"]
    label = lens_label(name, rank)
    rows = [_c(d, label, key)] + [_c(d, seed_key(label, s), key) for s in d["seeds"][1:]]
    return np.mean(rows, 0)


def n0(get):
    share = lowrank.params(PAPER_D, PAPER_RANK, True) / PAPER_D**2
    t = get("lens_table")
    row = t["lenses"][f"nnjtc_{t['rank']}"]
    return claim_record(
        "N0",
        "N-NJTC needs > 97% fewer parameters than JTC's d×d map",
        "(2·16·1600 + 4·1600)/1600² = 2.25% of JTC's parameters for GPT2-XL",
        f"our count for GPT2-XL: {share:.2%}; on the model judged here (d = {t['d']}, r = {t['rank']}): "
        f"{row['params_share']:.1%}",
        share < PAPER_SHARE,
        "parameters 2dr + 4d at r = floor(d/100) for GPT2-XL below 3% of d² (arithmetic on the paper's "
        "sizes: a check, not evidence)",
        kind="check",
    )


def n1(get):
    d = get("nnjtc_fig3")
    L = len(d["curves"]["id"]["p@1"]) - 1
    half = np.arange(L + 1) <= L * verdicts.value("half")
    nn_p, id_p = _seed_mean(d, "nnjtc"), _c(d, "id")
    nn_s, id_s = _seed_mean(d, "nnjtc", "s_n"), _c(d, "id", "s_n")
    ok = (nn_p > id_p) & (nn_s < id_s)
    margin = min(float((nn_p - id_p)[half].min()), float((id_s - nn_s)[half].min()))
    return claim_record(
        "N1",
        "N-NJTC beats the logit lens (id) over at least the first half of the layers",
        "higher precision and lower surprisal than id up to at least half of the depth (Fig. 3)",
        f"P@1 above and surprisal below id at {int(ok[half].sum())} of {int(half.sum())} layers l <= L/2",
        margin,
        "every l <= L/2: P@1(N-NJTC) > P@1(id) and S(N-NJTC) < S(id), S the surprisal of the model's top token "
        "under the lens (margin: the smallest difference, in P@1 or nats)",
        words=("every", "better", "half"),
        unit="P@1 or nats",
        checks=_runs(d),
    )


def n2(get):
    d = get("nnjtc_fig3")
    mat = _c(d, "mat")[:-1]
    worst = min(float((mat - _seed_mean(d, n)[:-1]).min()) for n in ("njtc", "nnjtc"))
    return claim_record(
        "N2",
        "NJTC and N-NJTC stay below JTC (mat) everywhere",
        "JTC above both at every layer (Fig. 3)",
        f"smallest margin P@1(mat) - P@1(low rank) over l < L: {worst:+.3f}",
        worst,
        "every l < L: P@1(mat) > P@1(NJTC) and > P@1(N-NJTC) (margin: the smallest difference)",
        words=("every", "better"),
        unit="P@1",
        checks=_runs(d),
    )


def n3(get):
    d = get("nnjtc_fig3")
    id_p, nn = _c(d, "id")[:-1], _seed_mean(d, "nnjtc")[:-1]
    L = len(id_p)
    late = L - max(1, int(round(verdicts.value("late") * L)))
    gap = id_p[late:] - nn[late:]
    return claim_record(
        "N3",
        "the logit lens beats N-NJTC in the last layers",
        "id overtakes N-NJTC towards the end of the network (Fig. 3)",
        f"P@1(id) - P@1(N-NJTC) over the last quarter (l = {late}..{L - 1}): smallest {gap.min():+.3f}",
        gap.min(),
        "P@1(id) > P@1(N-NJTC) at every layer of the last quarter, l < L (margin: the smallest difference)",
        words=("every", "better", "late"),
        unit="P@1",
        checks=_runs(d),
    )


def n4(get):
    d = get("nnjtc_fig3")
    jump = {n: float(np.abs(np.diff(_seed_mean(d, n)[:-1])).max()) for n in ("nnjtc", "njtc")}
    return claim_record(
        "N4",
        "N-NJTC's curve is steadier than NJTC's",
        "N-NJTC stable across layers, unlike NJTC (Fig. 3)",
        f"largest change of P@1 between adjacent layers: N-NJTC {jump['nnjtc']:.3f}, NJTC {jump['njtc']:.3f}",
        jump["njtc"] - jump["nnjtc"],
        "max |P@1(l+1) - P@1(l)| over l + 1 < L smaller for N-NJTC than for NJTC (margin: the difference)",
        words=("better",),
        unit="P@1",
        checks=_runs(d),
    )


def n5(get):
    d = get("nnjtc_fig3")
    curves = {n: _seed_mean(d, n)[:-1] for n in ("njtc", "nnjtc")}
    curves.update({n: _c(d, n)[:-1] for n in ("id", "mat")})
    drop = {n: float((-np.diff(v)).max()) for n, v in curves.items()}
    margin = min(float(verdicts.substantially(drop["njtc"], v)) for n, v in drop.items() if n != "njtc")
    return claim_record(
        "N5",
        "NJTC can collapse (GPT2-XL)",
        "NJTC's precision falls sharply at some layers of GPT2-XL",
        "largest drop of P@1 between adjacent layers l + 1 < L: " + ", ".join(f"{n} {v:.3f}" for n, v in drop.items()),
        margin,
        "NJTC's largest adjacent drop above every other curve's by at least a fifth of the larger (margin: "
        "the smallest relative gap minus 0.2)",
        words=("sharp", "substantially"),
        unit="relative gap - 0.2",
        checks=_runs(d),
    )


def _row_decrease(r2):
    r2 = np.asarray(r2, dtype=float)
    steps = dec = 0
    for a in range(len(r2) - 2):
        row = r2[a, a + 1 :]
        steps += len(row) - 1
        dec += int((np.diff(row) < 0).sum())
    return dec / steps


def n6(get):
    d = get("nnjtc_fig2")
    L = len(d["r2_id"]) - 1
    fall = {m: _row_decrease(d[f"r2_{m}"]) for m in ("id", "mat")}
    late, early = {}, {}
    for m in ("njtc", "nnjtc"):
        r2 = np.asarray(d[f"r2_{m}"], dtype=float)
        late[m] = float(np.mean(np.asarray(d[f"r2_to_last_{m}"], dtype=float)))
        early[m] = float(np.mean([r2[a, a + 1] for a in range(L) if a <= L * verdicts.value("half")]))
    margin = min(min(v - verdicts.value("most") for v in fall.values()), min(late[m] - early[m] for m in late))
    return claim_record(
        "N6",
        "id and JTC r² fall with the length of the jump; NJTC/N-NJTC reach the last layers "
        "better than the next one from early layers",
        "Fig. 2 heatmaps",
        f"(a) r² falls along a row at {fall['id']:.0%} (id) and {fall['mat']:.0%} (mat) of the steps; (b) mean "
        f"r² to the last layer {late['njtc']:.2f} / {late['nnjtc']:.2f} vs l -> l+1 in the first half "
        f"{early['njtc']:.2f} / {early['nnjtc']:.2f} (NJTC / N-NJTC)",
        margin,
        "(a) r² decreases along a row at more than half the steps, for id and mat; (b) mean_l r²(l -> L) > "
        "mean_{l<=L/2} r²(l -> l+1) for NJTC and N-NJTC (margin: the smallest, in share or r²; over several "
        "training runs the verdict reads each run's margin, and a single run's interval resamples the r² to the "
        "last layer, the heatmaps held fixed)",
        words=("most", "better", "every", "half"),
        unit="share - 0.5 or r²",
        checks=_runs(d),
    )


def n7(get):
    d = get("nnjtc_fig2")
    m = {n: float(np.mean(np.asarray(d[f"r2_to_last_{n}"], dtype=float))) for n in ("njtc", "nnjtc")}
    return claim_record(
        "N7",
        "N-NJTC reaches the last layers better than NJTC",
        "Fig. 2: N-NJTC's last columns brighter than NJTC's",
        f"mean r² to the last layer: N-NJTC {m['nnjtc']:.4f}, NJTC {m['njtc']:.4f}",
        m["nnjtc"] - m["njtc"],
        "mean_l r²(l -> L) of N-NJTC > NJTC's (mean over seeds; margin: the difference)",
        words=("better",),
        unit="r²",
        checks=_runs(d),
    )


def n8(get):
    d = get("nnjtc_fig2")
    lo = {n: d[f"loss_ratio_min_{n}"] for n in ("njtc", "nnjtc")}
    return claim_record(
        "N8",
        "(book) gradient descent cannot beat the closed form on its own training loss",
        "none (a consequence of the closed form: reduced-rank regression is the global optimum)",
        f"smallest train-loss ratio GD / closed form over {d['pairs']} pairs × {len(d['seeds'])} seeds: NJTC "
        f"{lo['njtc']:.4f}, N-NJTC {lo['nnjtc']:.4f}",
        min(lo.values()) - (1 - OPTIMUM_RTOL),
        "train loss NJTC >= RRR_r and N-NJTC >= aRRR_r (relative tolerance 1e-3), every pair and seed (a "
        "consequence of the mathematics: a check, not evidence)",
        kind="check",
    )


def _grid(get):
    d = get("tl_grid")
    return d, len(d["curves"]["id"]["kl"]) - 1


def t1(get):
    d, L = _grid(get)
    gap = (_c(d, "id", "kl") - _tuned(d, "kl"))[:L]
    return claim_record(
        "T1",
        "the tuned lens is closer to the final distribution than the logit lens",
        "lower KL(final ‖ lens) than the logit lens at every layer (tuned-lens paper)",
        f"KL(tuned) < KL(id) at {int((gap > 0).sum())} of {L} layers",
        gap.min(),
        "every l < L: KL(tuned) < KL(id) (margin: the smallest difference)",
        words=("every", "better"),
        unit="nats",
        checks=_tuned_runs(d),
    )


def t2(get):
    d, L = _grid(get)
    gap = (_tuned(d, "p@1") - _c(d, "id"))[:L]
    ce = (_c(d, "id", "ce_gold") - _tuned(d, "ce_gold"))[:L]
    return claim_record(
        "T2",
        "the tuned lens predicts better than the logit lens",
        "more predictive than the logit lens: higher agreement with the model and lower cross-entropy on the "
        "text's next token (tuned-lens paper)",
        f"mean over l < L of P@1(tuned) - P@1(id): {gap.mean():+.3f}; of CE(id) - CE(tuned) against the gold "
        f"next token: {ce.mean():+.3f} nats",
        min(float(gap.mean()), float(ce.mean())),
        "both parts, means over l < L: P@1(tuned) - P@1(id) > 0 and CE(id) - CE(tuned) > 0, CE against the "
        "text's next token on the samples that have one (margin: the smaller, in P@1 or nats)",
        words=("better",),
        unit="P@1 or nats",
        checks=_tuned_runs(d),
    )


def t3(get):
    d, L = _grid(get)
    tuned, ident = _tuned(d, "bias_kl")[:L], _c(d, "id", "bias_kl")[:L]
    removed = float(np.mean(1 - tuned / ident))
    return claim_record(
        "T3",
        "the logit lens is biased; the tuned lens removes most of that bias",
        "the logit lens's average distribution is far from the model's; the tuned lens removes most of that bias",
        f"share of id's bias KL that the tuned lens removes, mean over l < L: {removed:.0%}",
        removed - verdicts.value("most"),
        "mean over l < L of 1 - biasKL(tuned) / biasKL(id) > 0.5 (margin: minus one half)",
        words=("most",),
        unit="share - 0.5",
        checks=_tuned_runs(d),
    )


def h1(get):
    d, L = _grid(get)
    kl = float(np.mean((_c(d, "mat+b", "kl") - _tuned(d, "kl"))[:L]))
    r2 = float(np.mean((_c(d, "mat+b", "r2") - _tuned(d, "r2"))[:L]))
    return claim_record(
        "H1",
        "(book) the objective decides: each lens wins the metric it was trained on",
        "none (a book hypothesis: mat+b minimises squared error, the tuned lens KL, in the same affine form)",
        f"mean over l < L of KL(mat+b) - KL(tuned) {kl:+.3f} nats, r²(mat+b) - r²(tuned) {r2:+.3f}",
        min(kl, r2),
        "both means > 0 (Precision@1 reported, not judged; margin: the smaller, in nats or r²)",
        words=("better", "every"),
        unit="nats or r²",
        checks=_tuned_runs(d),
    )


CLAIMS = {
    "N0": n0,
    "N1": n1,
    "N2": n2,
    "N3": n3,
    "N4": n4,
    "N5": n5,
    "N6": n6,
    "N7": n7,
    "N8": n8,
    "T1": t1,
    "T2": t2,
    "T3": t3,
    "H1": h1,
}


# why a claim's verdict differs between the stand-in and the real model, one sentence each from the records' numbers
# (see jtc_utils.jtc.claims.DIFFERS)
DIFFERS = {}
BELIEVE: dict = {}  # which differing verdict speaks to the paper, claim by claim (jtc_utils.jtc.claims.BELIEVE)

# why a claim fails or is undecided, where its margin does not say it (see jtc_utils.jtc.claims.REASONS)
REASONS = {
    "N1": {
        "tiny": "At rank 4 the low-rank shortcuts sit below the logit lens at almost every layer of the stand-in: "
        "its final states carry the next token in many more than four directions.",
        "real": "On the real model N-NJTC's surprisal stays below the logit lens's through the first half, but "
        "its Precision@1 falls below the logit lens's at the last layers before half the depth (the "
        "record says at how many): the crossing the paper places after the middle comes earlier on "
        "SmolLM2.",
    },
    "N6": {
        "tiny": "A rank-4 map keeps only a small part of the target's variance whatever the jump, so jumps to the "
        "last layers are not better than one-layer jumps from early layers."
    },
    "N7": {
        "real": "On SmolLM2 the two rank-5 maps reach the last layer equally well: N-NJTC's mean r² to the last "
        "layer is below NJTC's in the third decimal (the record's numbers), a gap the resamples of the "
        "validation samples place below zero; the normalisation N-NJTC adds does not help there."
    },
}

# why a figure the rules read has no counterpart on the real model (its figures are real_<fig>: the lens table at
# three depths, Figure 3 and the grid at every layer; see jtc_utils.lenses.figures)
REAL_ABSENT = {}  # every lens figure the rules read has a real counterpart (real_nnjtc_fig2: the pairs they read)

# Figure 2's heatmaps carry no resamples (each cell is a map fitted once and read on the whole validation set); N6
# reads them beside the resampled r² to the last layer. They are held fixed, as constants of the setting, so that N6's
# interval is the interval of its resampled parts (the r² to the last layer, over the validation samples and the
# seeds), and N6's record says so.
CONSTANTS = {f: ("r2_id", "r2_mat", "r2_njtc", "r2_nnjtc") for f in ("nnjtc_fig2", "real_nnjtc_fig2")}

# the training seeds of the gradient-descent lenses are resampled with the validation set
check, all_claims = registry(CLAIMS, "lens", REASONS, seed_keys=("r2_to_last_njtc", "r2_to_last_nnjtc"))

# the chapter's two claims files, declared with its figures (.paper)
RECORDS = claims_records("lenses", all_claims)
