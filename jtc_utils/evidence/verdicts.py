"""How a claim's words become a rule, and how sure a verdict is.

* :data:`LEXICON`: the one reading of each vague word the papers' claims use ("every", "most", "close to zero",
  "substantially", ...), the same for every claim of every paper; a rule takes its thresholds from :func:`value`.
* The bootstrap: a figure of means over samples carries ``boot``, each mean under
  :data:`jtc_utils.core.infra.resample.N_RESAMPLES` resamples (the same draws for every figure on the same samples), and
  training seeds are resampled too (:func:`replicate`). A rule's *margin* is positive on the claim's side;
  :func:`decide` says **holds** or **fails** when at least :data:`LEVEL` of the replicates are on one side, else
  **undecided**, with its interval (:func:`interval`); a margin of exactly zero is on neither side. Training seeds
  alone are judged by their sign test (:func:`seed_test`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from jtc_utils.core.infra import resample

from .registry import get as registered

LEVEL = 0.95


@dataclass(frozen=True)
class Reading:
    """One entry of the lexicon: the words it covers, how they are read, the number the reading uses (None where it
    needs none) and why."""

    words: tuple[str, ...]
    reading: str
    value: float | None
    why: str


# Written from the words, the same reading for every claim of every paper (when, and what a review added since:
# :data:`jtc_utils.evidence.claims.RULES_NOTE`).
LEXICON = {
    "every": Reading(
        (
            "every",
            "all",
            "across all layers",
            "across the network",
            "consistently",
            "everywhere",
            "always",
            "in both models",
            "each of",
            "for all values of k",
            "from a certain layer on",
        ),
        "the condition at every point it ranges over (every layer l < L, pair, model, mapping, seed); the margin is "
        "the smallest of the points' margins",
        None,
        "a universal word admits no exception; layer L, where every map is the model's own output, is left out",
    ),
    "most": Reading(
        ("most", "at most layers", "the majority", "removes most of"),
        "more than half: of the points (the margin is the share of points on the claim's side minus one half), or "
        "of an amount (the share of it minus one half)",
        0.5,
        "'most' means more than half; nothing in the sentences asks for more",
    ),
    "often": Reading(
        ("often", "frequently", "in many cases"),
        "at a quarter of the points or more: the margin is the share of points on the claim's side minus a quarter",
        0.25,
        "weaker than 'most' (more than half) and more than now and then; a quarter is the lexicon's coarsest share "
        "(the one 'late' uses)",
    ),
    "portion": Reading(
        ("a substantial portion", "a substantial share", "a large part"),
        "a share of a whole of at least a fifth: the margin is the share minus 0.2",
        0.2,
        "the 'substantially' amount (a fifth of the larger value) with the whole as the larger value",
    ),
    "better": Reading(
        (
            "better",
            "beats",
            "outperforms",
            "improves",
            "higher",
            "lower",
            "more",
            "less",
            "above",
            "below",
            "brighter",
            "wins",
            "saves more",
        ),
        "two numbers: the difference, on the claim's side; two curves with no quantifier: the mean over the points "
        "both cover of the pointwise difference",
        None,
        "a comparison of two results as wholes, with no word saying where, compares their averages; where the "
        "sentence says where ('at every layer', 'at most layers'), that word decides instead",
    ),
    "close to zero": Reading(
        (
            "close to zero",
            "near 0",
            "near or below 0",
            "fails",
            "barely changes",
            "a small fraction",
            "a few (as a share of a whole)",
        ),
        "at most 0.05 on a quantity whose scale is 0 to 1 (precision, r², share, rate)",
        0.05,
        "a third of the smallest difference the JTC paper calls a large gain (15%, introduction): a value this "
        "close to 0 is far from anything the papers count as an effect",
    ),
    "similar": Reading(
        ("similar", "the same", "as well as", "at least as well as"),
        "two values or curves differ by at most the 'close to zero' amount (0.05 on a 0-1 scale; for curves, the "
        "mean absolute difference); 'at least as well as' is better or similar",
        0.05,
        "a difference that is close to zero is no difference; the same number as 'close to zero', so one word "
        "cannot be read more loosely than the other",
    ),
    "substantially": Reading(
        (
            "substantially",
            "much",
            "far",
            "by a large margin",
            "markedly",
            "far more",
            "strongly",
            "dominant",
            "strong",
            "weak (substantially below)",
            "small next to (substantially below)",
        ),
        "the gap is at least a fifth of the larger of the two values: (a - b) >= 0.2 max(|a|, |b|); the margin is "
        "(a - b) / max(|a|, |b|) - 0.2",
        0.2,
        "the JTC paper's own example of a large margin is 0.2 of Precision@1's unit scale ('by more than 0.2'); "
        "read as a fifth of the values' size, the same words serve precisions, rates and surprisals (nats)",
    ),
    "sharp": Reading(
        ("sharp", "sharply", "ascent", "collapse"),
        "a change over the named window that is substantially larger (see 'substantially') than the change of each "
        "other curve of the figure over the same window",
        None,
        "the sentence remarks on one curve; a rise or fall that every curve of the figure shares is not a feature "
        "of that curve",
    ),
    "about": Reading(
        ("~", "about", "≈", "x%", "a stated value"),
        "magnitudes only (the paper profile): within 0.05 of the stated value on a 0-1 scale",
        0.05,
        "the same amount as 'close to zero': a number this close to the paper's is the paper's number",
    ),
    "range": Reading(
        ("a-b", "between a and b", "a stated range"),
        "magnitudes only: within the stated range widened by the 'about' amount at each end",
        0.05,
        "the range's ends are numbers stated by the paper, each read as 'about'",
    ),
    "depth": Reading(
        ("layer l of L", "the first ten layers", "early layers", "from layer ~7", "till layer 44"),
        "a layer number of a model with L_paper layers is read at the same relative depth of a model with L: "
        "round(l L / L_paper)",
        None,
        "the stand-ins are shallower than the paper's models; relative depth is what the sentences locate",
    ),
    "late": Reading(
        ("the last layers", "towards the end", "late", "early", "the very early layers", "mid-depth"),
        "'early' and 'late' name the first and last quarter of the layers (or of the depth), 'mid-depth' the half "
        "between them",
        0.25,
        "a quarter is the coarsest split that still leaves a middle",
    ),
    "half": Reading(("half of the depth", "the first half"), "the layers l <= L/2", 0.5, "stated by the words"),
}


class Verdict(StrEnum):
    """A verdict from the resamples (:func:`decide`) or the seeds' sign test (:func:`seed_test`); stored as its
    word."""

    HOLDS = "holds"
    FAILS = "fails"
    UNDECIDED = "undecided"


HOLDS, FAILS, UNDECIDED = Verdict.HOLDS, Verdict.FAILS, Verdict.UNDECIDED


def value(word: str) -> float:
    """The number the lexicon's reading of ``word`` uses (a KeyError names the known words)."""
    if word not in LEXICON:
        raise KeyError(f"{word!r} is not in the lexicon; known: {', '.join(LEXICON)}")
    v = LEXICON[word].value
    if v is None:
        raise ValueError(f"the reading of {word!r} uses no number")
    return v


def rel_gap(a, b) -> np.ndarray:
    """(a - b) / max(|a|, |b|), the gap as a share of the larger value (0 where both are 0)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    scale = np.maximum(np.abs(a), np.abs(b))
    return np.divide(a - b, scale, out=np.zeros(np.broadcast(a, b).shape), where=scale > 0)


def substantially(a, b) -> np.ndarray:
    """The margin of "a is substantially above b" (see LEXICON["substantially"]): positive when a - b is at least
    a fifth of the larger value."""
    return rel_gap(a, b) - value("substantially")


def share_margin(ok) -> float:
    """The margin of "most": the share of True minus one half."""
    return float(np.mean(np.asarray(ok, dtype=bool))) - value("most")


# What a figure's resamples resample, where it is not the validation samples, is each paper's ``resampled_over`` (the
# FFN chapter's concept coverage resamples value vectors, its steering the prompts); the numbers of a figure that are
# constants of its setting, not statistics (10/d_ff, a layer's depth), its ``constants``: they have no resamples and
# need none, so reading them does not take a rule's interval away (see :func:`replicate`'s ``blank``). Both are read
# from the one registry (:mod:`jtc_utils.evidence.registry`).
VALIDATION = "validation samples"
SEEDS = "training seeds"


def _is_statistic(v) -> bool:
    """A float, or a list or array of them (NaN stored as None allowed): what a figure computes (counts, ids and
    names are its setting)."""
    if isinstance(v, (float, np.floating)):
        return True
    if not isinstance(v, (list, tuple, np.ndarray)) or not len(v):
        return False
    try:
        a = np.asarray(v)
    except ValueError:  # ragged
        return False
    if a.dtype.kind == "f":
        return True
    if a.dtype != object:
        return False
    flat = a.ravel()
    return all(isinstance(x, (float, np.floating)) or x is None for x in flat) and any(
        isinstance(x, (float, np.floating)) for x in flat
    )


def _nan_like(v):
    return float("nan") if np.ndim(v) == 0 else np.full(np.shape(np.asarray(v, dtype=object)), np.nan).tolist()


def _substitute(data, b: int, blank: bool = False, keep=()):
    """A figure's numbers under resample ``b``: every mean that carries ``boot`` replaced by its ``b``-th resample.
    ``blank``: every other statistic (:func:`_is_statistic`) made NaN, except the keys of ``keep``, so that a rule
    that reads one gives a different margin (see :func:`reads_fixed`)."""
    if isinstance(data, list) and data and all(isinstance(x, dict) for x in data):  # rows, each with its resamples
        return [_substitute(x, b, blank, keep) for x in data]
    if not isinstance(data, dict):
        return _nan_like(data) if blank and _is_statistic(data) else data
    boot = data.get("boot", {})
    out = {
        k: _substitute(v, b, blank and k not in keep, keep) for k, v in data.items() if k != "boot" and k not in boot
    }
    for k, v in boot.items():
        out[k] = _row(v, b)
    return out


def _row(v, b):
    if isinstance(v, dict):
        return {k: _row(x, b) for k, x in v.items()}
    return v[b]


def _draw(b, n: int, only: int | None = None) -> list[int]:
    """The seeds (positions) replicate ``b`` draws from ``n`` with replacement; ``only``: that one seed (modulo
    ``n``), n times (a replicate of one seed, for the seeds' sign test, :func:`seed_test`)."""
    if only is not None:
        return [only % n] * n
    return np.random.default_rng([resample.SEED, b, n]).integers(0, n, n).tolist()


def seed_key(label: str, seed: int) -> str:
    """The key of curve ``label`` trained with ``seed`` in a figure's ``curves``: ``label`` for the first seed (0),
    ``label/seedN`` for another: the one writer of such keys (every reader builds them here, none splits them)."""
    return label if seed == 0 else f"{label}/seed{seed}"


def _seeded(data) -> bool:
    return isinstance(data, dict) and len(data.get("seeds") or ()) > 1


def _reseed(data: dict, b: int, seed_keys=(), only: int | None = None) -> dict:
    """Resample a figure's training seeds for replicate ``b``: every curve ``label/seedN`` (and ``label`` for the
    first seed) and every key of ``seed_keys`` (a leading axis of seeds) takes the values of a seed drawn with
    replacement (``only``: of that seed)."""
    if not _seeded(data):
        return data
    seeds = data["seeds"]
    draw = _draw(b, len(seeds), only)
    out = dict(data)
    if "curves" in data:
        curves = dict(data["curves"])
        for label in [c for c in data["curves"] if seed_key(c, seeds[1]) in data["curves"]]:
            names = [label] + [seed_key(label, s) for s in seeds[1:]]
            for slot, name in enumerate(names):
                curves[name] = data["curves"][names[draw[slot]]]
        out["curves"] = curves
    for key in seed_keys:
        if key in data:
            out[key] = [data[key][i] for i in draw]
    return out


def replicate(get, b: int, seed_keys=(), only: int | None = None, blank=()):
    """A ``get`` whose figures are those of ``get`` under resample ``b``: every mean that carries ``boot`` replaced by
    its ``b``-th resample, and the training seeds resampled (see :func:`_reseed`; ``only``: every draw that one
    seed). ``replicate(get, b).used`` records whether any figure it gave was resampled, ``.units`` what was
    resampled (the registry's ``resampled_over``, :data:`VALIDATION`, :data:`SEEDS`), ``.read`` the figure ids read.
    ``blank``: the figure ids whose statistics without resamples are made NaN (see :func:`reads_fixed`)."""
    cache = {}

    def rget(fig):
        if fig not in cache:
            d = get(fig)
            rget.read.append(fig)
            if isinstance(d, dict) and resample.has_boot(d):
                rget.units.add(registered().resampled_over.get(fig, VALIDATION))
            if _seeded(d):
                rget.units.add(SEEDS)
                rget.n_seeds = max(rget.n_seeds, len(d["seeds"]))
            rget.used |= bool(isinstance(d, dict) and (resample.has_boot(d) or _seeded(d)))
            keep = registered().constants.get(fig, ()) + ((("curves",) + tuple(seed_keys)) if _seeded(d) else ())
            out = _substitute(d, b, fig in blank, keep) if isinstance(d, (dict, list, float)) else d
            cache[fig] = _reseed(out, b, seed_keys, only) if isinstance(out, dict) else out
        return cache[fig]

    rget.used, rget.b, rget.only, rget.units, rget.read = False, b, only, set(), []
    rget.n_seeds, rget.seeded = 0, False
    return rget


def seed_draw(get, n: int) -> list[int]:
    """Which of ``n`` training seeds (positions) a claim reads under ``get``: all of them, in order, on the data;
    ``n`` drawn with replacement on replicate ``get.b`` (see :func:`replicate`), so that a claim whose figure keeps
    one record per seed in its own layout resamples its seeds too."""
    b = getattr(get, "b", None)
    if b is None or n < 2:
        return list(range(n))
    get.used = True
    get.units.add(SEEDS)
    get.seeded, get.n_seeds = True, max(get.n_seeds, n)
    return _draw(b, n, get.only)


def interval(margins) -> tuple[float, float]:
    """The interval a verdict reads: the resampled margins' order statistics that :func:`decide` compares with 0.
    Of n sorted margins s, with k = n - ceil(LEVEL n) (10 of 200), it is [s[k], s[n-1-k]]: the claim holds exactly
    when s[k] > 0 (at most k margins at or below 0, so at least LEVEL of them above) and fails exactly when
    s[n-1-k] < 0, so the interval excludes 0 exactly when the verdict is decisive (a one-sided LEVEL bound at each
    end: a central 90% interval at LEVEL 0.95)."""
    s = np.sort(np.asarray(margins, dtype=float), kind="stable")
    k = len(s) - int(np.ceil(LEVEL * len(s) - 1e-9))
    return float(s[k]), float(s[len(s) - 1 - k])


INTERVAL = (
    f"the {1 - LEVEL:.0%} and {LEVEL:.0%} points of the resampled margins (a {2 * LEVEL - 1:.0%} interval, "
    f"one-sided {LEVEL:.0%} at each end: it excludes 0 exactly when the verdict holds or fails)"
)


# What a resample refits rather than re-averages: the linearity scores are in-sample least-squares fits, refitted on
# each resample of the sentences; a refit on a resample (sentences drawn twice count twice) fits its own sample more
# closely, so the resampled scores sit above the estimate and a percentile interval can exclude the estimate itself.
# For these units the margins are recentred on the estimate (each minus the median shift of the resampled margins from
# the margin: the bootstrap's bias correction, stated in the record as ``recentred_by``) before the verdict is read.
REFITTED_UNITS = ("sentences",)
INTERVAL_NAME = f"{2 * LEVEL - 1:.0%} interval"


def decide(margin: float, margins, recentre: bool = False) -> dict:
    """The verdict of a claim from its margin on the data and its margins on the replicates (None: no resamples):
    holds / fails where at least LEVEL of the replicates are on one side (a margin of exactly 0 is on neither),
    else undecided; with the interval that verdict reads (:func:`interval`) and the share on the claim's side.
    ``recentre``: the replicates are refits (:data:`REFITTED_UNITS`), recentred on the margin first; the shift is
    returned as ``recentred_by``. ``spread``: False where every replicate gives the same margin (the interval is a
    point: the statistic does not move under its resamples)."""
    if margin is None or not np.isfinite(margin):
        return {"verdict": None, "margin": None, "lo": None, "hi": None, "share": None, "resampled": False}
    if margins is None:
        verdict = HOLDS if margin > 0 else FAILS if margin < 0 else UNDECIDED
        return {"verdict": verdict, "margin": float(margin), "lo": None, "hi": None, "share": None, "resampled": False}
    m = np.asarray(margins, dtype=float)
    extra = {}
    if recentre:
        shift = float(np.nanmedian(m) - margin)
        m = m - shift
        extra["recentred_by"] = shift
    m = np.where(np.isnan(m), 0.0, m)  # a replicate where the statistic is undefined is on neither side
    above, below = float(np.mean(m > 0)), float(np.mean(m < 0))
    verdict = HOLDS if above >= LEVEL else FAILS if below >= LEVEL else UNDECIDED
    lo, hi = interval(m)
    return {
        "verdict": verdict,
        "margin": float(margin),
        "lo": lo,
        "hi": hi,
        "share": above,
        "resampled": True,
        "spread": bool(hi > lo),
        **extra,
    }


# The seeds' sign test: n training seeds that all agree are evidence at the level 2^-n (one-sided), so a verdict
# that rests on seeds alone is decisive only where 2^-n <= 1 - LEVEL: five seeds or more at LEVEL 0.95.
LEAST_SEEDS = int(np.ceil(np.log2(1 / (1 - LEVEL)) - 1e-9))


def seed_test(margin: float, per_seed) -> dict:
    """The verdict of a claim whose only resamples are its training seeds, from its margin on each seed alone
    (``per_seed``): holds / fails where every seed is on one side and there are at least :data:`LEAST_SEEDS`
    seeds, else undecided; shown as "k of n seeds" (``seeds_on_side``, ``n_seeds``), with no interval."""
    m = np.nan_to_num(np.asarray(per_seed, dtype=float), nan=0.0)
    k, n = int((m > 0).sum()), len(m)
    enough = n >= LEAST_SEEDS
    verdict = HOLDS if enough and k == n else FAILS if enough and (m < 0).all() else UNDECIDED
    return {
        "verdict": verdict,
        "margin": float(margin),
        "lo": None,
        "hi": None,
        "share": k / n,
        "resampled": False,
        "seeds_on_side": k,
        "n_seeds": n,
    }
