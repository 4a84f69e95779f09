"""Automatic checks for the book's exercises: one function per exercise whose answer is a number or a property.

An exercise's solution cell (tagged ``solution``; ``make student`` blanks it) leaves its result in ``answer``; the
cell after it calls ``check(label, answer)``, which prints ✓ or ✗ with a hint and returns whether the answer passes.
A check compares the answer with the numbers behind the chapter's figures: read from ``book/data`` by default, or
passed as ``data={fig: numbers}`` where the chapter just computed them (the real model's pages, whose test runs use
a subset of sentences). A blank answer (``None``, the student edition's starting point) never passes.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import claims, figdata, linear, zoo
from .early_exit import layers_saved
from .embedded import corpus

# label -> (figures the check reads, check); a check returns None when the answer passes, else a hint
CHECKS: dict[str, tuple[tuple[str, ...], Callable[[Any, dict], str | None]]] = {}


def exercise(label: str, *figs: str):
    """Register the check of exercise ``label``, reading the numbers of ``figs``."""

    def register(fn):
        if label in CHECKS:
            raise ValueError(f"exercise {label!r} registered twice")
        CHECKS[label] = (figs, fn)
        return fn

    return register


class Verdict:
    """What :func:`check` returns: true when the answer solves the exercise. It has already printed its verdict, so
    as the last line of a notebook cell it shows nothing more (no stray ``True``)."""

    __slots__ = ("ok",)

    def __init__(self, ok: bool):
        self.ok = bool(ok)

    def __bool__(self) -> bool:
        return self.ok

    def __eq__(self, other) -> bool:
        return self.ok == bool(other) if isinstance(other, (bool, Verdict)) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.ok)

    def __repr__(self) -> str:
        return f"Verdict({self.ok})"

    def _ipython_display_(self) -> None:
        pass  # printed by check() already


def check(label: str, answer: Any, data: dict | None = None) -> Verdict:
    """Print whether ``answer`` solves exercise ``label`` (with a hint when not); returns a :class:`Verdict`, true
    when it does."""
    if label not in CHECKS:
        raise ValueError(f"no check for exercise {label!r}; exercises with checks: {', '.join(sorted(CHECKS))}")
    figs, fn = CHECKS[label]
    if answer is None or answer is Ellipsis:
        print(f"✗ {label}: no answer yet (set `answer` in the cell above)")
        return Verdict(False)
    numbers = dict(data or {})
    for f in figs:
        if f not in numbers:
            if not figdata.exists(f):
                raise ValueError(f"exercise {label!r} needs the numbers of {f!r}: pass data={{{f!r}: ...}} with "
                                 "what the page computed")
            numbers[f] = figdata.load(f)["data"]
    try:
        problem = fn(answer, numbers)
    except (TypeError, ValueError, KeyError, IndexError) as e:
        problem = f"the answer does not have the expected form ({type(e).__name__}: {e})"
    print(f"✓ {label}: correct" if problem is None else f"✗ {label}: {problem}")
    return Verdict(problem is None)


def _close(answer, expected, tol: float, what: str) -> str | None:
    a = float(answer)
    if not np.isfinite(a) or abs(a - expected) > tol:
        return f"{what} should be within {tol:g} of the figure's number; got {a:.6g}"
    return None


def _p1(d, m) -> np.ndarray:
    return figdata.as_array(d["curves"][m]["p@1"])


def _pairs(r2) -> tuple:
    r2 = figdata.as_array(r2)
    return np.triu_indices(r2.shape[0], k=1), r2


# --- section 3 ------------------------------------------------------------------------------------------------

@exercise("ex-sec3-one-pair", "fig23")
def _(answer, d):
    return _close(answer, figdata.as_array(d["fig23"]["r2_mat"])[2, 4], 1e-6, "r² of the pair 2 → 4")


@exercise("ex-sec3-intercept", "fig23")
def _(answer, d):
    base = figdata.as_array(d["fig23"]["r2_mat"])[2, 4]
    a = float(answer)
    if a == base:
        return "that is the r² without an intercept: append the constant 1 and refit"
    return _close(a, base, 0.05, "with so many samples per dimension, the r² with an intercept")


@exercise("ex-sec3-gap", "fig23")
def _(answer, d):
    iu, m = _pairs(d["fig23"]["r2_mat"])
    gap = (m - figdata.as_array(d["fig23"]["r2_id"]))[iu]
    k = int(np.argmax(gap))
    best = (int(iu[0][k]), int(iu[1][k]))
    return None if tuple(int(v) for v in answer) == best else "not the pair with the largest gap (l < l' only)"


# --- section 4 ------------------------------------------------------------------------------------------------

@exercise("ex-sec4-precision", "fig4")
def _(answer, d):
    L = d["fig4"]["n_layers"]
    return _close(answer, _p1(d["fig4"], "id")[L // 2], 1e-9, "Precision@1 of id at the middle layer")


@exercise("ex-sec4-half", "fig4")
def _(answer, d):
    hits = np.flatnonzero(_p1(d["fig4"], "mat") >= 0.5)
    first = int(hits[0]) if hits.size else None
    return None if int(answer) == first else "not the first layer where mat's Precision@1 reaches 0.5"


# --- section 5 ------------------------------------------------------------------------------------------------

@exercise("ex-sec5-one-lambda", "fig8")
def _(answer, d):
    e = d["fig8"]["early"]["mat"]
    i = int(np.argmin(np.abs(np.asarray(e["lambdas"]) - 0.8)))
    return _close(answer, e["x"][i], 1e-9, "the mean exit layer at λ = 0.8")


@exercise("ex-sec5-target", "fig8")
def _(answer, d):
    f = d["fig8"]
    s = {m: layers_saved(f["early"][m]["x"], f["early"][m]["y"], f["n_layers"], 0.90)["saved"] for m in ("mat", "id")}
    return _close(answer, s["mat"] - s["id"], 1e-9, "layers mat saves over id at a 90% target")


@exercise("ex-sec5-bert", "fig9")
def _(answer, d):
    return _close(answer, d["fig9"]["saved"]["mat"]["saved"], 1e-9, "layers saved by mat at 95% (BERT-style)")


# --- section 6 ------------------------------------------------------------------------------------------------

@exercise("ex-sec6-single")
def _(answer, d):
    return None if float(answer) < 1e-4 else "the two ways should agree to float precision (below 1e-4)"


def _best_sub(d) -> str:
    L = d["n_layers"]
    means = {m: float(np.nanmean(_p1(d, m)[:L])) for m in d["curves"]}
    return max(means, key=means.get)


@exercise("ex-sec6-best", "fig10")
def _(answer, d):
    return None if answer == _best_sub(d["fig10"]) else "not the mapping with the highest mean Precision@1"


@exercise("ex-sec6-real", "real_fig10")
def _(answer, d):
    f = d["real_fig10"]
    a, b = _p1(f, "mat_attn")[:f["n_layers"]], _p1(f, "mat_ffn")[:f["n_layers"]]
    done = np.isfinite(a)
    return _close(answer, float((a[done] > b[done]).mean()), 1e-9, "the share of start layers")


# --- appendix B -----------------------------------------------------------------------------------------------

@exercise("ex-appb-gap", "fig14", "fig27")
def _(answer, d):
    gap = np.abs(_p1(d["fig14"], "mat") - _p1(d["fig27"], "mat")).max()
    return _close(answer, gap, 1e-9, "the largest |P@1(mat) news - encyclopedia|")


@exercise("ex-appb-r2", "fig12", "fig23")
def _(answer, d):
    mean = {dom: figdata.as_array(d[f]["r2_mat"])[_pairs(d[f]["r2_mat"])[0]].mean()
            for dom, f in (("news", "fig12"), ("encyclopedia", "fig23"))}
    return None if answer == max(mean, key=mean.get) else "compare the mean r²(mat) over the pairs l < l'"


@exercise("ex-appb-saved", "fig20")
def _(answer, d):
    return _close(answer, d["fig20"]["saved"]["mat"]["saved"], 1e-9, "layers saved by mat at 95% on news")


# --- appendix D -----------------------------------------------------------------------------------------------

_SIZES = ("fig26", "fig27", "fig28", "fig4")


@exercise("ex-appd-gain", *_SIZES)
def _(answer, d):
    for f in _SIZES:
        L = d[f]["n_layers"]
        if (p := _close(answer[f], (_p1(d[f], "mat") - _p1(d[f], "id"))[:L].mean(), 1e-9, f"{f}'s mean gain")):
            return p
    return None


@exercise("ex-appd-r2", "fig22", "fig23", "fig24", "fig2")
def _(answer, d):
    means = {f: figdata.as_array(d[f]["r2_mat"])[_pairs(d[f]["r2_mat"])[0]].mean() for f in ("fig22", "fig23", "fig24", "fig2")}
    return None if answer == max(means, key=means.get) else "not the figure with the highest mean r²(mat)"


@exercise("ex-appd-bert", "fig29")
def _(answer, d):
    hits = np.flatnonzero(_p1(d["fig29"], "mat") > 0.25)
    return None if hits.size and int(answer) == int(hits[0]) else "not the first layer with Precision@1 above 0.25"


# --- the claims page ------------------------------------------------------------------------------------------

@exercise("ex-claims-real", "claims", "claims_real")
def _(answer, d):
    stand = {r["id"] for r in d["claims"] if r["holds"] is False}
    real = {r["id"] for r in d["claims_real"] if r["holds"] is True}
    return None if set(answer) == stand & real else "compare the shape verdicts of the two tables, claim by claim"


@exercise("ex-claims-almost")
def _(answer, d):
    figs = claims.available(claims.default_get, ("fig2", "fig3", "fig12", "fig13", "fig22", "fig23", "fig24",
                                                  "fig25"))
    share = min(linear.r2_summary(figdata.as_array(v["r2_mat"]), figdata.as_array(v["r2_id"]))["share_mat_above_id"] for v in figs.values())
    return _close(answer, share, 1e-9, "the smallest share over the figures")


@exercise("ex-claims-magnitudes")
def _(answer, d):
    n = sum(bool(r["magnitude"]["holds"]) for r in (f(claims.default_get) for f in claims.CLAIMS.values())
            if r["magnitude"])
    return None if int(answer) == n else "judge the magnitude rules without the mask (call the claim functions)"


# --- the embedded world and the real model --------------------------------------------------------------------

@exercise("ex-world-best")
def _(answer, d):
    gpt = [m for m in zoo.ZOO if zoo.load_card(m)["family"] == "gpt2"]
    best = min(gpt, key=lambda m: zoo.load_card(m)["heldout"]["loss"])
    return None if answer == best else "compare the held-out loss on the model cards (GPT-style models)"


@exercise("ex-world-length")
def _(answer, d):
    n = np.mean([sum(lab != "punct" for _, lab in s.words()) for s in corpus.pool("news", "validation", n=1000)])
    return _close(answer, n, 1e-9, "the mean number of words")


@exercise("ex-world-check", "check")
def _(answer, d):
    mat, idv = figdata.as_array(d["check"]["mat"])[:-1], figdata.as_array(d["check"]["id"])[:-1]
    return None if int(answer) == int((mat > idv).sum()) else "count the layers l < L where mat is above id"


@exercise("ex-real-ppl", "real_textfit", "real_textfit_bbc")
def _(answer, d):
    better = "wiki" if d["real_textfit"]["perplexity"] < d["real_textfit_bbc"]["perplexity"] else "bbc"
    return None if answer == better else "compare the two perplexities"


@exercise("ex-real-first", "real_norms")
def _(answer, d):
    f = d["real_norms"]
    mid = f["n_layers"] // 2
    return _close(answer, figdata.as_array(f["ratio_first"])[mid], 1e-9, "the ratio at the middle layer")


@exercise("ex-real-gold", "real_textfit")
def _(answer, d):
    return _close(answer, d["real_textfit"]["gold_p1"], 1e-9, "the final layer's Precision@1 against the gold token")


# --- the papers around it -------------------------------------------------------------------------------------

@exercise("ex-lenses-read", "lens_table")
def _(answer, d):
    t = d["lens_table"]
    mid = t["quarters"][1]
    per_k = {lab: r["p@1"][mid] / (r["params"] / 1e3) for lab, r in t["lenses"].items() if r["params"] > 0}
    return None if answer == max(per_k, key=per_k.get) else "not the best lens per thousand parameters"


@exercise("ex-lenses-rrr")
def _(answer, d):
    a, b = (float(v) for v in answer)
    return None if abs(a - b) <= 1e-6 * abs(b) else "the two train errors should agree to 1e-6 (relative)"


@exercise("ffn-ex-coverage", "geva_tab2")
def _(answer, d):
    t = d["geva_tab2"]["models"]["tiny-gpt2"]
    return _close(answer, t["values"] - t["gaussian"], 1e-9, "coverage(values) - coverage(Gaussian)")


@exercise("ffn-ex-saturation", "geva_tab10")
def _(answer, d):
    hist = np.asarray(d["geva_tab10"]["hist"], dtype=float)
    return None if int(answer) == int(np.argmax(hist)) + 1 else "not the layer with the most saturation events"


@exercise("sl-ex-null")
def _(answer, d):
    for n in (50, 100, 1000, 10000):
        expected = 48 / (n - 1)
        if abs(float(answer[n]) - expected) > 0.25 * expected:
            return f"for n = {n} the null score of Gaussian noise is close to d/(n-1) = {expected:.4f}"
    return None


@exercise("sl-ex-identity")
def _(answer, d):
    a, b = (float(v) for v in answer)
    return None if abs(a - b) <= 1e-8 else "the recomputed score should equal nores_in to 1e-8"
