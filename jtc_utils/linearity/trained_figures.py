"""The numbers behind the linearity chapter's training experiments, each on its own trained models: ``sl_fig2``
(linearity during pretraining), ``sl_fig4`` (cosine-regularised pretraining: linearity, held-out loss, fact recall),
``sl_fig5`` (linear probes, with and without the regulariser) and ``sl_tab1`` (fine-tuning).
"""

from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np

from jtc_utils.core.data import profiles
from jtc_utils.core.infra import cache
from jtc_utils.embedded import lexicon

from . import artifacts, prune, states
from .artifacts import variant
from .studies import boot_scores, eval_text, key, scores, study, unpack

LM_EVAL_SENTENCES = 200  # validation sentences that measure the regularised models (about 8,000 predicted tokens)
PROBE_TOKENS = 8000
PROBE_MAX_ITER = 300  # lbfgs iterations


def _mean_scores(ad) -> dict:
    """The paper-protocol scores of a trained variant, on the embedded world's text (the variants' own)."""
    s = scores(ad, profiles.get("tiny"), states.N_TOKENS)
    out = {}
    for tag in ("all", "nopos0"):
        u = unpack(s, tag)
        out[tag] = {k: u[k].tolist() for k in ("res_in", "nores_in", "res_ho", "nores_ho", "res_null", "update_norm")}
    return out


def fig2() -> dict:
    card = artifacts.committed_card()
    snaps = []
    for sn in card["snapshots"]:
        ad = variant(sn["file"])
        s = _mean_scores(ad)
        s["all"]["boot"] = {"res_in": boot_scores(ad, profiles.get("tiny"), states.N_TOKENS)["all/res_in"].tolist()}
        snaps.append({"step": sn["step"], "tokens": sn["tokens"], **s})
    zoo_model = study("tiny-gpt2")
    final = snaps[-1]["all"]
    return {
        "steps": card["pretrain"]["cos-0-seed-0"]["steps"],
        "snapshots": snaps,
        "fp16_vs_zoo_max_gap": float(np.max(np.abs(np.asarray(final["res_in"]) - zoo_model["paper"]["res_in"]))),
        "fp16_vs_zoo_max_gap_nores": float(
            np.max(np.abs(np.asarray(final["nores_in"]) - zoo_model["paper"]["nores_in"]))
        ),
    }


def _lm_eval(ad, n: int = LM_EVAL_SENTENCES) -> dict:
    seqs, masks = eval_text(ad.tokenizer, n)

    def compute():
        r = prune.evaluate(ad, seqs, masks)
        return {k: np.array(v, dtype=float) for k, v in r.items()}

    return {k: float(v) for k, v in cache.cached("sl_eval", key("lm", model=ad.identity, n=n), compute).items()}


def fig4() -> dict:
    """Plain vs cosine-regularised pretraining: per-layer linearity, and what the model is good for."""
    card = artifacts.committed_card()
    runs = {}
    for name, rec in card["pretrain"].items():
        ad = variant(rec["file"])
        runs[name] = {
            "lambda": rec["lambda"] or 0.0,
            "seed": rec["seed"],
            "train_time_s": rec["train_time_s"],
            "heldout_loss": rec["heldout"]["loss"],
            **_mean_scores(ad),
            "lm": _lm_eval(ad),
        }
    return {"runs": runs, "lambdas": sorted({r["lambda"] for r in runs.values()})}


@lru_cache(maxsize=1)
def _token_classes() -> dict:
    return lexicon.token_classes(artifacts.base()[1])


def _probe_data(ad, split: str):
    """States of the first PROBE_TOKENS tokens of the paper protocol's sentences (a prefix of the cached ones) and
    the class of each position's next word; positions whose next token has no single class are left out."""

    seqs = states.sentence_ids(ad, split, PROBE_TOKENS)
    n = sum(len(x) for x in seqs)
    X = states.all_positions(ad, split)["X"][:, :n]
    tc = _token_classes()
    nxt = np.concatenate([np.r_[x[1:], -1] for x in seqs])  # the next token of every position (-1 after the last)
    y = np.array([tc.get(int(t), lexicon.MIXED) if t >= 0 else lexicon.MIXED for t in nxt])
    keep = y != lexicon.MIXED
    return X[:, keep], y[keep]


def probes(ad) -> dict:
    """Linear probes of every layer h^0..h^L: the class of the next word (the generator's word classes), logistic
    regression on standardised states, trained on train-split tokens and scored on validation tokens."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from threadpoolctl import threadpool_limits

    def compute():
        Xt, yt = _probe_data(ad, "train")
        Xv, yv = _probe_data(ad, "validation")
        known = np.isin(yv, np.unique(yt))
        acc = []
        for layer in range(Xt.shape[0]):
            clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=PROBE_MAX_ITER))
            # one BLAS thread: on these small problems more threads only wait on each other (4x slower on two cores)
            with warnings.catch_warnings(), threadpool_limits(1):
                warnings.simplefilter("ignore", ConvergenceWarning)  # a probe short of the optimum is still a probe
                clf.fit(Xt[layer], yt)
            acc.append(float(np.mean(clf.predict(Xv[layer][known]) == yv[known])))
        majority = float(np.mean(yv == max(set(yt), key=list(yt).count)))
        return {"accuracy": np.array(acc), "majority": np.array(majority)}

    r = cache.cached("sl_probe", key("probe", model=ad.identity, n=PROBE_TOKENS, max_iter=PROBE_MAX_ITER), compute)
    return {"accuracy": r["accuracy"].tolist(), "majority": float(r["majority"])}


def fig5() -> dict:
    card = artifacts.committed_card()
    return {
        name: {"lambda": rec["lambda"] or 0.0, "seed": rec["seed"], **probes(variant(rec["file"]))}
        for name, rec in card["pretrain"].items()
    }


PAPER_TAB1 = {
    "gpt2": [0.085, 0.048, 0.004, 0.092],
    "gpt2-large": [0.049, 0.023, 0.025, 0.085],
    "gpt2-xl": [0.040, 0.037, 0.028, 0.038],
}  # MultiRC, BoolQ, CB, reward modelling


def tab1() -> dict:
    card = artifacts.committed_card()
    out = {}
    for task in sorted({r["task"] for r in card["finetune"].values()}):
        recs = [r for r in card["finetune"].values() if r["task"] == task]
        d = np.array([r["delta_nores_mean"] for r in recs])
        out[task] = {
            "seeds": [r["seed"] for r in recs],
            "delta": d.tolist(),
            "mean": float(d.mean()),
            "std": float(d.std(ddof=1)) if len(d) > 1 else 0.0,
            "accuracy": [r["val_accuracy"] for r in recs],
            "per_pair": np.mean([r["delta_nores"] for r in recs], 0).tolist(),
            "before": recs[0]["nores_before"],
            "train_time_s": [r["train_time_s"] for r in recs],
        }
    return {"tasks": out, "paper": PAPER_TAB1, "paper_tasks": ["MultiRC", "BoolQ", "CB", "reward modelling"]}


# ---------------------------------------------------------------------------------------------------------
# pruning
