"""The claims framework every paper's claims module uses: a claim record (:func:`claim_record`), its verdict from the
resamples (:func:`evaluate`), the registry of every paper's claims (:func:`registry`, :func:`check_any`), getters of
the numbers a rule reads (stored in ``book/data``, just computed, or another profile's). The instrument checks a rule
states are :mod:`jtc_utils.evidence.instruments`; the findings and summaries, :mod:`jtc_utils.evidence.findings`.

A paper's claims module writes its rules as functions of ``get`` (a function from a figure id to its numbers) that
return :func:`claim_record` s; :func:`registry` turns its table of rules into ``check`` and ``all_claims``; the
paper's ``PAPER`` declares them, so that the book reaches any claim by id (:func:`check_any`). Each rule reads its
sentence through the lexicon of :mod:`jtc_utils.evidence.verdicts`. How the book shows the records is
:mod:`jtc_utils.book.display.claim_tables`.
"""

from __future__ import annotations

import numpy as np

from jtc_utils.core.analysis import linear
from jtc_utils.core.data import profiles
from jtc_utils.core.infra import costs, resample
from jtc_utils.core.data.profiles import Profile
from jtc_utils.core.data.setting import Setting

from . import figdata, verdicts
from .registry import get as registered
from .instruments import BASELINE_SLACK, LABELLING_P, LEAST_REACH, LEAST_RUNS
from .records import ClaimRecord, Magnitude, Status, typed


def default_get(fig: str) -> dict:
    return figdata.load(fig)["data"]


class NotComputed(LookupError):
    """The numbers behind a figure do not exist on the profile being judged (the real profile has one model size
    and an encoder without a masked-LM head); the claim gets no verdict there."""


def profile_getter(prefix: str = "real_", results: dict | None = None, absent: dict | None = None):
    """A ``get`` for another profile's figures, stored as ``<prefix><fig>``: numbers just computed
    (``results``) or read from ``book/data``; a figure the profile does not have raises :class:`NotComputed`."""
    absent = registered().absent if absent is None else absent
    results = results or {}

    def get(fig):
        name = prefix + fig
        if name in results:
            return results[name]
        if fig in absent or not figdata.exists(name):
            raise NotComputed(absent.get(fig, f"{name} has not been computed (run its chapter)"))
        return default_get(name)

    return get


def view_getter(fig: str, views, absent: dict, get=default_get):
    """A ``get`` for another profile whose numbers are one figure, ``fig`` (e.g. ``real_sl``), read through
    ``views`` (its numbers -> {stand-in figure id: the same numbers in that figure's layout}), so that a paper's
    rules read it as they read the stand-in's figures; a figure id in ``absent`` raises :class:`NotComputed` with
    its reason, as does one the views do not give."""
    cache = {}

    def rget(name):
        if name in absent:
            raise NotComputed(absent[name])
        if not cache:
            cache.update(views(get(fig)))
        if name not in cache:
            raise NotComputed(f"{name} has no counterpart in {fig}")
        return cache[name]

    return rget


def available(get, figs) -> dict:
    """The numbers of those ``figs`` that exist on the profile (all of them on tiny and paper); NotComputed if
    none does. A rule "in every figure" is applied to every figure the profile has."""
    out, why = {}, None
    for f in figs:
        try:
            out[f] = get(f)
        except NotComputed as e:
            why = e
    if not out:
        raise why
    return out


# Two verdicts per claim. The *shape* verdict judges what a claim says about orderings and shapes (which
# curve lies above which, where a curve rises) and is judged on every profile; the *magnitude* verdict judges the
# paper's numbers and is judged only on the paper profile, where the paper's models run: a stand-in is a different
# model, so its numbers are shown beside the paper's but not judged. Every rule is built from the lexicon of
# jtc_utils.evidence.verdicts: each vague word of the sentence gets the one reading the lexicon gives it, the
# same for every claim of every paper, and the record names the entries it used. A rule returns a *margin*, positive on
# the claim's side; the verdict comes from the margins on the resampled validation sets (verdicts.decide).
RULES_NOTE = (
    "Every rule reads the sentence through the lexicon below: one reading per word, the same for every "
    "claim of every paper. The lexicon was written on 2026-11-25 (issue 32), after earlier versions of the "
    "rules and their verdicts had been seen; since then no rule, threshold or seed has been changed because "
    "of a verdict. A second review (issue 53) found rules that read only part of their sentence (C4, F3, "
    "S8) or a measure that could not fail (F9), and words read through entries that did not list them; "
    "those rules now read the whole sentence and the words have entries, each written from the words and "
    "the amounts the lexicon already used. A rule gives a margin, positive on the claim's side and zero on "
    "its threshold. The margin is recomputed on "
    f"{resample.N_RESAMPLES} resamples of what its statistic averages over, and every record says what "
    "that is: validation samples (precisions, surprisals, r², exit rules, sub-update scores), value "
    "vectors (concept coverage), prompts (steering), sentences (the linearity scores, each resample a refit "
    "from per-sentence sums, and the pruning's perplexities), and training seeds where a chapter has "
    "several. "
    f"**holds** where at least {verdicts.LEVEL:.0%} of the resamples are on the claim's side, **fails** "
    f"where at least {verdicts.LEVEL:.0%} are on the other, **undecided** otherwise; a margin of exactly "
    f"zero is on neither side. The interval shown is the one the verdict reads: {verdicts.INTERVAL}. "
    "Training seeds alone are a sign test: a verdict whose only resamples are the seeds is shown as "
    "\"k of n seeds\" and is decisive only where all of at least "
    f"{verdicts.LEAST_SEEDS} seeds agree (2^-n <= {1 - verdicts.LEVEL:.2f}); with three seeds it is "
    "undecided. A rule that reads a statistic without resamples (found by blanking each unresampled "
    "number it reads: its margin changes), or one whose statistic would need a selection redone per "
    "resample (the clusters of extreme scores), shows no interval: its verdict is the point estimate's, "
    "marked \"no interval\" with the reason, and not counted either way. The JTC stand-in of GPT2-XL was "
    "trained on three seeds: a JTC shape verdict that differs between them is undecided on the stand-in."
)
# why a claim has no resamples, where its record does not say
NO_INTERVAL = "none of the figures it reads keeps per-sample values to resample."
NOT_JUDGED = "not judged: the paper's models"


def magnitude_part(paper: str, ours: str, holds, rule: str) -> Magnitude:
    return {"paper": paper, "ours": ours, "holds": None if holds is None else bool(holds), "rule": rule}


# the instrument checks in words, as the claims page shows them (the checks themselves: evidence.instruments)
INSTRUMENTS_NOTE = (
    "A verdict is drawn only where the claim's instrument works. Each claim states, beside its rule, the conditions "
    "its instrument must meet, checked on each profile and shown with the verdict; a claim any of whose checks fails "
    "is **not judged**, counted apart and never as holds or fails. The conditions: a claim that compares trained "
    f"components (NJTC, N-NJTC, the tuned lens) needs at least {LEAST_RUNS} training runs of each (as many as a "
    "verdict on training seeds alone needs), so that the run-to-run spread is inside its interval, and every one of "
    "those runs must have met its recipe's convergence criterion, fixed before any verdict was read (NJTC and "
    "N-NJTC: a train loss within the recipe's gap of the closed-form optimum of its own function class; the tuned "
    "lens: a train loss that its last steps no longer lower by more than the recipe allows), since a run stopped at "
    "its cap shows where training stopped, not what the method reaches; a claim read "
    "through an intervention (a cast through replaced sub-modules) needs one whose output depends on the state it "
    "starts from, its top-1 taking more than one token over the samples at every start layer it reads; a claim read "
    "through a labelling of the tokens needs one that reaches "
    f"at least {LEAST_REACH:.0%} of the tokens it labels and finds more concepts than the same classes shuffled among "
    f"the tokens (permutation p below {LABELLING_P:g}); a claim that compares with a baseline needs a baseline that "
    f"works (a classifier within {BASELINE_SLACK:g} of the paper's lowest classifier accuracy that saves more layers "
    f"than the same classifier trained on labels shuffled among the samples in at least {verdicts.LEVEL:.0%} of the "
    "resamples); a rule whose margin is "
    "the extreme of a raw per-layer statistic (F7) must keep its sign when any one layer is left out, so that no "
    "single layer decides it."
)


NOT_JUDGED_STATUS, NOT_COMPUTED_STATUS = Status.NOT_JUDGED, Status.NOT_COMPUTED


def claim_record(
    cid,
    claim,
    paper,
    ours,
    margin,
    rule,
    magnitude: dict | None = None,
    quote: str | None = None,
    words=(),
    unit: str = "",
    statistic: str | None = None,
    kind: str = "claim",
    fixed: str | None = None,
    checks=(),
) -> ClaimRecord:
    """A claim record (:class:`ClaimRecord`). ``margin``: the rule's margin on these numbers (positive on the claim's
    side; a bool for a check that passes or not; None where the claim has no shape part, or its figures are not computed
    on the profile); ``words``: the lexicon entries the rule reads the sentence with; ``unit``: the margin's unit;
    ``statistic``: the name of the computed statistic (claims that share it form one finding); ``kind``: "claim", or
    "check" for one that cannot fail on data (arithmetic, self-consistency), which is not counted as evidence.
    ``magnitude`` (from :func:`magnitude_part`, or None where the paper gives no number) holds the paper's numbers,
    ours, and the magnitude verdict before :func:`evaluate` masks it off the paper profile. ``fixed``: why the statistic
    has no resamples although a figure it reads has some (it is not judged on the resamples then; see :func:`evaluate`).
    ``checks``: the instrument checks (:func:`instrument`) the numbers must pass before a verdict is drawn."""
    unknown = [w for w in words if w not in verdicts.LEXICON]
    if unknown:
        raise ValueError(f"claim {cid}: {unknown} not in the lexicon (jtc_utils.evidence.verdicts.LEXICON)")
    if isinstance(margin, (bool, np.bool_)):
        margin = 1.0 if margin else -1.0
    margin = None if margin is None else float(margin)
    return {
        "id": cid,
        "claim": claim,
        "quote": quote,
        "paper": paper,
        "ours": ours,
        "holds": None if margin is None else margin > 0,
        "rule": rule,
        "magnitude": magnitude,
        "margin": margin,
        "unit": unit,
        "words": list(words),
        "statistic": statistic or cid,
        "kind": kind,
        "no_interval": fixed,
        "checks": list(checks),
    }


def short_number(v) -> str:
    """A margin to two significant digits (what a resample's spread supports), always in plain decimals (``+0.00093``,
    ``-100``: no exponent beside a decimal in one interval); one below 1e-4 in size as the range it lies in
    (``between 0 and +0.0001``), so that no noise-level number is printed."""
    import math

    if v is None:
        return "-"
    if v == 0:
        return "0"
    if abs(v) < 1e-4:
        return "between 0 and " + ("+" if v > 0 else "-") + "0.0001"
    r = float(f"{v:.2g}")
    return f"{r:+.{max(0, 1 - math.floor(math.log10(abs(r))))}f}"


def judged(record: dict, profile: Profile | str) -> dict:
    """``record`` as read on ``profile``: the magnitude verdict is kept on the paper profile and masked (None, with
    the reason) on every other, where the models are not the paper's."""
    mag = record.get("magnitude")
    if mag is None or profiles.name_of(profile) == "paper":
        return record
    return {**record, "magnitude": {**mag, "holds": None, "note": NOT_JUDGED}}


def memo(get):
    cache = {}

    def memo(fig):
        if fig not in cache:
            try:
                cache[fig] = get(fig)
            except NotComputed as e:
                cache[fig] = e
        if isinstance(cache[fig], NotComputed):
            raise cache[fig]
        return cache[fig]

    return memo


def reads_fixed(fn, get, seed_keys, first, margin) -> list[str]:
    """The figures among those a rule read (``first.read``) whose statistics without resamples the rule reads: with
    each figure's unresampled statistics made NaN in turn (:func:`jtc_utils.evidence.verdicts.replicate`, ``blank``),
    the rule's margin changes (or it cannot be computed). Such a rule's interval would resample only part of what
    it reads, so it shows none."""
    found = []
    for fig in dict.fromkeys(first.read):
        try:
            m = fn(verdicts.replicate(get, 0, seed_keys, blank={fig}))["margin"]
        except (ValueError, TypeError, ArithmeticError, IndexError, KeyError):
            m = None
        if m is None or not np.isfinite(m) or m != margin:
            found.append(fig)
    return found


def resampling(fn, get, seed_keys=()) -> dict:
    """How claim function ``fn`` is resampled on the figures ``get`` gives (see
    :func:`jtc_utils.evidence.verdicts.replicate`): ``units`` (what its resamples resample), and either ``margins``
    (its margin on every resample), or ``per_seed`` (its margin on each training seed alone, where the seeds are all
    it resamples: :func:`jtc_utils.evidence.verdicts.seed_test`), or ``fixed`` (why it has no interval: none of its
    figures has resamples, or it reads a statistic that has none)."""
    first = verdicts.replicate(get, 0, seed_keys)
    m0 = fn(first)["margin"]
    units = sorted(first.units)
    if not first.used:
        return {"units": [], "fixed": NO_INTERVAL}
    if not first.seeded:  # a rule that draws its seeds in its own layout reads per-seed rows, all resampled
        fixed = reads_fixed(fn, get, seed_keys, first, m0)
        if fixed:
            return {
                "units": units,
                "fixed": f"its rule reads numbers of {', '.join(fixed)} that have no resamples "
                f"(found by blanking them: its margin changes), so an interval over "
                f"the {' and '.join(units)} would resample only part of it.",
            }
    if units == [verdicts.SEEDS]:
        per_seed = [fn(verdicts.replicate(get, 0, seed_keys, only=i))["margin"] for i in range(first.n_seeds)]
        return {"units": units, "per_seed": [np.nan if m is None else m for m in per_seed]}
    out = [m0] + [fn(verdicts.replicate(get, b, seed_keys))["margin"] for b in range(1, resample.N_RESAMPLES)]
    return {"units": units, "margins": [np.nan if m is None else m for m in out]}


def seed_sentence(record: dict) -> str:
    """Why a verdict that rests on training seeds alone is what it is (the seeds' sign test)."""
    k, n = record["seeds_on_side"], record["n_seeds"]
    return (
        f"Its only resamples are the {n} training seeds, and {k} of {n} are on the claim's side: seeds alone "
        f"decide only where all of at least {verdicts.LEAST_SEEDS} agree (their sign test, 2^-n <= "
        f"{1 - verdicts.LEVEL:.2f})."
    )


def reason(record: dict, profile: Profile | str, reasons: dict) -> str | None:
    """Why ``record`` fails or is undecided: the written reason for its profile, or for an undecided claim without
    one, what its interval says."""
    text = reasons.get(record["id"])
    if isinstance(text, dict):
        name = profiles.name_of(profile)
        text = text.get("tiny" if name in ("tiny", "paper") and "tiny" in text else name)
    if record["verdict"] == verdicts.UNDECIDED and not text:
        if record["resampled"]:
            text = (
                f"The margin's interval ({short_number(record['lo'])} to {short_number(record['hi'])}) has "
                f"{record['share']:.0%} of the resamples of the {' and '.join(record['resamples'])} on the "
                "claim's side: they cannot tell."
            )
        elif not record.get("n_seeds"):
            text = "The statistic sits exactly on the rule's threshold."
    if record.get("n_seeds") and record["verdict"] == verdicts.UNDECIDED:
        text = (text + " " if text else "") + seed_sentence(record)
    text = text if record["verdict"] in (verdicts.FAILS, verdicts.UNDECIDED) else None
    if record.get("no_interval") and record.get("verdict") is not None and not record.get("resampled"):
        text = (text + " " if text else "") + f"No interval: {record['no_interval']}"
    return text


def reading(get):
    """``get`` that also keeps the figure ids it was asked for (``.figs``) and the numbers it gave (``.read``), so
    that a claim's record can say what the numbers it was judged on carry (see :func:`underdetermined`)."""

    def rget(fig):
        d = get(fig)
        rget.figs.append(fig)
        rget.read.append(d)
        return d

    rget.figs, rget.read = [], []
    return rget


def underdetermined(read) -> str | None:
    """Why a claim that read the figures' numbers ``read`` gets no verdict, where any of them came from maps fitted
    on fewer training samples than the model's width (:func:`jtc_utils.core.analysis.linear.regime_note`): such a map
    interpolates its training set, so its validation numbers say nothing about the claim either way."""
    notes = [d[linear.UNDERDETERMINED] for d in read if isinstance(d, dict) and d.get(linear.UNDERDETERMINED)]
    if not notes:
        return None
    n, d = min(x["n_train"] for x in notes), max(x["d"] for x in notes)
    return (
        f"no verdict: the maps were fitted on {n} training samples for a model {d} wide, fewer samples than "
        f"dimensions, so the least-squares fit is underdetermined and its validation numbers cannot tell; fit on "
        f"at least {d} training samples"
    )


def evaluate(
    table: dict, cid: str, get=None, profile: Profile | str = "tiny", reasons: dict | None = None, seed_keys=()
) -> ClaimRecord:
    """The record of claim ``cid`` of ``table`` judged on the numbers ``get`` gives, with its verdict from the
    resamples (:func:`jtc_utils.evidence.verdicts.decide`: ``verdict``, ``margin``, ``lo``, ``hi``, ``share``,
    ``resampled``), its ``reason`` where it fails or is undecided, and the magnitude as read on ``profile`` (see
    :func:`judged`). A claim whose figures the profile does not have gets no verdict and says why."""
    return typed(_evaluate(table, cid, get, profile, reasons, seed_keys))


def _evaluate(table, cid, get, profile, reasons, seed_keys) -> dict:
    get = memo(get or default_get)
    fn = table[cid]
    seen = reading(get)
    try:
        rec = fn(seen)
    except NotComputed as e:
        text = fn(memo(lambda f: figdata.committed(f)["data"]))  # the wording and rule, from the stand-in's
        mag = text["magnitude"] and {**text["magnitude"], "ours": "-", "holds": None, "note": "not computed"}
        rec = {**text, "ours": f"not computed on this profile: {e}", "margin": None, "magnitude": mag, "checks": []}
        return judged(
            {**rec, **verdicts.decide(None, None), "holds": None, "reason": None, "status": NOT_COMPUTED_STATUS},
            profile,
        )
    if (why := underdetermined(seen.read)) and rec["kind"] == "claim":
        rec = {**rec, "margin": None, "no_verdict": why, "status": Status.NO_VERDICT}
        return judged({**rec, **verdicts.decide(None, None), "holds": None, "reason": why}, profile)
    failed = [c for c in rec.get("checks") or () if not c["passed"]]
    if failed and rec["kind"] == "claim":  # the instrument does not work: no verdict either way, the margin kept
        why = "not judged: " + "; ".join(c["why"] for c in failed) + "."
        return judged(
            {
                **rec,
                **verdicts.decide(None, None),
                "margin": rec["margin"],
                "holds": None,
                "not_judged": why,
                "reason": why,
                "status": NOT_JUDGED_STATUS,
            },
            profile,
        )
    judge = rec["kind"] == "claim" and rec["margin"] is not None
    rs = resampling(fn, get, seed_keys) if judge and not rec.get("no_interval") else {"units": []}
    if "per_seed" in rs:
        rec = {**rec, **verdicts.seed_test(rec["margin"], rs["per_seed"])}
    else:
        recentre = any(u in verdicts.REFITTED_UNITS for u in rs["units"])
        rec = {**rec, **verdicts.decide(rec["margin"], rs.get("margins"), recentre=recentre)}
    rec["resamples"] = rs["units"] if (rec["resampled"] or "per_seed" in rs) else []
    rec["holds"] = {verdicts.HOLDS: True, verdicts.FAILS: False}.get(rec["verdict"])
    if judge and not rec["resampled"] and "per_seed" not in rs:
        rec["no_interval"] = rec.get("no_interval") or rs.get("fixed") or NO_INTERVAL
    rec["reason"] = reason(rec, profile, reasons or {})
    rec["status"] = status(rec)
    return judged(rec, profile)


def status(record: dict) -> Status:
    """A record's status, from its fields (never from display text): ``holds``, ``fails``, ``undecided`` (a
    resampled or seed-tested verdict), ``no interval`` (a point verdict), ``not judged`` (its instrument fails a
    check), ``not computed`` (the profile lacks its figures), ``no verdict`` (underdetermined maps, or no shape part)
    or, for a check, ``check passes`` / ``check fails``."""
    if record.get("status") in (Status.NOT_JUDGED, Status.NOT_COMPUTED, Status.NO_VERDICT):
        return Status(record["status"])
    v = record.get("verdict")
    if v is None:
        return Status.NO_VERDICT
    if record.get("kind") == "check":
        return Status.CHECK_PASSES if v == verdicts.HOLDS else Status.CHECK_FAILS
    return Status(v) if (record.get("resampled") or record.get("n_seeds")) else Status.NO_INTERVAL


def registry(table: dict, name: str, reasons: dict | None = None, seed_keys=()):
    """``check`` and ``all_claims`` for a subpackage's table of claim functions (id -> function of ``get``), with
    its ``reasons`` (as :data:`jtc_utils.jtc.claims.REASONS`) and the figure keys that hold one row per training seed
    (``seed_keys``, see :func:`jtc_utils.evidence.verdicts.replicate`); the paper's ``PAPER`` makes its claims
    reachable by id. Where a function gives no magnitude part, the
    paper's numbers (``paper``) are carried as one, not judged off the paper profile."""

    def check(cid: str, get=default_get, profile: Profile | str = "tiny") -> dict:
        if cid not in table:
            raise ValueError(f"unknown {name} claim {cid!r}; known: {', '.join(table)}")
        rec = evaluate(table, cid, get, profile, reasons, seed_keys)
        if rec["magnitude"] is None:
            part = magnitude_part(rec["paper"], "-", None, "-")
            rec = {**rec, "magnitude": judged({"magnitude": part}, profile)["magnitude"]}
        return rec

    def all_claims(get=default_get, profile: Profile | str = "tiny") -> list[dict]:
        get = memo(get)
        return [check(c, get, profile) for c in table]

    return check, all_claims


def claims_records(name: str, all_claims, real_getter=None) -> dict:
    """A paper's two claims files as records of the figure registry (id -> a function with the registry's
    signature): ``claims_<name>``, every claim judged on the stand-in's stored figures, and ``claims_<name>_real``,
    judged on the real model's (``real_getter()``: the paper's view of them; default: each ``real_<fig>``)."""

    def stand_in(fig: str, s: Setting):
        return all_claims(profile=s.profile), {"profile": s.profile.name, "source": "book/data"}

    def real(fig: str, s: Setting):
        get = profile_getter("real_") if real_getter is None else real_getter()
        return all_claims(get, "real"), {"profile": "real", "source": "book/data"}

    return {f"claims_{name}": stand_in, f"claims_{name}_real": real}


def check_any(cid: str, get=default_get, profile: Profile | str = "tiny") -> dict:
    """The record of claim ``cid`` of any paper, by the paper that declares it (:mod:`jtc_utils.evidence.registry`)."""
    return registered().check(cid)(cid, get, profile)


def getter(results: dict, alias: dict | None = None):
    """A ``get`` that uses numbers just computed (``results[fig]``) and reads the others from ``book/data``.
    ``alias`` judges a claim on another figure's numbers (``{"fig10": "ext_bert_fig10"}`` applies the rules of
    the GPT-2 claim C12 to the BERT-style extension)."""
    alias = alias or {}

    def get(fig):
        fig = alias.get(fig, fig)
        return results[fig] if fig in results else default_get(fig)

    return get


def computing_getter(compute, results: dict | None = None, params: dict | None = None, computes=None, prefix: str = ""):
    """A ``get`` that computes each figure it is asked for, once, with ``compute(fig) -> (numbers, parameters)``
    (its numbers kept in ``results``, its parameters in ``params``), where ``computes(fig)`` says so (default: every
    figure), and reads every other figure from ``book/data``: a claim judged on figures recomputed in another setting
    (the paper's regime, another training seed). Each computation is measured by the build's cost model under the
    figure's id with ``prefix`` (``regime_fig4``, :func:`jtc_utils.core.infra.costs.figure`)."""
    results = {} if results is None else results
    params = {} if params is None else params

    def get(fig):
        if computes is not None and not computes(fig):
            return default_get(fig)
        if fig not in results:
            with costs.figure(prefix + fig):
                results[fig], params[fig] = compute(fig)
        return results[fig]

    return get
