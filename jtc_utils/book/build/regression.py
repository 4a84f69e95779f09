"""The figure-data regression in one place: which stored figures of ``book/data`` are recomputed (:func:`targets`:
every tiny-profile figure that comes from a computation; the real model's are checked at its subset by their own
tests, the claims files are judged from the figures), and how far a recomputation may stray from the stored numbers
(:func:`tolerance`, from the spread of each quantity under other arithmetic measured by ``benchmarks/noise.py`` and
committed in ``tests/noise.json``). A *quantity* is a path through a figure's nested data with list positions
folded (``curves/mat/p@1``); strings, flags and ``None`` must match exactly.
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache

from jtc_utils.core.infra import resample
from jtc_utils.core.infra.paths import DATA_DIR, ROOT
from jtc_utils.core.data.setting import Setting
from jtc_utils.embedded import corpus
from jtc_utils.evidence import figdata, figure_registry
from jtc_utils.evidence.registry import get as registered

# The error of a value is |a - b| / max(1, |b|) (:func:`spread`): absolute up to 1, relative above, so that an
# ill-conditioned r² of -163 is compared to its own magnitude. The tolerance of a quantity is the largest of
# MARGIN times its measured spread (a reader's machine may differ more than the settings we could try), FLOOR_REL
# (eight float32 epsilons: what a quantity reproduced bit for bit still goes through) and, for a discrete quantity
# (a share of n decisions, DISCRETE), two decisions flipped. A count of decisions (COUNTS) is compared in counts, within
# the larger of ten times its spread and two decisions; an integer reproduced exactly under every setting gets 0.
NOISE_FILE = ROOT / "tests" / "noise.json"
MARGIN = 10.0
FLOOR_REL = 1e-6
# quantities that are means of n discrete decisions: (figure pattern, quantity pattern, where n comes from: the
# validation samples of the stored parameters or the stored values' common denominator, what one flipped decision
# can move a sample's value by: 1 for a share, the largest value for a layer, NATS for a surprisal). Their floor is
# two decisions flipped.
NATS = 20.0  # a flipped top-1 (the mapping's, or the model's for s_n) moves a surprisal by a log-ratio of two tokens
DISCRETE = (
    (r".*", r"(^|/)p@\d+$", "n_val", 1.0),
    (r".*", r"(^|/)p1_(mat|id|rrr|arrr)$", "n_val", 1.0),
    (r".*", r"(^|/)(surprisal|surprisal_lo|surprisal_hi|s_jtc|s_n)$", "n_val", NATS),
    (r"^(regime_|seed\d+_)?fig(8|9|20|21)$", r"^(early/[^/]+/y|fixed/[^/]+|saved/[^/]+/share)$", "n_val", 1.0),
    (r"^(regime_|seed\d+_)?fig(8|9|20|21)$", r"^(early/[^/]+/x|saved/[^/]+/(x|saved))$", "n_val", "scale"),
    (r"^geva_tab6$", r"/(accuracy|share_saved)$|^curves/[^/]+/y$", "n_val", 1.0),
    (r"^geva_tab6$", r"/(saved|saved_correct)$|^curves/[^/]+/x$", "n_val", "scale"),
    (r"^lens_table$", r"/exit/(.*/)?(y|share)$", "n_val", 1.0),
    (r"^lens_table$", r"/exit/(.*/)?(x|saved)$", "n_val", "scale"),
    (r"^(regime_|seed\d+_)?plausibility$", r"token_rate/.*|per_layer/.*", "infer", 1.0),
    (r"^(regime_|seed\d+_)?labels_.*$", r"by_label/.*", "infer", 1.0),
    (r"^(regime_|seed\d+_)?textfit$", r"gold_p1", "n_val", 1.0),
    (r"^ext_geva_steer$", r"/(positive|negative|neutral|other)$", "infer", 1.0),
    (r"^geva_tab2$", r"/(values|gaussian|updates|values_no_big|gaussian_no_big|labelled_[a-z]+)$", "infer", 1.0),
    (r"^geva_fig2$|^ext_geva_matffn$", r"^(values|updates|groups/.*|through_mat/coverage_.*)$", "infer", 1.0),
    (r"^sl_fig[457]$", r"accuracy$", "infer", 1.0),
)
# quantities that count decisions (a histogram of exit or saturation layers, a number of events): compared in
# counts, not relative to their size, with a floor of two decisions flipped
COUNTS = r"(^|/)(exit_hist|sat_hist|hist|events|occurrences)$"


def is_count(quantity: str) -> bool:
    return re.search(COUNTS, quantity.removesuffix(LARGE)) is not None


def _stored(name: str) -> dict:
    return figdata.load(name)


def targets() -> list[str]:
    """Every stored figure that :func:`recompute` recomputes: each figure and record of the figure registry that the
    regression recomputes (``regressed``; not the claims files, judged from the figures, nor the layer view, which
    gathers the real model's) whose stored numbers are the tiny profile's, in the registry's order."""
    return [
        f
        for f, r in registered().figures.items()
        if r.regressed and (DATA_DIR / f"{f}.json").exists() and _stored(f)["params"].get("profile") == "tiny"
    ]


def executed(name: str, since: float, params: dict | None = None) -> dict | None:
    """The data of stored figure ``name`` as a re-execution of the pages wrote it into ``$JTC_DATA_OUT`` (see
    :func:`jtc_utils.evidence.figdata.output_dir`) after time ``since``, with the stored parameters (or with those
    named in ``params``: a figure of the real model that `make test` computes at the real subset); None where it did
    not. `make test`
    executes the pages first, so that the regression compares what they computed instead of computing every figure a
    second time."""
    out = figdata.output_dir()
    f = out / f"{name}.json"
    if out.resolve() == figdata.DATA_DIR.resolve() or not f.exists() or f.stat().st_mtime < since:
        return None
    record = json.loads(f.read_text())
    if params is None:
        return record["data"] if record["params"] == _stored(name)["params"] else None
    return record["data"] if all(record["params"].get(k) == v for k, v in params.items()) else None


def recompute(name: str) -> dict:
    """The data of stored figure ``name`` recomputed by its registered function with the stored parameters, as plain
    JSON values. A size equal to the domain's full split is passed as None, as the notebooks pass it, so that the
    shared cache is hit."""
    p = _stored(name)["params"]
    full = corpus.POOL_SIZES.get(p.get("domain"), {})
    n_train = None if p.get("n_train") in (None, full.get("train")) else p["n_train"]
    n_val = None if p.get("n_val") in (None, full.get("validation")) else p["n_val"]
    data, _ = figure_registry.compute(name, Setting.of("tiny", n_train, n_val, p.get("seed", 0)))
    return figdata.plain(data)


# ---- quantities: a figure's nested data as named arrays ----------------------------------------------------------


def quantities(data, prefix: str = "") -> dict:
    """``{quantity: values}`` of nested figure data: dict keys joined by ``/``; a list of numbers (or of lists of
    numbers) is one quantity; a list of dicts or strings is walked with its positions folded (``rows[]/mat``), so
    that all its elements form one quantity. Values are a flat list of numbers (None for NaN) or of exact items
    (strings, flags)."""
    out: dict = {}

    def add(key, v):
        out.setdefault(key, []).append(v)

    def walk(x, key):
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, f"{key}/{k}" if key else str(k))
        elif isinstance(x, list) and x and all(isinstance(v, (dict, str, list)) and not is_numeric(v) for v in x):
            for v in x:
                walk(v, f"{key}[]")
        elif isinstance(x, list):
            for v in _flatten(x):
                add(key, v)
        else:
            add(key, x)

    walk(data, prefix)
    return out


def is_numeric(x) -> bool:
    if isinstance(x, list):
        return all(is_numeric(v) for v in x)
    return x is None or (isinstance(x, (int, float)) and not isinstance(x, bool))


def _flatten(x):
    for v in x:
        if isinstance(v, list):
            yield from _flatten(v)
        else:
            yield v


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


LARGE = " (|value| > 1)"


def buckets(quantity: str, a: list, b: list) -> list[tuple[str, list, list]]:
    """A quantity's values split by the magnitude of the stored ones: ``(quantity, a, b)`` for values up to 1 and
    ``(quantity + LARGE, a, b)`` for the others, each left out where it is empty. The two are measured and
    tolerated apart: an ill-conditioned r² of -163 (a fit on fewer vectors than dimensions) moves in its fourth
    digit, and must not loosen the tolerance of the well-conditioned r² of 0.5 beside it."""
    if len(a) != len(b) or is_count(quantity):
        return [(quantity, a, b)]
    small = [(x, y) for x, y in zip(a, b) if not (_is_number(y) and abs(y) > 1)]
    large = [(x, y) for x, y in zip(a, b) if _is_number(y) and abs(y) > 1]
    out = [
        (name, [x for x, _ in pairs], [y for _, y in pairs])
        for name, pairs in ((quantity, small), (quantity + LARGE, large))
        if pairs
    ]
    return out or [(quantity, a, b)]


def bucketed(data) -> dict:
    """``{quantity or bucket: values}`` of figure data: :func:`quantities` split by :func:`buckets`."""
    return {q: b for quantity, values in quantities(data).items() for q, _, b in buckets(quantity, values, values)}


def spread(a: list, b: list, counts: bool = False) -> dict:
    """How far quantity values ``a`` (recomputed) are from ``b`` (stored): ``{"err": largest error, "scale":
    largest magnitude of b, "n": count, "exact": whether every value is an integer or not a number}``. The error of a
    number is ``|a - b| / max(1, |b|)``: absolute for values up to 1 (shares, r², probabilities), relative to the
    magnitude above (perplexities, layers, an r² of -163 where fewer vectors than dimensions were fitted; see
    :func:`buckets`); for ``counts`` (:func:`is_count`), ``|a - b|`` in counts. Values that are not numbers must be
    equal; a mismatch, a missing value or NaN against a number is an infinite error."""
    if len(a) != len(b):
        return {"err": math.inf, "scale": 0.0, "n": len(b), "exact": False}
    worst, scale, exact = 0.0, 0.0, True
    for x, y in zip(a, b):
        if _is_number(x) and _is_number(y):
            exact &= isinstance(x, int) and isinstance(y, int)
            scale = max(scale, abs(float(y)))
            worst = max(worst, abs(float(x) - float(y)) / (1.0 if counts else max(1.0, abs(float(y)))))
        elif x != y:
            worst = math.inf
    return {"err": worst, "scale": scale, "n": len(b), "exact": exact}


# ---- tolerances ---------------------------------------------------------------------------------------------------


def noise() -> dict:
    """The committed measurement (``tests/noise.json``): settings, and per figure and quantity the largest spread."""
    if not NOISE_FILE.exists():
        raise FileNotFoundError(f"{NOISE_FILE} is missing: measure it with `python benchmarks/noise.py`")
    return json.loads(NOISE_FILE.read_text())


def share_denominator(values, limit: int = 100_000) -> int | None:
    """The n of values that are all shares k/n of one n (the smallest such n up to ``limit``), or None."""
    from fractions import Fraction

    nums = [float(v) for v in values if _is_number(v)]
    if not nums:
        return None
    dens = [Fraction(v).limit_denominator(limit).denominator for v in nums]
    n = max(dens)
    return n if all(abs(v * n - round(v * n)) < 1e-9 for v in nums) else None


def _pool_size(domain) -> int | None:
    """The validation samples of a domain at the full sizes (what a figure stored with ``n_val`` None used)."""
    return corpus.POOL_SIZES.get(domain, {}).get("validation")


def discrete_n(name: str, quantity: str, stored_params: dict, values=()) -> tuple[int, object] | None:
    """``(n, what one decision moves)`` of a mean of n discrete decisions (see :data:`DISCRETE`), or None for a
    continuous quantity. n: the validation samples of the stored parameters (the domain's full validation pool where
    they say None), or, where the decisions are something else (tokens, continuations, value vectors), the common
    denominator of the stored values (at least 10)."""
    base = quantity.removesuffix(LARGE)
    for fig_pat, q_pat, source, step in DISCRETE:
        if re.search(fig_pat, name) and re.search(q_pat, base):
            if source == "n_val":
                n = stored_params.get("n_val") or _pool_size(stored_params.get("domain"))
                if n:
                    return int(n), step
            n = share_denominator(values)
            return (n, step) if n and n >= 10 else None
    return None


def tolerance(name: str, quantity: str, measured: dict, stored_params: dict, values=()) -> tuple[float, str]:
    """``(tolerance, why)`` of a quantity's error (see :func:`spread`) from its measured spread: the largest of ten
    times the spread, the float32 floor and, for a share, two decisions flipped (see the module docstring)."""
    sp, scale = measured["err"], measured["scale"]
    if is_count(quantity):
        return max(MARGIN * sp, 2.0), ("10 x measured spread" if MARGIN * sp > 2 else "two decisions flipped")
    if measured.get("exact") and sp == 0:
        return 0.0, "exact: integers, reproduced exactly under every setting"
    parts = {"10 x measured spread": MARGIN * sp, "float32 floor": FLOOR_REL}
    found = discrete_n(name, quantity, stored_params, values)
    if found:
        # a mean of n decisions moves by 1/n of what one decision moves per flip (in the units of spread: at most
        # that, since a value above 1 divides its error by its magnitude)
        n, step = found
        parts["two decisions of n flipped"] = 2.0 / n * (max(scale, 1.0) if step == "scale" else step)
    why = max(parts, key=parts.get)
    return parts[why], why


def unboot(quantity: str, measured=None) -> str:
    """The quantity a resampled one (``.../boot/...``, see :mod:`jtc_utils.evidence.verdicts`) resamples. With
    ``measured``
    (a figure's entry of the noise file), the bucket of it that was measured: resampled means straddle 1 where the
    means sit on one side of it, and a resample is compared with the tolerance of the mean it resamples."""
    base = "/".join(part for part in quantity.split("/") if part != "boot")
    if measured is None or base in measured or base == quantity:
        return base
    other = base.removesuffix(LARGE) if base.endswith(LARGE) else base + LARGE
    return other if other in measured else base


# quantities a figure computes from its other quantities (the statistics the claims read): not measured themselves,
# they take the sum of their sources' tolerances (a minimum or an order statistic of values that each move by at
# most t moves by at most t; a difference of two such, by the sum)
DERIVED = {r"^pairs/min_gap$": ("r2_mat", "r2_id"), r"^pairs/id_majority$": ("r2_id",)}


def measured_names(quantity: str, measured: dict) -> list[str]:
    """The quantities of the noise file whose spread decides ``quantity``'s tolerance: itself (or the mean it
    resamples, :func:`unboot`), or the sources of a derived one (:data:`DERIVED`, every bucket of each)."""
    base = unboot(quantity, measured)
    if base in measured:
        return [base]
    for pat, sources in DERIVED.items():
        if re.search(pat, base.removesuffix(LARGE)):
            return [m for s in sources for m in (s, s + LARGE) if m in measured]
    return [base]


@lru_cache(maxsize=None)
def most_draws(n: int) -> float:
    """The most times one of ``n`` samples is drawn in any of the claims' resamples
    (:func:`jtc_utils.core.infra.resample.weights`,
    the same for every figure on ``n`` samples): a decision that flips moves a resample by its draw count over n."""
    return float(resample.weights(n).max())


def boot_factor(name: str, quantity: str, stored_params: dict, values=()) -> float:
    """How much more a resampled mean can move than the mean it resamples: its mean's tolerance times
    :func:`most_draws` for a mean of n decisions, and ten times for a quantity that is not one (a continuous mean,
    whose resample is a weighted mean of the same per-sample values)."""
    found = discrete_n(name, quantity, stored_params, values)
    return most_draws(found[0]) if found else 10.0


def compare(name: str, recomputed: dict, stored: dict, measured: dict | None = None) -> list[str]:
    """The quantities of ``recomputed`` that stray from ``stored`` beyond their tolerance (empty when it matches).
    ``measured``: the figure's entry of the noise file (default: the committed one). A quantity the noise file does
    not know is a failure: measure it (``python benchmarks/noise.py``)."""
    if measured is None:
        measured = noise()["figures"].get(name)
        if measured is None:
            return [f"{name}: not in {NOISE_FILE.name}; measure it with `python benchmarks/noise.py`"]
    params = figdata.load(name)["params"]
    mine, theirs = quantities(recomputed), quantities(stored)
    bad = (
        [f"{name}: quantities {sorted(set(mine) ^ set(theirs))} are in one of the two only"]
        if set(mine) != set(theirs)
        else []
    )
    for quantity, values in theirs.items():
        for q, a, b in buckets(quantity, mine.get(quantity, []), values):
            names = measured_names(q, measured)
            if not names or any(m not in measured for m in names):
                bad.append(f"{name} {q}: not in {NOISE_FILE.name}; measure it with `python benchmarks/noise.py`")
                continue
            got = spread(a, b, counts=is_count(q))
            base = unboot(q, measured)
            if names == [base]:
                tol, why = tolerance(name, base, measured[base], params, b)
            else:  # derived: the sum of its sources' tolerances
                tols = [tolerance(name, m, measured[m], params, b) for m in names]
                tol, why = sum(t for t, _ in tols), "sum of its sources' tolerances (" + ", ".join(names) + ")"
            if base != q:
                tol, why = tol * boot_factor(name, base, params, b), why + ", times the most draws of one sample"
            if not got["err"] <= tol:
                bad.append(
                    f"{name} {q}: error {got['err']:.3g} > tolerance {tol:.3g} ({why}; measured spread "
                    f"{max(measured[m]['err'] for m in names):.3g})"
                )
    return bad
