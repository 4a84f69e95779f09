"""The claims of "Your Transformer is Secretly Linear" (S1-S12), each judged by one function from the linearity
chapter's numbers (related-systems spec 4.4; the rules are the spec's, written from the paper's words).

Every function takes ``get`` (a figure id to its numbers; by default read from ``book/data``) and returns the record
``{id, claim, quote, paper, ours, holds, rule, magnitude}`` of :mod:`jtc_utils.jtc.claims`. The paper's claims are about
decoders, so the rules use the four GPT-style stand-ins; the real model's numbers are given beside them where it has
them. S11 and S12 are descriptive in the paper (no data, no threshold) and are reported without a verdict.
"""

from __future__ import annotations

import numpy as np

from jtc_utils.core.models.models import CAUSAL_FAMILIES
from jtc_utils.evidence import digits, verdicts
from jtc_utils.evidence.claims import claim_record, claims_records, default_get, magnitude_part, registry, view_getter

PAPER_LAMBDA = 0.5
PAPER_LS = 0.99  # "about 0.99 linear" (the abstract)


def _gpt(d):
    """The GPT-style models among a figure's: the causal decoders (the zoo's GPT-2 stand-ins; on the real profile,
    SmolLM2, a LLaMA-family decoder), not the encoders."""
    return {m: v for m, v in d.items() if v["family"] in CAUSAL_FAMILIES}


def _with_real(text: str, get, d: dict, value) -> str:
    """``text`` with the real model's number beside the stand-ins' (``value`` of ``real_sl``, as text), unless the
    figure ``d`` is already the real model's."""
    real = get("real_sl")
    return text if real["model"] in d else f"{text}; {real['model']} {value(real)}"


def s1(get):
    d = _gpt(get("sl_fig1"))
    med = {m: float(np.median(v["paper"]["res_in"])) for m, v in d.items()}
    ours = _with_real(
        "median in-sample LS with residual: " + ", ".join(f"{m} {v:.3f}" for m, v in med.items()),
        get,
        d,
        lambda r: f"{np.median(r['paper']['res_in']):.3f}",
    )
    return claim_record(
        "S1",
        "consecutive layers are about 0.99 linear",
        "≈ 0.99 for GPT, OPT, Llama, Mistral (Fig. 1)",
        "no shape part: the claim gives a magnitude",
        None,
        "-",
        magnitude_part(
            "≈ 0.99 for GPT, OPT, Llama, Mistral (Fig. 1)",
            ours,
            min(med.values()) >= PAPER_LS - verdicts.value("about"),
            "median LSᵣₑₛ (in-sample, paper protocol) within 0.05 of 0.99 for every GPT-style model",
        ),
        words=("about",),
    )


def s2(get):
    d = _gpt(get("sl_fig1"))
    res = np.concatenate([v["paper"]["res_in"] for v in d.values()])
    nores = np.concatenate([v["paper"]["nores_in"] for v in d.values()])
    gap = max(
        float(np.max(np.abs(np.subtract(v[p]["nores_in"], v[p]["nores_identity"]))))
        for v in d.values()
        for p in ("paper", "paper_nopos0", "sample")
        if "nores_identity" in v[p]
    )
    return claim_record(
        "S2",
        "removing the residual lowers linearity markedly",
        "LS drops far below 0.99 without the residual (Fig. 1)",
        f"mean LSᵣₑₛ {res.mean():.3f}, mean LSₙₒᵣₑₛ {nores.mean():.3f} over {len(res)} "
        f"pairs; the identity's gap is {digits.bound(gap, 1e-8)}",
        verdicts.substantially(res.mean(), nores.mean()),
        "mean LSₙₒᵣₑₛ below mean LSᵣₑₛ by at least a fifth of LSᵣₑₛ, over the pairs of every GPT-style "
        "model (margin: the relative gap minus 0.2)",
        words=("substantially", "better"),
        unit="relative gap - 0.2",
    )


def _u_gap(nores, depth):
    nores, depth = np.asarray(nores), np.asarray(depth)
    q = verdicts.value("late")  # mid-depth: between the first and the last quarter
    mid = (depth > q) & (depth <= 1 - q)
    return float(verdicts.rel_gap(nores[-1], nores[mid].min()))


def s3(get):
    d = _gpt(get("sl_fig1"))
    gaps = {m: _u_gap(v["paper"]["nores_in"], v["depth"]) for m, v in d.items()}
    return claim_record(
        "S3",
        "without the residual the profile is U-shaped",
        "≈ 0.35-0.6 mid-depth, ≈ 0.9-1.0 at the end (repository figure)",
        _with_real(
            "relative gap of the last pair over the mid-depth minimum: "
            + ", ".join(f"{m} {g:+.2f}" for m, g in gaps.items()),
            get,
            d,
            lambda r: f"{_u_gap(r['paper']['nores_in'], r['depth']):+.2f}",
        ),
        min(gaps.values()) - verdicts.value("substantially"),
        "the last pair's LSₙₒᵣₑₛ above the minimum over mid-depth (between the first "
        "and the last quarter) by at least a fifth of the larger, every GPT-style model (margin: the smallest "
        "relative gap minus 0.2)",
        words=("substantially", "every", "late"),
        unit="relative gap - 0.2",
    )


def s4(get):
    d = get("sl_fig3")
    rows = {m: v for m, v in d.items() if m in _gpt(get("sl_fig1"))}
    # "small next to the stream": the update is smaller than the state by at least a fifth (substantially)
    small = {
        m: float(np.mean(np.asarray(v["update_norm"]) <= 1 - verdicts.value("substantially"))) for m, v in rows.items()
    }
    rho = {m: v["spearman_vs_nonlinearity"] for m, v in rows.items()}
    margin = min(min(v - verdicts.value("most") for v in small.values()), min(rho.values()))
    return claim_record(
        "S4",
        "block updates are small next to the stream",
        "the low norm of the updates explains the linearity (Fig. 3)",
        "share of pairs with median ‖Δh‖/‖h‖ <= 0.8: "
        + ", ".join(f"{m} {s:.0%}" for m, s in small.items())
        + "; Spearman(‖Δh‖/‖h‖, 1 − LSᵣₑₛ): "
        + ", ".join(f"{r:+.2f}" for r in rho.values()),
        margin,
        "median ‖Δh‖/‖h‖ <= 0.8 (smaller than the stream by at least a fifth) at most pairs and Spearman > 0, "
        "every GPT-style model (margin: the smallest, in share - 0.5 or rho)",
        words=("substantially", "most", "every", "better"),
        unit="share - 0.5 or rho",
    )


def s5(get):
    from scipy.stats import spearmanr

    d = get("sl_fig2")
    snaps = d["snapshots"]
    steps = [s["step"] for s in snaps]
    mean = [float(np.mean(s["all"]["res_in"])) for s in snaps]
    rho = float(spearmanr(steps, mean).statistic)
    return claim_record(
        "S5",
        "linearity falls during pretraining",
        "mean LS of public checkpoints decreases with training (Fig. 2)",
        f"Spearman(step, mean LSᵣₑₛ) = {rho:+.2f} over {len(snaps)} snapshots (mean LSᵣₑₛ "
        f"{mean[0]:.3f} at step {steps[0]} -> {mean[-1]:.3f} at step {steps[-1]})",
        -rho,
        "Spearman(step, mean LSᵣₑₛ) < 0 over every snapshot (margin: minus rho)",
        words=("better",),
        unit="-rho",
    )


def s6(get):
    d = get("sl_tab1")
    deltas = {t: v["delta"] for t, v in d["tasks"].items()}
    idx = verdicts.seed_draw(get, min(len(v) for v in deltas.values()))
    drawn = {t: [v[i] for i in idx] for t, v in deltas.items()}
    return claim_record(
        "S6",
        "fine-tuning raises linearity without residual, always",
        "Δ > 0 for every task and model (Table 1: gpt2 .085/.048/.004/.092)",
        "; ".join(
            f"{t}: {np.mean(v):+.3f} ± {np.std(v, ddof=1):.3f} ({', '.join(f'{x:+.3f}' for x in v)})"
            for t, v in deltas.items()
        ),
        min(min(v) for v in drawn.values()),
        "Δ mean LSₙₒᵣₑₛ > 0 for every task and seed (margin: the smallest Δ)",
        words=("every", "better"),
        unit="LS",
    )


def _runs(get, lam):
    """The pretraining runs at ``lam`` by seed, the seeds resampled on a replicate (see verdicts.seed_draw)."""
    runs = {r["seed"]: r for r in get("sl_fig4")["runs"].values() if np.isclose(r["lambda"], lam)}
    seeds = sorted(runs)
    return {k: runs[seeds[i]] for k, i in enumerate(verdicts.seed_draw(get, len(seeds)))}


def s7(get):
    plain, reg = _runs(get, 0.0), _runs(get, PAPER_LAMBDA)
    gaps = {
        s: np.asarray(plain[s]["all"]["res_in"]) - np.asarray(reg[s]["all"]["res_in"])
        for s in sorted(reg)
        if s in plain
    }
    return claim_record(
        "S7",
        "the cosine regulariser lowers linearity",
        "lower LS per layer with the regulariser (Mistral-650M, Figs 4-5)",
        f"λ = {PAPER_LAMBDA}: share of layers with lower LSᵣₑₛ, per seed: "
        + ", ".join(f"seed {s} {np.mean(v > 0):.0%}" for s, v in gaps.items()),
        min(float(v.min()) for v in gaps.values()) if gaps else None,
        "lower LSᵣₑₛ at every layer, for every seed (margin: the smallest difference)",
        words=("every", "better"),
        unit="LS",
    )


def _probe_mean(get, lam):
    rows = [
        np.asarray(r["accuracy"])
        for r in sorted(get("sl_fig5").values(), key=lambda r: r["seed"])
        if np.isclose(r["lambda"], lam)
    ]
    return np.mean([rows[i] for i in verdicts.seed_draw(get, len(rows))], 0)


def s8(get):
    plain, reg = _runs(get, 0.0), _runs(get, PAPER_LAMBDA)
    m = lambda runs, k: float(np.mean([r["lm"][k] for r in runs.values()]))  # noqa: E731
    # the paper's evidence is the model's own quality (perplexity, knowledge, SuperGLUE); the probes are S9's
    gaps = {
        "perplexity": verdicts.rel_gap(m(plain, "perplexity"), m(reg, "perplexity")),
        "fact accuracy": verdicts.rel_gap(m(reg, "fact_accuracy"), m(plain, "fact_accuracy")),
    }
    return claim_record(
        "S8",
        "the cosine regulariser helps the model",
        "SuperGLUE 43.33 -> 46.06 (650M), 41.10 -> 42.78 (150M); GPT-4 grades 5.39 -> 6.08",
        f"λ = {PAPER_LAMBDA} vs plain, means of 3 seeds: perplexity "
        f"{m(plain, 'perplexity'):.3f} -> {m(reg, 'perplexity'):.3f}, fact accuracy "
        f"{m(plain, 'fact_accuracy'):.3f} -> {m(reg, 'fact_accuracy'):.3f} (the probes are S9's)",
        min(float(v) for v in gaps.values()),
        "better on both of the model's own measures: perplexity and "
        "fact accuracy, means of 3 seeds (margin: the smaller relative gap; SuperGLUE has no stand-in)",
        words=("better", "every"),
        unit="relative gap",
    )


def s9(get):
    plain, reg = _probe_mean(get, 0.0), _probe_mean(get, PAPER_LAMBDA)
    gap = float(np.mean(reg - plain))
    return claim_record(
        "S9",
        "linear probes do better with the regulariser",
        "higher probe accuracy with the regulariser (Fig. 5)",
        f"λ = {PAPER_LAMBDA}: probes (mean of 3 seeds) higher at {np.mean(reg > plain):.0%} of "
        f"the {len(plain)} layers; mean difference {gap:+.3f}",
        gap,
        "the mean over layers of probe accuracy with the regulariser minus without > 0",
        words=("better",),
        unit="accuracy",
    )


def _ppl(rows, strategy, mode, k):
    v = [r["perplexity"] for r in rows if r["strategy"] == strategy and r["mode"] == mode and r["k"] == k]
    return float(np.mean(v)) if v else float("nan")


def s10(get):
    d = get("sl_fig7")
    rows, L = d["rows"], d["n_layers"]
    ks = sorted({r["k"] for r in rows if r["mode"] == "replace + distil" and r["k"] <= verdicts.value("late") * L})
    gaps = [
        verdicts.rel_gap(_ppl(rows, "most linear", a, k), _ppl(rows, "most linear", b, k))
        for k in ks
        for b, a in (("replace + distil", "replace"), ("replace", "remove"))
    ]
    gaps.append(verdicts.rel_gap(_ppl(rows, "random", "remove", 1), _ppl(rows, "most linear", "remove", 1)))
    txt = "; ".join(
        f"k={k}: {_ppl(rows, 'most linear', 'replace + distil', k):.3f} / "
        f"{_ppl(rows, 'most linear', 'replace', k):.3f} / {_ppl(rows, 'most linear', 'remove', k):.3f}"
        for k in ks
    )
    return claim_record(
        "S10",
        "the most linear blocks can be replaced, better still distilled",
        "linear + distil < linear < removal in perplexity damage (Figs 6-7)",
        f"perplexity distil / replace / remove, most linear first "
        f"({d['model']}, base {d['base']['perplexity']:.3f}): {txt}; removing the most linear block: "
        f"{_ppl(rows, 'most linear', 'remove', 1):.3f} vs a random one {_ppl(rows, 'random', 'remove', 1):.3f}",
        min(float(g) for g in gaps),
        "distil < replace < remove in perplexity for every k up to a quarter of "
        "the blocks (most linear first), and removing the most linear block costs less than a random one "
        "(margin: the smallest relative gap)",
        words=("every", "better", "late"),
        unit="relative gap",
    )


def s11(get):
    d = get("sl_fig1")
    gpt = {v["n_layers"]: float(np.median(v["paper"]["res_in"])) for v in d.values() if v["family"] == "gpt2"}
    bert = {m: (v["n_layers"], float(np.median(v["paper"]["res_in"]))) for m, v in d.items() if v["family"] == "bert"}
    return claim_record(
        "S11",
        "the near-linearity is exclusive to decoders",
        "stated in the abstract; no data shown",
        "; ".join(
            f"{m} (L={L}) median LSᵣₑₛ {s:.3f} vs GPT-style of equal depth {gpt.get(L, float('nan')):.3f}"
            for m, (L, s) in bert.items()
        )
        or "no encoder is scored on this profile",
        None,
        "reported without a verdict (spec: the paper shows no data)",
    )


def s12(get):
    d = {m: v for m, v in get("sl_fig9").items() if m in _gpt(get("sl_fig1"))}
    return claim_record(
        "S12",
        "some layers have long-tailed errors",
        "per-token errors of the normalised fit are long-tailed in some layers (Fig. 9)",
        "largest excess kurtosis per model: "
        + ", ".join(
            f"{m} {max(v['err_kurtosis']):.0f} (max/median {max(v['err_max_over_median']):.0f})" for m, v in d.items()
        ),
        None,
        "reported without a verdict (the paper gives no threshold)",
    )


CLAIMS = {
    "S1": s1,
    "S2": s2,
    "S3": s3,
    "S4": s4,
    "S5": s5,
    "S6": s6,
    "S7": s7,
    "S8": s8,
    "S9": s9,
    "S10": s10,
    "S11": s11,
    "S12": s12,
}


# why a claim's verdict differs between the stand-in and the real model, one sentence each from the records' numbers
# (see jtc_utils.jtc.claims.DIFFERS)
DIFFERS = {
    "S3": "Without the residual SmolLM2's linearity dips at mid-depth and rises again at its last pair by more than "
    "a fifth (the record's relative gap), the U the paper's repository figure shows; on the stand-ins the "
    "rule asks it of every model, and the smallest, tiny-gpt2, rises by less than a fifth while the three "
    "deeper ones rise by more (the record's gaps)."
}

# which of the two differing verdicts speaks to the paper's sentence, claim by claim (the claims page's last column of
# disagreements; every claim of DIFFERS has one, and a disagreement without one stops that page): the profile, why,
# and whether the instrument that measures it passed its checks (the record's ``checks``; "no check" where the claim
# reads no trained component, labelling or intervention)
BELIEVE = {
    "S3": "The real model's (no check applies): the paper's U is a property of pretrained models of its kind, which "
    "SmolLM2 shows; the stand-in fails on its smallest model alone, a depth the papers never trained."
}

# why a claim fails or is undecided, where its margin does not say it (see jtc_utils.jtc.claims.REASONS)
REASONS = {
    "S3": "The last blocks of a small model trained on a small world still do non-linear work, so the profile "
    "without the residual does not climb back at the end; the real model has the U.",
    "S7": "The regulariser shrinks the updates next to the stream, which pushes the score with the residual towards "
    "1: on the stand-in it raises linearity instead of lowering it.",
    "S9": "With the regulariser the linear probes are worse at most layers of the stand-in.",
}

# --- the real model ------------------------------------------------------------------------------------------------
# The real profile's linearity numbers are one figure, real_sl (SmolLM2-135M on held-out Wikipedia sentences: the
# scores of both protocols with their resamples, and the pruning); the rules read them through the layout of the
# stand-in's figures (real_views), so that every rule is the same function on both profiles.

# why a figure the rules read has no counterpart on the real model
REAL_ABSENT = {
    "sl_fig2": "linearity during pretraining needs the real model's training checkpoints, and pretraining SmolLM2 is "
    "far beyond two cores; judged on the stand-in's own pretraining only",
    "sl_fig4": "the cosine regulariser is a pretraining objective: it needs SmolLM2 pretrained again with it",
    "sl_fig5": "the probes compare models pretrained with and without the regulariser: it needs SmolLM2 pretrained "
    "again with it",
    "sl_tab1": "fine-tuning SmolLM2 on the tasks is training of the real model, beyond two cores and the book's "
    "budget; judged on the stand-in's fine-tuning only",
    "sl_fig7": "the claim compares a distilled replacement with the linear one and with removal; the real model's "
    "blocks were replaced and removed (its perplexities are in the chapter) but not distilled, so the "
    "sentence cannot be read whole",
}


def real_views(real: dict) -> dict:
    """The real model's figure ``real_sl`` in the layout of the stand-in's figures the rules read: ``sl_fig1``
    (the scores), ``sl_fig3`` (the updates' norms) and ``sl_fig9`` (the errors), each with one model; the resamples
    come with the numbers."""
    m, paper = real["model"], real["paper"]
    boot = paper.get("boot", {})
    fig1 = {
        m: {
            "family": real["family"],
            "n_layers": real["n_layers"],
            "d": real["d"],
            "depth": real["depth"],
            "n_tokens": real["n_tokens"],
            "n_sample": real["n_sample"],
            **{proto: real[proto] for proto in ("paper_nopos0", "sample")},
            "paper": {
                **{k: v for k, v in paper.items() if k != "boot"},
                **({"boot": {k: boot[k] for k in ("res_in", "nores_in")}} if boot else {}),
            },
        }
    }
    fig3 = {
        m: {
            "depth": real["depth"],
            "update_norm": paper["update_norm"],
            "update_norm_nopos0": real["paper_nopos0"]["update_norm"],
            "spearman_vs_nonlinearity": real["spearman_vs_nonlinearity"],
            **({"boot": {"update_norm": boot["update_norm"], **real["boot"]}} if boot else {}),
        }
    }
    fig9 = {m: {"depth": real["depth"], **{k: paper[k] for k in ("err_kurtosis", "err_max_over_median")}}}
    return {"sl_fig1": fig1, "sl_fig3": fig3, "sl_fig9": fig9, "real_sl": real}


def resampled_protocols(profile, every: tuple) -> tuple:
    """The score protocols whose refits the linearity figures resample on ``profile``, so that these rules have
    intervals where they judge: ``every`` protocol on the zoo, the paper protocol with every position (``all``) on a
    one-model profile (the real model's rules read only that), none on a reader's own model (``custom``: shown,
    not judged)."""
    if profile.name == "custom":
        return ()
    return ("all",) if profile.one_model else tuple(every)


def real_getter(get=default_get):
    """A ``get`` of the real profile for these rules: the views of ``real_sl`` (:func:`real_views`); a figure the
    real model does not have raises :class:`~jtc_utils.evidence.claims.NotComputed` with the reason
    (:data:`REAL_ABSENT`)."""
    return view_getter("real_sl", real_views, REAL_ABSENT, get)


# the scores and perplexities are resampled by sentence (the tokens of one sentence are not independent): each
# resample refits every layer pair from per-sentence sums (jtc_utils.linearity.score.resampled_profile)
RESAMPLED_OVER = {f: "sentences" for f in ("sl_fig1", "sl_fig2", "sl_fig3", "sl_fig7", "real_sl")}
CONSTANTS = {f: ("depth",) for f in ("sl_fig1", "sl_fig3", "real_sl")}  # a pair's place in the depth

check, all_claims = registry(CLAIMS, "linearity", REASONS)

# the chapter's two claims files, declared with its figures (.paper)
RECORDS = claims_records("linearity", all_claims, real_getter)
