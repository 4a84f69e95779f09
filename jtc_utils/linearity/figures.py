"""The numbers behind every figure and table of the linearity chapter, one entry per figure id (related-systems
spec 6): ``sl_fig1`` (linearity profiles of every zoo model, both protocols), ``sl_fig2`` (linearity during
pretraining), ``sl_fig3`` (how small the blocks' updates are), ``sl_fig4`` (cosine-regularised pretraining: linearity,
held-out loss, fact recall), ``sl_fig5`` (linear probes, with and without the regulariser), ``sl_tab1`` (fine-tuning),
``sl_fig7`` (pruning the deepest GPT-style stand-in), ``sl_fig9`` (the distribution of the fit's errors),
``ext_sl_r2family`` (the JTC r² of adjacent layers beside the linearity scores) and ``real_sl`` (scores and pruning on
the real model).
"""

from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np

from jtc_utils.core.models.models import CAUSAL
from jtc_utils.core.infra import cache, resample
from jtc_utils.core.models import models
from jtc_utils.core.data import profiles
from jtc_utils.core.data.profiles import Profile
from jtc_utils.core.data.setting import Setting
from jtc_utils.embedded import corpus, lexicon
from jtc_utils.evidence import figure_registry

from . import artifacts
from . import claims, prune, score, states
from .artifacts import variant
from jtc_utils.core.analysis.experiment import shared

SL_FIGURES = ("sl_fig1", "sl_fig2", "sl_fig3", "sl_fig4", "sl_fig5", "sl_tab1", "sl_fig7", "sl_fig9",
              "ext_sl_r2family", "real_sl")
VERSION = 2  # bump when a computation below changes, so cached results are recomputed
REAL = "smollm2-135m"
REAL_TOKENS = 6000  # tokens per split on the real model (each costs a 30-layer forward pass on two cores)
REAL_SAMPLE_SIZES = profiles.REAL_SUBSET  # the book-sample protocol on the real model
PRUNE_MODEL = "tiny-gpt2-xl"  # the deepest GPT-style stand-in (the role gpt48)
PRUNE_K = (1, 2, 3, 4, 6, 8, 10, 12)  # k up to L/2
PRUNE_SENTENCES = 100  # validation sentences that measure the pruning damage (about 4,000 predicted tokens)
LM_EVAL_SENTENCES = 200  # validation sentences that measure the regularised models (about 8,000 predicted tokens)
DISTIL_SENTENCES = 256  # training sentences the distillation sees (zoo extras)
DISTIL_K = (1, 2, 4, 6)  # k for which replace + distil runs (k <= L/4 is what the claim is about)
DISTIL_STRATEGIES = ("most linear", "random")  # (random: its first draw)
RANDOM_DRAWS = 3
REAL_K = (1, 2, 4)
REAL_STRATEGIES = ("most linear", "random")  # (one draw; each evaluation is a 30-block pass over the text)
REAL_PRUNE_TOKENS = 1500
PROBE_TOKENS = 8000
PROBE_MAX_ITER = 300  # lbfgs iterations


def _key(what: str, **kw) -> dict:
    return {"what": what, "version": VERSION, **kw}


def _scores(ad, profile: Profile, n_tokens: int) -> dict:
    """Paper-protocol scores of one model (with and without position 0), cached on its identity."""
    def compute():
        val = states.all_positions(ad, "validation", n_tokens, profile)
        tr = states.all_positions(ad, "train", n_tokens, profile)
        out = {}
        for tag, kv, kt in (("all", None, None), ("nopos0", val["position"] > 0, tr["position"] > 0)):
            recs = score.profile(val["X"], keep=kv)  # in-sample on validation tokens: the paper's reading
            for k in recs[0]:
                out[f"{tag}/{k}"] = np.array([r[k] for r in recs], dtype=float)
            for k, v in score.heldout_profile(tr["X"], val["X"], kt, kv).items():
                out[f"{tag}/{k}"] = v
        out["n_tokens"] = np.array([len(val["position"]), len(tr["position"])])
        return out

    return cache.cached("sl_scores", _key("paper", model=ad.identity, profile=profile.name, n=n_tokens,
                                          **profile.text_key()), compute)


BOOT_TAGS = ("all", "nopos0")


def _boot_scores(ad, profile: Profile, n_tokens: int, tags: tuple = BOOT_TAGS) -> dict:
    """The paper-protocol scores of :func:`_scores` (in-sample, validation tokens; ``tags``: ``all`` and
    ``nopos0``) under each resample of the sentences (:func:`score.resampled_profile`: a refit per resample from
    per-sentence sums), cached apart from the scores themselves."""
    def compute():
        val = states.all_positions(ad, "validation", n_tokens, profile)
        out = {}
        for tag, keep in (("all", None), ("nopos0", val["position"] > 0)):
            if tag not in tags:
                continue
            for k, v in score.resampled_profile(val["X"], val["position"], resample.weights, keep).items():
                out[f"{tag}/{k}"] = v.round(6)
        return out

    which = {} if tuple(tags) == BOOT_TAGS else {"tags": list(tags)}
    return cache.cached("sl_boot", _key("paper_boot", model=ad.identity, profile=profile.name, n=n_tokens,
                                        boot=[resample.N_RESAMPLES, resample.SEED], **which, **profile.text_key()),
                        compute)


def _unpack(arrays: dict, tag: str) -> dict:
    return {k.split("/", 1)[1]: v for k, v in arrays.items() if k.startswith(tag + "/")}


def _sample_scores(exp) -> dict:
    """The book-sample protocol: one position per sentence; in-sample on the training samples (the larger set: the
    real model's 300 validation samples are fewer than its 576 dimensions), held-out from train to validation."""
    def compute():
        recs = score.profile(exp.X_train)
        return {**{k: np.array([r[k] for r in recs], dtype=float)
                   for k in ("res_in", "nores_in", "res_null", "nores_null")},
                **score.heldout_profile(exp.X_train, exp.X_val)}

    return cache.cached("sl_scores", _key("sample", model=exp.adapter.identity, n=[len(exp.train), len(exp.val)],
                                          domain=exp.domain, **exp.profile.text_key()), compute)


def _paper_scores(ad, profile: Profile) -> dict:
    """:func:`_scores` at the profile's number of tokens (the real model's, or the zoo's)."""
    n_tok = real_tokens(ad, profile, REAL_TOKENS) if profile.one_model else states.N_TOKENS
    return _scores(ad, profile, n_tok)


def real_tokens(ad, profile: Profile, n: int) -> int:
    """``n`` tokens per split on the real model; on a reader's own (custom) text at most what both splits hold."""
    if profile.name != "custom":
        return n
    return min(n, *(states.tokens_in(ad, split, profile) for split in ("train", "validation")))


def study(model: str, profile: Profile | str = "tiny") -> dict:
    """Every linearity score of one model: paper protocol (all positions; ``all`` and ``nopos0``) and book sample;
    computed once per model and profile (a profile and its name are the same setting)."""
    return _study(model, profiles.get(profile))


@lru_cache(maxsize=16)
def _study(model: str, p: Profile) -> dict:
    sizes = p.subset(REAL_SAMPLE_SIZES) if p.one_model else (None, None)
    exp = shared(model, p.main_domain, p, *sizes, 0)
    paper = _paper_scores(exp.adapter, p)
    # resampled refits where the claims are judged (claims.resampled_protocols; on the real model 200 refits of 30
    # pairs 577 wide, a few minutes on one core)
    tags = claims.resampled_protocols(p, BOOT_TAGS)
    boot = _boot_scores(exp.adapter, p, int(paper["n_tokens"][0]), tags) if tags else None
    L = exp.n_layers
    return {"model": model, "family": exp.adapter.family, "n_layers": L, "d": exp.adapter.d,
            "depth": ((np.arange(L) + 1) / L).tolist(), "n_tokens": paper["n_tokens"].tolist(),
            "paper": _unpack(paper, "all"), "paper_nopos0": _unpack(paper, "nopos0"),
            "sample": _sample_scores(exp), "n_sample": [len(exp.train), len(exp.val)],
            "paper_boot": boot and _unpack(boot, "all"),
            "code_skips_pair": L - 1}


def _lists(d: dict) -> dict:
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in d.items()}


def fig1(profile: Profile) -> dict:
    out = {}
    for m in profile.models:
        s = study(m, profile)
        out[m] = {"family": s["family"], "n_layers": s["n_layers"], "d": s["d"], "depth": s["depth"],
                  "n_tokens": s["n_tokens"], "n_sample": s["n_sample"], "code_skips_pair": s["code_skips_pair"],
                  **{f"{proto}": {k: v.tolist() for k, v in s[proto].items()
                                  if k in ("res_in", "nores_in", "res_ho", "nores_ho", "res_null", "nores_null",
                                           "nores_identity")}
                     for proto in ("paper", "paper_nopos0", "sample")}}
        if s["paper_boot"]:
            out[m]["paper"]["boot"] = {k: s["paper_boot"][k].tolist() for k in ("res_in", "nores_in")}
    return out


def _spearman(a, b) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic)


def fig3(profile: Profile) -> dict:
    out = {}
    for m in profile.models:
        s = study(m, profile)
        b = s["paper_boot"]
        out[m] = {"depth": s["depth"], "update_norm": s["paper"]["update_norm"].tolist(),
                  "update_norm_nopos0": s["paper_nopos0"]["update_norm"].tolist(),
                  "spearman_vs_nonlinearity": _spearman(s["paper"]["update_norm"], 1 - s["paper"]["res_in"])}
        if b:
            out[m]["boot"] = {"update_norm": b["update_norm"].tolist(),
                              "spearman_vs_nonlinearity": [round(_spearman(u, 1 - r), 6) for u, r in
                                                           zip(b["update_norm"], b["res_in"])]}
    return out


def fig9(profile: Profile) -> dict:
    return {m: {"depth": study(m, profile)["depth"],
                **{k: study(m, profile)["paper"][k].tolist() for k in ("err_kurtosis", "err_max_over_median")}}
            for m in profile.models}


def r2family(profile: Profile) -> dict:
    """JTC's r² of adjacent layers (mat and id, held-out, coordinate-averaged, uncentred fit) beside the linearity
    scores of the same cache (the book sample of ``gpt24``), and the identity's largest numerical gap."""
    model = profile.role("gpt24")
    exp = shared(model, profile.main_domain, profile, None, None, 0)
    r2 = exp.layer_r2()
    L = exp.n_layers
    s = study(model, profile)
    gap = max(float(np.max(np.abs(s[k]["nores_in"] - s[k]["nores_identity"]))) for k in ("paper", "paper_nopos0"))
    return {"model": model, "layers": list(range(L)),
            "r2_mat": [float(r2["r2_mat"][i, i + 1]) for i in range(L)],
            "r2_id": [float(r2["r2_id"][i, i + 1]) for i in range(L)],
            **{k: s["sample"][k].tolist() for k in ("res_in", "res_ho", "nores_in", "nores_ho", "res_null")},
            "identity_max_gap": gap}


# ---------------------------------------------------------------------------------------------------------
# the trained variants (zoo/secretly-linear)
def _mean_scores(ad) -> dict:
    """The paper-protocol scores of a trained variant, on the embedded world's text (the variants' own)."""
    s = _scores(ad, profiles.get("tiny"), states.N_TOKENS)
    out = {}
    for tag in ("all", "nopos0"):
        u = _unpack(s, tag)
        out[tag] = {k: u[k].tolist() for k in ("res_in", "nores_in", "res_ho", "nores_ho", "res_null", "update_norm")}
    return out


def fig2() -> dict:
    card = artifacts.committed_card()
    snaps = []
    for sn in card["snapshots"]:
        ad = variant(sn["file"])
        s = _mean_scores(ad)
        s["all"]["boot"] = {"res_in": _boot_scores(ad, profiles.get("tiny"), states.N_TOKENS)["all/res_in"].tolist()}
        snaps.append({"step": sn["step"], "tokens": sn["tokens"], **s})
    zoo_model = study("tiny-gpt2")
    final = snaps[-1]["all"]
    return {"steps": card["pretrain"]["cos-0-seed-0"]["steps"], "snapshots": snaps,
            "fp16_vs_zoo_max_gap": float(np.max(np.abs(np.asarray(final["res_in"]) - zoo_model["paper"]["res_in"]))),
            "fp16_vs_zoo_max_gap_nores": float(np.max(np.abs(np.asarray(final["nores_in"])
                                                             - zoo_model["paper"]["nores_in"])))}


def _fact_masks(tokenizer, sentences) -> list[np.ndarray]:
    """Per sentence, True where the token is part of a ``fact`` word (so the position before predicts a fact)."""
    out = []
    for s in sentences:
        enc = tokenizer(s.text, add_special_tokens=False, return_offsets_mapping=True)
        out.append(np.array([s.label_at(a, b) == "fact" for a, b in enc["offset_mapping"]], dtype=bool))
    return out


@lru_cache(maxsize=4)
def _eval_text(tokenizer, n: int):
    """The first ``n`` encyclopedia validation sentences as token ids, with their fact masks."""

    sents = corpus.pool("encyclopedia", "validation", n)
    seqs = [tokenizer(s.text, add_special_tokens=False)["input_ids"] for s in sents]
    return seqs, _fact_masks(tokenizer, sents)


def _lm_eval(ad, n: int = LM_EVAL_SENTENCES) -> dict:
    seqs, masks = _eval_text(ad.tokenizer, n)

    def compute():
        r = prune.evaluate(ad, seqs, masks)
        return {k: np.array(v, dtype=float) for k, v in r.items()}

    return {k: float(v) for k, v in cache.cached("sl_eval", _key("lm", model=ad.identity, n=n), compute).items()}


def fig4() -> dict:
    """Plain vs cosine-regularised pretraining: per-layer linearity, and what the model is good for."""
    card = artifacts.committed_card()
    runs = {}
    for name, rec in card["pretrain"].items():
        ad = variant(rec["file"])
        runs[name] = {"lambda": rec["lambda"] or 0.0, "seed": rec["seed"], "train_time_s": rec["train_time_s"],
                      "heldout_loss": rec["heldout"]["loss"], **_mean_scores(ad), "lm": _lm_eval(ad)}
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

    r = cache.cached("sl_probe", _key("probe", model=ad.identity, n=PROBE_TOKENS, max_iter=PROBE_MAX_ITER), compute)
    return {"accuracy": r["accuracy"].tolist(), "majority": float(r["majority"])}


def fig5() -> dict:
    card = artifacts.committed_card()
    return {name: {"lambda": rec["lambda"] or 0.0, "seed": rec["seed"], **probes(variant(rec["file"]))}
            for name, rec in card["pretrain"].items()}


PAPER_TAB1 = {"gpt2": [0.085, 0.048, 0.004, 0.092], "gpt2-large": [0.049, 0.023, 0.025, 0.085],
              "gpt2-xl": [0.040, 0.037, 0.028, 0.038]}  # MultiRC, BoolQ, CB, reward modelling


def tab1() -> dict:
    card = artifacts.committed_card()
    out = {}
    for task in sorted({r["task"] for r in card["finetune"].values()}):
        recs = [r for r in card["finetune"].values() if r["task"] == task]
        d = np.array([r["delta_nores_mean"] for r in recs])
        out[task] = {"seeds": [r["seed"] for r in recs], "delta": d.tolist(), "mean": float(d.mean()),
                     "std": float(d.std(ddof=1)) if len(d) > 1 else 0.0,
                     "accuracy": [r["val_accuracy"] for r in recs],
                     "per_pair": np.mean([r["delta_nores"] for r in recs], 0).tolist(),
                     "before": recs[0]["nores_before"], "train_time_s": [r["train_time_s"] for r in recs]}
    return {"tasks": out, "paper": PAPER_TAB1, "paper_tasks": ["MultiRC", "BoolQ", "CB", "reward modelling"]}


# ---------------------------------------------------------------------------------------------------------
# pruning
def block_scores(model: str, profile: Profile | str = "tiny") -> dict:
    """{block l: held-out linearity score (with residual, paper protocol) of h^(l-1) -> h^l}: the pruning order.
    Every-token states only: no hidden-state extraction of the book's samples."""
    ad = models.adapter(model)
    res_ho = _unpack(_paper_scores(ad, profiles.get(profile)), "all")["res_ho"]
    return {b: float(res_ho[b - 1]) for b in range(1, ad.n_layers + 1)}


def pruning_curves(ad, block_scores: dict, eval_seqs, eval_masks, train_states, ks, distilled: bool,
                   draws: int, cache_key: dict, strategies=prune.STRATEGIES) -> dict:
    """Damage (perplexity, accuracy, fact accuracy) against k for every strategy and mode; the unpruned model at k=0."""
    def compute():
        rows, boot = [], []
        w = resample.weights(len(eval_seqs))  # the held-out sentences, resampled
        base = prune.evaluate(ad, eval_seqs, eval_masks)
        for strategy in strategies:
            for draw in range(draws if strategy == "random" else 1):
                for k in ks:
                    blocks = prune.choose(block_scores, k, strategy, draw)
                    fits = prune.replacements(train_states, blocks)
                    variants = {"remove": {b: None for b in blocks}, "replace": fits}
                    if distilled and k in DISTIL_K and strategy in DISTIL_STRATEGIES and draw == 0:
                        variants["replace + distil"] = artifacts.distilled(strategy, k)
                        assert sorted(variants["replace + distil"]) == blocks, "the stored maps are for other blocks"
                    for mode, subs in variants.items():
                        with prune.pruned(ad, subs):
                            r = prune.evaluate(ad, eval_seqs, eval_masks, per_sequence=True)
                        rows.append([prune.STRATEGIES.index(strategy), draw, k, prune.MODES.index(mode),
                                     r["perplexity"], r["accuracy"], r.get("fact_accuracy", np.nan)])
                        boot.append(prune.resampled_perplexity(r["seq_nll"], r["seq_tokens"], w).round(6))
        return {"rows": np.array(rows, dtype=float), "boot": np.array(boot),
                "base": np.array([base["perplexity"], base["accuracy"], base.get("fact_accuracy", np.nan)])}

    r = cache.cached("sl_prune", {**cache_key, "per_sentence_boot": [resample.N_RESAMPLES, resample.SEED]}, compute)
    cols = ("strategy", "draw", "k", "mode", "perplexity", "accuracy", "fact_accuracy")
    rows = [dict(zip(cols, row)) for row in r["rows"].tolist()]
    for row, b in zip(rows, r["boot"].tolist()):
        row["strategy"] = prune.STRATEGIES[int(row["strategy"])]
        row["mode"] = prune.MODES[int(row["mode"])]
        row["k"], row["draw"] = int(row["k"]), int(row["draw"])
        row["boot"] = {"perplexity": b}
    b = r["base"].tolist()
    return {"base": {"perplexity": b[0], "accuracy": b[1], "fact_accuracy": b[2]}, "rows": rows,
            "order": sorted(block_scores, key=lambda x: block_scores[x], reverse=True)}


def fig7(profile: Profile) -> dict:
    ad = models.adapter(PRUNE_MODEL)
    scores = block_scores(PRUNE_MODEL, profile)
    eval_seqs, eval_masks = _eval_text(ad.tokenizer, PRUNE_SENTENCES)
    train_states = states.all_positions(ad, "train", states.N_TOKENS, profile)["X"]
    digests = sorted(r["sha256"] for r in artifacts.committed_card()["distil"].values())
    out = pruning_curves(ad, scores, eval_seqs, eval_masks, train_states, list(PRUNE_K), True, RANDOM_DRAWS,
                         _key("prune", model=ad.identity, ks=list(PRUNE_K), draws=RANDOM_DRAWS, n=PRUNE_SENTENCES,
                              distilled=digests))
    return {"model": PRUNE_MODEL, "n_layers": len(scores), "block_scores": [scores[b] for b in sorted(scores)],
            **out}


def real(seed: int = 0, profile: Profile | str = "real") -> dict:
    """The real model: linearity scores (both protocols) and pruning by perplexity on its held-out text (a reader's
    own model, ``profile="custom"``, on its own text)."""
    profile = profiles.get(profile)
    model = profile.role("gpt48")
    ad = models.adapter(model)
    # the every-token scores and the pruning first, the book-sample protocol (the one step that needs the hidden
    # states the model-and-text page extracts) last: run beside that page, this one does not wait for it
    scores = block_scores(model, profile)
    val_seqs = states.sentence_ids(ad, "validation", real_tokens(ad, profile, REAL_PRUNE_TOKENS), profile)
    train_states = states.all_positions(ad, "train", real_tokens(ad, profile, REAL_TOKENS), profile)["X"]
    ks = [k for k in REAL_K if k <= len(scores) // 2] or [1]
    prune_out = pruning_curves(ad, scores, val_seqs, None, train_states, ks, False, 1,
                               _key("prune", model=ad.identity, ks=ks, n=real_tokens(ad, profile, REAL_PRUNE_TOKENS),
                                    strategies=REAL_STRATEGIES, **profile.text_key()), REAL_STRATEGIES)
    s = study(model, profile)
    out = {"model": model, "family": s["family"], "n_layers": s["n_layers"], "d": s["d"], "depth": s["depth"],
           "n_tokens": s["n_tokens"], "n_sample": s["n_sample"],
           **{proto: _lists(s[proto]) for proto in ("paper", "paper_nopos0", "sample")},
           "spearman_vs_nonlinearity": _spearman(s["paper"]["update_norm"], 1 - s["paper"]["res_in"]),
           "block_scores": [scores[b] for b in sorted(scores)], "pruning": prune_out}
    b = s["paper_boot"]
    if b:  # the resamples the claims read (jtc_utils.linearity.claims.real_getter)
        out["paper"]["boot"] = {k: b[k].tolist() for k in ("res_in", "nores_in", "update_norm")}
        out["boot"] = {"spearman_vs_nonlinearity": [round(_spearman(u, 1 - r), 6)
                                                     for u, r in zip(b["update_norm"], b["res_in"])]}
    return out


def _stand_in(numbers, model):
    """A stand-in figure: ``numbers(profile, seed)`` gives its numbers, ``model(profile)`` the model it names."""
    def figure(p: Profile, seed: int) -> tuple[dict, dict]:
        return numbers(p, seed), {"profile": p.name, "domain": p.main_domain, "seed": seed,
                                  "n_tokens": states.N_TOKENS, "model": model(p)}
    return figure


def _real_figure(p: Profile, seed: int) -> tuple[dict, dict]:
    return real(seed, p), {"profile": p.name, "model": p.role("gpt48"), "seed": seed, "n_tokens": REAL_TOKENS,
                           "sample_sizes": list(p.subset(REAL_SAMPLE_SIZES))}


EVERY_MODEL = "every zoo model"
TRAINED_MODEL = "tiny-gpt2 (zoo/secretly-linear)"  # the training experiments read their own trained models
# figure id -> the function of the profile and the seed that computes its numbers and parameters
COMPUTE = {
    "sl_fig1": _stand_in(lambda p, seed: fig1(p), lambda p: EVERY_MODEL),
    "sl_fig3": _stand_in(lambda p, seed: fig3(p), lambda p: EVERY_MODEL),
    "sl_fig9": _stand_in(lambda p, seed: fig9(p), lambda p: EVERY_MODEL),
    "sl_fig2": _stand_in(lambda p, seed: fig2(), lambda p: TRAINED_MODEL),
    "sl_fig4": _stand_in(lambda p, seed: fig4(), lambda p: TRAINED_MODEL),
    "sl_fig5": _stand_in(lambda p, seed: fig5(), lambda p: TRAINED_MODEL),
    "sl_tab1": _stand_in(lambda p, seed: tab1(), lambda p: TRAINED_MODEL),
    "sl_fig7": _stand_in(lambda p, seed: fig7(p), lambda p: PRUNE_MODEL),
    "ext_sl_r2family": _stand_in(lambda p, seed: r2family(p), lambda p: p.role("gpt24")),
    "real_sl": _real_figure,
}


def compute(fig: str, s: Setting) -> tuple[dict, dict]:
    """The numbers behind figure ``fig`` of the linearity chapter under setting ``s`` and the parameters that
    produced them (:data:`COMPUTE`): its profile and seed (the chapter reads token counts of its own,
    :data:`jtc_utils.linearity.states.N_TOKENS`, not the setting's sentence sizes)."""
    if fig not in SL_FIGURES:
        raise ValueError(f"unknown linearity figure {fig!r}; known: {', '.join(SL_FIGURES)}")
    return COMPUTE[fig](figure_registry.profile_of(fig, s.profile), s.seed)


# the chapter's figures for a reader's own model (the custom book, jtc_utils.book.custom.plan): page -> kind -> ids
CUSTOM_FIGURES = {"secretly_linear": {CAUSAL: ("real_sl",)}}
