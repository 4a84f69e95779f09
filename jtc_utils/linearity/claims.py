"""The claims of "Your Transformer is Secretly Linear" (S1-S12), each judged by one function from the linearity
chapter's numbers (related-systems spec 4.4; the rules are the spec's, written from the paper's words).

Every function takes ``get`` (a figure id to its numbers; by default read from ``book/data``) and returns the record
``{id, claim, quote, paper, ours, holds, rule, magnitude}`` of :mod:`jtc_utils.claims`. The paper's claims are about decoders, so the
rules use the four GPT-style stand-ins; the real model's numbers are given beside them where it has them. S11 and
S12 are descriptive in the paper (no data, no threshold) and are reported without a verdict.
"""

from __future__ import annotations

import numpy as np

from .. import digits
from ..claims import (  # noqa: F401  (the chapter calls these)
    _mag, _rec, default_get, frame, getter, registry, styled)

PAPER_LAMBDA = 0.5


def _gpt(d):
    return {m: v for m, v in d.items() if v["family"] == "gpt2"}


def s1(get):
    d = _gpt(get("sl_fig1"))
    med = {m: float(np.median(v["paper"]["res_in"])) for m, v in d.items()}
    real = get("real_sl")
    ours = ("median in-sample LS with residual: " + ", ".join(f"{m} {v:.3f}" for m, v in med.items())
            + f"; {real['model']} {np.median(real['paper']['res_in']):.3f}")
    return _rec("S1", "consecutive layers are about 0.99 linear", "≈ 0.99 for GPT, OPT, Llama, Mistral (Fig. 1)",
                "no shape part: the claim gives a magnitude", None, "-",
                _mag("≈ 0.99 for GPT, OPT, Llama, Mistral (Fig. 1)", ours, min(med.values()) >= 0.95,
                     "median LS_res (in-sample, paper protocol) >= 0.95 for every GPT-style model"))


def s2(get):
    d = _gpt(get("sl_fig1"))
    res = np.concatenate([v["paper"]["res_in"] for v in d.values()])
    nores = np.concatenate([v["paper"]["nores_in"] for v in d.values()])
    share = float(np.mean(nores <= res - 0.1))
    gap = max(float(np.max(np.abs(np.subtract(v[p]["nores_in"], v[p]["nores_identity"]))))
              for v in d.values() for p in ("paper", "paper_nopos0", "sample") if "nores_identity" in v[p])
    return _rec("S2", "removing the residual lowers linearity markedly", "LS drops far below 0.99 without the "
                "residual (Fig. 1)", f"LS_nores <= LS_res - 0.1 at {share:.0%} of {len(res)} pairs; the identity's "
                f"gap is {digits.bound(gap, 1e-8)}", share >= 0.8 and gap <= 1e-8,
                "LS_nores <= LS_res - 0.1 at >= 80% of the pairs; identity to 1e-8")


def _u_gap(nores, depth):
    nores, depth = np.asarray(nores), np.asarray(depth)
    mid = (depth > 0.2) & (depth <= 0.8)
    return float(nores[-1] - nores[mid].min())


def s3(get):
    d = _gpt(get("sl_fig1"))
    gaps = {m: _u_gap(v["paper"]["nores_in"], v["depth"]) for m, v in d.items()}
    real = get("real_sl")
    return _rec("S3", "without the residual the profile is U-shaped", "≈ 0.35-0.6 mid-depth, ≈ 0.9-1.0 at the end "
                "(repository figure)", "last pair minus the mid-depth minimum: " + ", ".join(
                    f"{m} {g:+.2f}" for m, g in gaps.items()) + f"; {real['model']} "
                f"{_u_gap(real['paper']['nores_in'], real['depth']):+.2f}", min(gaps.values()) > 0.2,
                "min LS_nores over the middle 60% of depth < last pair - 0.2, every GPT-style model")


def s4(get):
    d = get("sl_fig3")
    rows = {m: v for m, v in d.items() if m in _gpt(get("sl_fig1"))}
    small = {m: float(np.mean(np.asarray(v["update_norm"]) < 0.5)) for m, v in rows.items()}
    rho = {m: v["spearman_vs_nonlinearity"] for m, v in rows.items()}
    ok = all(s > 0.5 for s in small.values()) and all(r > 0 for r in rho.values())
    return _rec("S4", "block updates are small next to the stream", "the low norm of the updates explains the "
                "linearity (Fig. 3)", "share of pairs with median ‖Δh‖/‖h‖ < 0.5: " + ", ".join(
                    f"{m} {s:.0%}" for m, s in small.items()) + "; Spearman(‖Δh‖/‖h‖, 1 − LS_res): "
                + ", ".join(f"{r:+.2f}" for r in rho.values()), ok,
                "median ‖Δh‖/‖h‖ < 0.5 at most pairs and Spearman > 0, every GPT-style model")


def _trajectory(get):
    d = get("sl_fig2")
    after = [s for s in d["snapshots"] if s["step"] >= 0.05 * d["steps"]]
    return d, after


def s5(get):
    from scipy.stats import spearmanr

    d, after = _trajectory(get)
    steps = [s["step"] for s in after]
    mean = [float(np.mean(s["all"]["res_in"])) for s in after]
    rho = float(spearmanr(steps, mean).statistic)
    return _rec("S5", "linearity falls during pretraining", "mean LS of public checkpoints decreases with training "
                "(Fig. 2)", f"Spearman(step, mean LS_res) = {rho:+.2f} over {len(after)} snapshots after 5% of "
                f"training (mean LS_res {mean[0]:.3f} at step {steps[0]} -> {mean[-1]:.3f} at step {steps[-1]})",
                rho < 0, "Spearman(step, mean LS_res) < 0 after the first 5% of steps")


def s6(get):
    d = get("sl_tab1")
    deltas = {t: v["delta"] for t, v in d["tasks"].items()}
    ok = all(x > 0 for v in deltas.values() for x in v)
    return _rec("S6", "fine-tuning raises linearity without residual, always", "Δ > 0 for every task and model "
                "(Table 1: gpt2 .085/.048/.004/.092)", "; ".join(
                    f"{t}: {np.mean(v):+.3f} ± {np.std(v, ddof=1):.3f} ({', '.join(f'{x:+.3f}' for x in v)})"
                    for t, v in deltas.items()), ok, "Δ mean LS_nores > 0 for every task and seed")


def _runs(get, lam):
    return {r["seed"]: r for r in get("sl_fig4")["runs"].values() if abs(r["lambda"] - lam) < 1e-12}


def s7(get):
    plain, reg = _runs(get, 0.0), _runs(get, PAPER_LAMBDA)
    shares = {s: float(np.mean(np.asarray(reg[s]["all"]["res_in"]) < np.asarray(plain[s]["all"]["res_in"])))
              for s in sorted(reg) if s in plain}
    return _rec("S7", "the cosine regulariser lowers linearity", "lower LS per layer with the regulariser "
                "(Mistral-650M, Figs 4-5)", f"λ = {PAPER_LAMBDA}: share of layers with lower LS_res, per seed: "
                + ", ".join(f"seed {s} {v:.0%}" for s, v in shares.items()),
                bool(shares) and min(shares.values()) >= 0.8, "lower LS_res at >= 80% of layers, for every seed")


def _probe_mean(get, lam):
    rows = [np.asarray(r["accuracy"]) for r in get("sl_fig5").values() if abs(r["lambda"] - lam) < 1e-12]
    return np.mean(rows, 0)


def s8(get):
    plain, reg = _runs(get, 0.0), _runs(get, PAPER_LAMBDA)
    m = lambda runs, k: float(np.mean([r["lm"][k] for r in runs.values()]))  # noqa: E731
    better = {"perplexity": m(reg, "perplexity") < m(plain, "perplexity"),
              "fact accuracy": m(reg, "fact_accuracy") > m(plain, "fact_accuracy"),
              "probe accuracy": float(_probe_mean(get, PAPER_LAMBDA).mean()) > float(_probe_mean(get, 0.0).mean())}
    return _rec("S8", "the cosine regulariser helps the model", "SuperGLUE 43.33 -> 46.06 (650M), 41.10 -> 42.78 "
                "(150M); GPT-4 grades 5.39 -> 6.08", f"λ = {PAPER_LAMBDA} vs plain, means of 3 seeds: perplexity "
                f"{m(plain, 'perplexity'):.3f} -> {m(reg, 'perplexity'):.3f}, fact accuracy "
                f"{m(plain, 'fact_accuracy'):.3f} -> {m(reg, 'fact_accuracy'):.3f}, probe accuracy (mean of layers) "
                f"{_probe_mean(get, 0.0).mean():.3f} -> {_probe_mean(get, PAPER_LAMBDA).mean():.3f}",
                sum(better.values()) >= 2, "better on >= 2 of {perplexity, fact accuracy, probe accuracy}, 3 seeds")


def s9(get):
    plain, reg = _probe_mean(get, 0.0), _probe_mean(get, PAPER_LAMBDA)
    share = float(np.mean(reg > plain))
    return _rec("S9", "linear probes do better with the regulariser", "higher probe accuracy with the regulariser "
                "(Fig. 5)", f"λ = {PAPER_LAMBDA}: probes (mean of 3 seeds) higher at {share:.0%} of the "
                f"{len(plain)} layers", share > 0.5, "higher probe accuracy at most layers")


def _ppl(rows, strategy, mode, k):
    v = [r["perplexity"] for r in rows if r["strategy"] == strategy and r["mode"] == mode and r["k"] == k]
    return float(np.mean(v)) if v else float("nan")


def s10(get):
    d = get("sl_fig7")
    rows, L = d["rows"], d["n_layers"]
    ks = sorted({r["k"] for r in rows if r["mode"] == "replace + distil" and r["k"] <= L / 4})
    order = all(_ppl(rows, "most linear", "replace + distil", k) < _ppl(rows, "most linear", "replace", k)
                < _ppl(rows, "most linear", "remove", k) for k in ks)
    first = _ppl(rows, "most linear", "remove", 1) < _ppl(rows, "random", "remove", 1)
    txt = "; ".join(f"k={k}: {_ppl(rows, 'most linear', 'replace + distil', k):.3f} / "
                    f"{_ppl(rows, 'most linear', 'replace', k):.3f} / {_ppl(rows, 'most linear', 'remove', k):.3f}"
                    for k in ks)
    return _rec("S10", "the most linear blocks can be replaced, better still distilled", "linear + distil < linear < "
                "removal in perplexity damage (Figs 6-7)", f"perplexity distil / replace / remove, most linear first "
                f"({d['model']}, base {d['base']['perplexity']:.3f}): {txt}; removing the most linear block: "
                f"{_ppl(rows, 'most linear', 'remove', 1):.3f} vs a random one {_ppl(rows, 'random', 'remove', 1):.3f}",
                order and first, "distil < replace < remove for every k <= L/4 (most linear first), and removing the "
                "most linear block costs less than a random one")


def s11(get):
    d = get("sl_fig1")
    gpt = {v["n_layers"]: float(np.median(v["paper"]["res_in"])) for v in d.values() if v["family"] == "gpt2"}
    bert = {m: (v["n_layers"], float(np.median(v["paper"]["res_in"]))) for m, v in d.items() if v["family"] == "bert"}
    return _rec("S11", "the near-linearity is exclusive to decoders", "stated in the abstract; no data shown",
                "; ".join(f"{m} (L={L}) median LS_res {s:.3f} vs GPT-style of equal depth {gpt.get(L, float('nan')):.3f}"
                          for m, (L, s) in bert.items()), None,
                "reported without a verdict (spec: the paper shows no data)")


def s12(get):
    d = {m: v for m, v in get("sl_fig9").items() if m in _gpt(get("sl_fig1"))}
    return _rec("S12", "some layers have long-tailed errors", "per-token errors of the normalised fit are "
                "long-tailed in some layers (Fig. 9)", "largest excess kurtosis per model: " + ", ".join(
                    f"{m} {max(v['err_kurtosis']):.0f} (max/median {max(v['err_max_over_median']):.0f})"
                    for m, v in d.items()), None, "reported without a verdict (the paper gives no threshold)")


CLAIMS = {"S1": s1, "S2": s2, "S3": s3, "S4": s4, "S5": s5, "S6": s6, "S7": s7, "S8": s8, "S9": s9, "S10": s10,
          "S11": s11, "S12": s12}


check, all_claims = registry(CLAIMS, "linearity")
