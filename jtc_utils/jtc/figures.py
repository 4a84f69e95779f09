"""Which paper figure shows what, and the one function that computes the numbers behind each.

The notebooks call :func:`compute`; the regression tests call it too and compare with ``book/data/<fig>.json``.
"""

from __future__ import annotations

import numpy as np

from dataclasses import dataclass

import pandas as pd

from jtc_utils.core.analysis import early_exit, linear, readout, submodules
from jtc_utils.core.infra import ordering
from jtc_utils.core.data import profiles, real_text
from jtc_utils.core.models.models import CAUSAL, ENCODER, MASKED
from jtc_utils.base import validate
from jtc_utils.core.analysis.experiment import shared
from jtc_utils.core.data.profiles import Profile
from jtc_utils.core.data.setting import Setting
from jtc_utils.core.analysis.readout import token_strings
from jtc_utils.evidence import figdata, figure_registry

from . import activations, top_tokens

# paper figure -> (kind, model role, domain) on the stand-in; spec section 8
STAND_IN = {
    "fig2": ("r2", "gpt48", "main"),
    "fig3": ("r2", "bert24", "main"),
    "fig12": ("r2", "gpt24", "second"),
    "fig13": ("r2", "bert24", "second"),
    "fig22": ("r2", "gpt12", "main"),
    "fig23": ("r2", "gpt24", "main"),
    "fig24": ("r2", "gpt36", "main"),
    "fig25": ("r2", "bert12", "main"),
    # section 4 and appendices B, D: Precision@k and Surprisal of mat and id
    "fig4": ("pk", "gpt48", "main"),
    "fig5": ("surp", "gpt48", "main"),
    "fig6": ("pk", "bert24", "main"),
    "fig7": ("surp", "bert24", "main"),
    "fig14": ("pk", "gpt24", "second"),
    "fig15": ("surp", "gpt24", "second"),
    "fig16": ("pk", "bert24", "second"),
    "fig17": ("surp", "bert24", "second"),
    "fig26": ("pk", "gpt12", "main"),
    "fig27": ("pk", "gpt24", "main"),
    "fig28": ("pk", "gpt36", "main"),
    "fig29": ("pk", "bert12", "main"),
    "fig30": ("surp", "gpt12", "main"),
    "fig31": ("surp", "gpt24", "main"),
    "fig32": ("surp", "gpt36", "main"),
    "fig33": ("surp", "bert12", "main"),
    # section 5 and appendix B: early exit
    "fig8": ("ee", "gpt24", "main"),
    "fig9": ("ee", "bert24", "main"),
    "fig20": ("ee", "gpt24", "second"),
    "fig21": ("ee", "bert24", "second"),
    # Table 1 and the automatic plausibility study (BERT-large on news)
    "table1": ("table1", "bert24", "second"),
    "plausibility": ("plausibility", "bert24", "second"),
    # section 6 and appendix B: sub-module shortcuts (GPT-style, as in the paper)
    "fig10": ("parts_pk", "gpt24", "main"),
    "fig11": ("parts_surp", "gpt24", "main"),
    "fig34": ("parts_pk", "gpt24", "main"),
    "fig35": ("parts_pk", "gpt24", "main"),
    "fig18": ("parts_pk", "gpt24", "second"),
    "fig19": ("parts_surp", "gpt24", "second"),
    # beyond the paper: section 6 on the BERT-style stand-in of BERT-large (the paper ran it on GPT-2 only)
    "ext_bert_fig10": ("parts_pk", "bert24", "main"),
    "ext_bert_fig11": ("parts_surp", "bert24", "main"),
    # beyond the paper: Precision@1 by the kind of token predicted
    "labels_gpt48": ("labels", "gpt48", "main"),
    "labels_bert24": ("labels", "bert24", "main"),
}


# the real model (profile "real", offline): the same figure kinds on SmolLM2-135M in every GPT role and on the
# headless encoder all-MiniLM-L6-v2 in the BERT roles of section 3 (it makes no token predictions); Wikipedia leads
# as the main domain and BBC News as the second
REAL_OF = ("fig2", "fig3", "fig4", "fig5", "fig8", "fig10", "fig11", "fig12", "fig13", "fig14", "fig15", "fig20")
# every figure -> (kind, model role, domain): the stand-in's, their real twins, and beyond the paper, for the real
# model: top-5 lists in place of Table 1, the norms of the hidden states by position (massive activations), r² with
# and without the first position, and how well the model fits the text
FIGURES = {
    **STAND_IN,
    **{figure_registry.REAL_PREFIX + f: STAND_IN[f] for f in REAL_OF},
    "real_toplists": ("toplists", "gpt48", "main"),
    "real_norms": ("norms", "gpt48", "main"),
    "real_r2_first": ("r2_first", "gpt48", "main"),
    "real_r2_first_bbc": ("r2_first", "gpt48", "second"),
    "real_textfit": ("textfit", "gpt48", "main"),
    "real_textfit_bbc": ("textfit", "gpt48", "second"),
    "textfit": ("textfit", "gpt48", "main"),  # the stand-in's, for comparison
}
# the real model's figures are regression-tested on a subset (the full set takes minutes to extract): the build saves
# these figures computed at REAL_CHECK_SIZES as book/data/real_check.json, the tests recompute them and compare;
# `make test` re-executes the pages on the same subset (JTC_REAL_SUBSET), so the two share the cache
REAL_CHECK = ("real_fig2", "real_fig4", "real_fig5", "real_fig8")
REAL_CHECK_SIZES = profiles.REAL_SUBSET
# section 6 on the real model's 30 layers: the wavefront over all start layers costs ~15 forward passes per mapping,
# so these figures start from every fifth layer, on the first validation sentences (stated on the page)
REAL_PARTS = {"start_every": 5, "n_val": 300, "n_train": 3000}

# which Precision@k each sub-module figure shows
PARTS_K = {"fig10": 1, "fig18": 1, "fig34": 5, "fig35": 10, "ext_bert_fig10": 1, "real_fig10": 1}


def setting(fig: str, profile: Profile | str = "tiny") -> tuple[str, str, str]:
    """``(kind, model, domain)`` of a paper figure under a profile (a :class:`Profile` or its name)."""
    if fig not in FIGURES:
        raise ValueError(f"unknown figure {fig!r}; known: {', '.join(FIGURES)}")
    kind, role, dom = FIGURES[fig]
    p = figure_registry.profile_of(fig, profile)
    return kind, p.role(role), p.domain(dom)


NO_FIT = ("norms", "textfit")  # kinds whose numbers read no fitted map


def compute(fig: str, s: Setting) -> tuple[dict, dict]:
    """The numbers behind paper figure ``fig`` under setting ``s`` and the parameters that produced them; numbers
    read from maps fitted on fewer training samples than the model's width say so
    (:func:`jtc_utils.core.analysis.linear.regime_note`)."""
    profile = figure_registry.profile_of(fig, s.profile)
    kind, model, domain = setting(fig, profile)
    exp = shared(model, domain, profile, s.n_train, s.n_val, s.seed)
    data, params = _compute(fig, profile, kind, exp, s.seed)
    if kind in NO_FIT or "skipped" in data:
        return data, params
    return {**data, **linear.regime_note(params["n_train"], exp.adapter.d)}, params


def _compute(fig: str, profile: Profile, kind: str, exp, seed: int) -> tuple[dict, dict]:
    model, domain = exp.model_name, exp.domain
    params = {
        "profile": profile.name,
        "model": model,
        "paper_model": profiles.PAPER_NAME.get(model, model),
        "domain": domain,
        "seed": seed,
        "n_train": len(exp.train),
        "n_val": len(exp.val),
    }
    head = {"model": model, "domain": domain, "n_layers": exp.n_layers}
    return KINDS[kind](Work(fig, profile, exp, seed, head, params)), params


@dataclass
class Work:
    """What a figure kind's computation reads: the figure, its profile and experiment, the seed, the record's
    ``head`` (model, domain, layers) and the ``params`` it may add to (the sizes it computed on)."""

    fig: str
    profile: Profile
    exp: object
    seed: int
    head: dict
    params: dict


PK_KEYS, SURPRISAL_KEYS = ("p@1", "p@5", "p@10"), ("surprisal", "surprisal_lo", "surprisal_hi")


def _readout(w: Work, keys) -> dict:
    c = readout.curves(w.exp.predictions, seed=w.seed)
    return {**w.head, "curves": {m: _pick(c[m], keys) for m in c}}


def parts_experiment(exp):
    """The experiment a real model's sub-module figures read (:data:`REAL_PARTS`: at most 3,000 training and the
    first 300 validation sentences of ``exp``'s), whose sub-module fits their claims' instrument check sees."""
    sub = REAL_PARTS
    n_train, n_val = min(sub["n_train"], len(exp.train)), min(sub["n_val"], len(exp.val))
    return shared(exp.model_name, exp.domain, exp.profile, n_train, n_val, exp.seed)


def _parts(w: Work) -> tuple[dict, dict]:
    """The sub-module maps' per-sample numbers as curves, and the record's head; a real model's depth: every fifth
    start layer (:data:`REAL_PARTS`)."""
    exp, head = w.exp, w.head
    if w.profile.one_model:
        sub = REAL_PARTS
        ex = parts_experiment(exp)
        w.params.update(n_train=len(ex.train), n_val=len(ex.val), start_every=sub["start_every"])
        starts = range(0, ex.n_layers + 1, sub["start_every"])
        r = submodules.per_sample(ex, start_layers=starts)
        head = {**head, "start_layers": list(starts) + [ex.n_layers]}
    else:
        r = submodules.per_sample(exp)  # cached on disk: the figures of one model share it
    L = exp.n_layers if not w.profile.one_model else ex.n_layers
    done = set(head.get("start_layers", range(L + 1)))
    # how many tokens each cast's top-1 takes over the samples, per start layer: one token for every sample is an
    # output that does not depend on the state it starts from (instruments.state_check)
    head = {
        **head,
        "distinct_top1": {
            m: [int(np.unique(t[layer]).size) if layer in done else None for layer in range(L + 1)]
            for m, t in r["top1"].items()
        },
    }
    return readout.curves(r, seed=w.seed), head


def _parts_pk(w: Work) -> dict:
    c, head = _parts(w)
    k = PARTS_K[w.fig]
    return {**head, "ks": [k], "curves": {m: _pick(c[m], (f"p@{k}",)) for m in c}}


def _parts_surp(w: Work) -> dict:
    c, head = _parts(w)
    return {**head, "curves": {m: _pick(c[m], SURPRISAL_KEYS) for m in c}}


# figure kind -> the computation of its numbers from a :class:`Work` (every kind of :data:`FIGURES`)
KINDS = {
    "r2": lambda w: w.exp.layer_r2(),
    "pk": lambda w: _readout(w, PK_KEYS),
    "surp": lambda w: _readout(w, SURPRISAL_KEYS),
    "parts_pk": _parts_pk,
    "parts_surp": _parts_surp,
    "ee": lambda w: {**w.head, **early_exit.early_exit_curves(w.exp)},
    "table1": lambda w: {**w.head, **table1(w.exp)},
    "toplists": lambda w: {**w.head, **table1(w.exp, samples=toplist_samples(w.exp))},
    "norms": lambda w: {**w.head, **activations.norms_by_position(w.exp)},
    "r2_first": lambda w: {**w.head, **activations.r2_without_first(w.exp)},
    "textfit": lambda w: {**w.head, **readout.text_fit(w.exp)},
    "plausibility": lambda w: {**w.head, **(needs_labels(w.exp, "plausibility") or top_tokens.plausibility(w.exp))},
    "labels": lambda w: {**w.head, **(needs_labels(w.exp, "labels") or {"by_label": readout.by_label(w.exp)})},
}


def _pick(curve: dict, keys) -> dict:
    """The curves ``keys`` of one mapping, with their resamples (``boot``) where they have them."""
    out = {k: curve[k] for k in keys}
    boot = {k: curve["boot"][k] for k in keys if k in curve.get("boot", {})}
    return {**out, "boot": boot} if boot else out


def table1_samples(exp, per_label=("number", "function")) -> list[int]:
    """The validation samples Table 1 shows: the shortest sentence whose masked slot is a number (like the paper's
    "surgery in [MASK]") and the shortest whose slot is a function word (like "asked to [MASK] continue")."""
    labels = exp.val.labels
    lengths = [len(x) for x in exp.val.input_ids]
    return [
        min((i for i, lab in enumerate(labels) if lab == want), key=lambda i: (lengths[i], i)) for want in per_label
    ]


# the paper's Table 1 (BERT-large on Leipzig news): the id columns at layers 4 and 12 and the final column depend
# only on the input, so the paper profile must reproduce them token for token (spec 5)
PAPER_TABLE1 = {
    "aldridge had shoulder surgery in [MASK].": {
        "id_4": ["fellowship", "employment", "agreement", "##ostal", "##com"],
        "id_12": ["cyclist", "emergencies", "seniors", "cycling", "pennsylvania"],
        "final": ["september", "november", "december", "august", "july"],
    },
    "on your next view you will be asked to [MASK] continue reading.": {
        "id_4": ["##com", "accreditation", "©", "fellowship", "summer"],
        "id_12": ["be", "undergo", "spartans", "seniors", "*"],
        "final": ["please", "simply", "also", "again", "immediately"],
    },
}


def toplist_samples(exp, n: int = 2, min_prefix: int = 8) -> list[int]:
    """Validation samples for the real model's top-5 lists: the first ``n`` whose prefix has at least
    ``min_prefix`` tokens (a prediction with some context) and whose next token exists."""
    out = [
        i
        for i, (ids, p) in enumerate(zip(exp.val.input_ids, exp.val.positions))
        if p + 1 >= min_prefix and p + 1 < len(ids)
    ]
    return out[:n]


def table1(exp, sentences=None, samples=None) -> dict:
    """The numbers behind Table 1: top-5 tokens of id and mat at about L/6 and L/2 and of the final model, for
    ``sentences`` typed with [MASK] or, by default, the paper's two sentences on real text and two validation
    samples (:func:`table1_samples`) on the embedded corpus. Also the checks of claim C14: the final column is the
    model's own output, and the id columns come out the same from a fresh single-sentence forward pass."""
    import torch

    ad = exp.adapter
    real_text = exp.val.labels[0] is None
    if sentences is None and samples is None and real_text:
        sentences = list(PAPER_TABLE1)
    if sentences is None:
        idx = (
            table1_samples(exp)
            if samples is None
            else validate.index_list(samples, "samples", len(exp.val), "validation samples")
        )
        inputs = [(list(exp.val.input_ids[i]), int(exp.val.positions[i]), top_tokens.sample_text(exp, i)) for i in idx]
        t = top_tokens.top_tokens_of_samples(exp, idx)
    else:
        idx = None
        inputs = [(*top_tokens.encode(ad, x), x) for x in sentences]
        t = pd.concat([top_tokens.top_tokens(exp, x) for x in sentences])
    layers = top_tokens.default_layers(exp.n_layers)
    final_ok, id_ok = True, True
    for ids, pos, name in inputs:
        with torch.inference_mode():
            logits = ad.model(input_ids=torch.tensor([ids], device=ad.device)).logits[0, pos]
        final = token_strings(ad, ordering.top_k(logits[None], 5)[0][0].tolist())
        final_ok &= final == t.loc[name]["final"].tolist()
        H = top_tokens.states_at(ad, ids, pos)[:, None]
        for layer in layers:
            fresh = top_tokens.top_ids(exp, H, [layer], "id", 5)[0, 0]
            id_ok &= token_strings(ad, fresh) == t.loc[name][top_tokens.column("id", layer)].tolist()
    out = {
        "samples": idx,
        "layers": layers,
        "sentences": [name for _, _, name in inputs],
        "columns": list(t.columns),
        "rows": [[name, rank, *t.loc[(name, rank)].tolist()] for name, rank in t.index],
        "final_matches_model": bool(final_ok),
        "id_deterministic": bool(id_ok),
    }
    if all(x in PAPER_TABLE1 for x in out["sentences"]):
        out["matches_paper"] = {
            x: {c: t.loc[x][c].tolist() == want for c, want in PAPER_TABLE1[x].items() if c in t.columns}
            for x in out["sentences"]
        }
    return out


def needs_labels(exp, kind: str):
    """Plausibility and the label breakdown need the embedded corpus's word labels; on real text they are skipped
    with the reason (the paper's plausibility study was done by hand)."""
    if exp.val.labels[0] is None:
        return {
            "skipped": f"'{kind}' needs the word labels of the embedded corpus; real text has none (the paper's "
            f"plausibility numbers come from a human annotator)"
        }
    return None


def table1_frame(data: dict):
    """Table 1 back as a DataFrame from its stored numbers."""
    import pandas as pd

    df = pd.DataFrame(data["rows"], columns=["sentence", "rank", *data["columns"]])
    return df.set_index(["sentence", "rank"])


def real_model_line() -> str:
    """One line on how well the real model fits its text (perplexity on each domain's validation sentences), from
    the numbers the page "A real model, offline" saved, for the chapters' real-model sections."""
    parts = []
    for fig in ("real_textfit", "real_textfit_bbc"):
        rec = figdata.load(fig)
        d = rec["data"]
        parts.append(f"perplexity {d['perplexity']:.1f} on {d['domain']} ({d['ppl_tokens']} tokens)")
    return f"{rec['params']['model']}: " + "; ".join(parts)


# ---- the records the chapters save beside the figures (declared with the figures: .paper) -------------------------


def real_check(fig: str, s: Setting) -> tuple[dict, dict]:
    """The real model's check figures (:data:`REAL_CHECK`) computed at :data:`REAL_CHECK_SIZES`, which the tests
    recompute and compare (``real_check``)."""
    n_tr, n_va = REAL_CHECK_SIZES
    data = {f: compute(f, s.sized(n_tr, n_va))[0] for f in REAL_CHECK}
    return data, {"profile": "real", "figures": list(REAL_CHECK), "n_train": n_tr, "n_val": n_va, "seed": s.seed}


def data_cards(fig: str, s: Setting) -> tuple[dict, dict]:
    """The real profile's data card of each text source: what each step of the splitter and filters keeps
    (``real_data_cards``)."""
    return {d: real_text.data_card(d, seed=s.seed) for d in real_text.SOURCES}, {"profile": "real", "seed": s.seed}


def world_check(fig: str, s: Setting) -> tuple[dict, dict]:
    """Precision@1 of mat and id from every layer of the deepest GPT-style stand-in: whether the generated world
    leaves room for mat to beat id (``world_check``, the embedded world's page)."""
    p = s.profile
    exp = shared(p.role("gpt48"), p.main_domain, p, s.n_train, s.n_val, s.seed)
    curves = readout.layer_curves(exp, ks=(1,))
    return (
        {"layer": list(range(exp.n_layers + 1)), "p@1_mat": curves["mat"]["p@1"], "p@1_id": curves["id"]["p@1"]},
        {"model": exp.model_name, "domain": exp.domain},
    )


RECORDS = {"real_check": real_check, "real_data_cards": data_cards, "world_check": world_check}


# ---- on a reader's own model (the custom book, jtc_utils.book.custom.plan) ----------------------------------------

# page -> kind of model -> the figures the page computes for it
CUSTOM_FIGURES = {
    "real_model": {CAUSAL: ("real_textfit", "real_norms"), MASKED: ("real_norms",), ENCODER: ("real_norms",)},
    "sec3_linear_shortcuts": {
        CAUSAL: ("fig2", "real_r2_first"),
        MASKED: ("fig3", "real_r2_first"),
        ENCODER: ("fig3", "real_r2_first"),
    },
    "sec4_predictions": {CAUSAL: ("fig4", "fig5", "real_toplists"), MASKED: ("fig6", "fig7")},
    "sec5_early_exit": {CAUSAL: ("fig8",), MASKED: ("fig9",)},
    "sec6_submodules": {CAUSAL: ("fig10", "fig11"), MASKED: ("ext_bert_fig10", "ext_bert_fig11")},
    "appendix_b_news": {
        CAUSAL: ("fig12", "fig14", "fig15", "fig20", "real_r2_first_bbc"),
        MASKED: ("fig13", "fig16", "fig17", "fig21"),
        ENCODER: ("fig13",),
    },
}
CLAIMED = (
    "fig2",
    "fig3",
    "fig4",
    "fig5",
    "fig6",
    "fig7",
    "fig8",
    "fig9",
    "fig10",
    "fig11",
    "fig12",
    "fig13",
    "fig14",
    "fig15",
    "fig16",
    "fig17",
    "fig20",
    "fig21",
)  # the claims' figures a reader's model may lack
SIZES = ("fig22", "fig23", "fig24", "fig25", "fig26", "fig27", "fig28", "fig29", "fig30", "fig31", "fig32", "fig33")
NO_PREDICTIONS = "a headless encoder has no masked-LM head, so it makes no token predictions"


def custom_absent(kind: str, news: bool, family: str, ran: set, news_option: str) -> dict:
    """Why each figure that the claims read does not exist for a reader's model of ``kind`` (``ran``: the figures
    its custom book computes; ``news_option``: the option that gives the second text), so that the claims that need
    only such figures get no verdict and say so."""
    out = {}
    for fig in CLAIMED:
        if fig in ran:
            continue
        _, role, domain = FIGURES[fig]
        if domain == "second" and not news:
            out[fig] = f"no second text was given ({news_option})"
        elif FIGURES[fig][0] in ("parts_pk", "parts_surp") and kind == CAUSAL:
            out[fig] = f"the book has no block runner for the family {family}"
        elif role.startswith("gpt"):
            out[fig] = f"the model is a {kind}: GPT-2's figures need a decoder"
        elif kind == CAUSAL:
            out[fig] = "the model is a decoder: BERT's figures need a masked LM"
        else:
            out[fig] = NO_PREDICTIONS
    for fig in SIZES:
        out[fig] = "the custom profile has one model, not four sizes trained alike"
    out["plausibility"] = "it needs the word classes of the embedded corpus; a reader's text has none"
    out["table1"] = "it shows the paper's two Leipzig sentences on BERT-large"
    return out
