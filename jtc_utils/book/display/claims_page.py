"""The claims page's presentation (book machinery on top of :mod:`jtc_utils.jtc.claims` and the chapters' ``claims``):
tables that say on every column header which profile they read, a verdict cell that carries its own reason one
click away (an HTML ``<details>``), the stand-in and the real model side by side per claim, and a scroll box with
a visible cue where a table is wider than a phone's screen. Nothing here judges: the records come from the
chapters' claim functions; this module only lays them out.

Verdict colours are CSS classes (``jtc-v-holds``, ``jtc-v-fails``, ``jtc-v-undecided``, ``jtc-v-other``, in
``_static/jtc.css``), so that the page and the summary share them.
"""

from __future__ import annotations

import html
import re

from jtc_utils.book.display import claim_tables
from jtc_utils.core.data import profiles
from jtc_utils.core.data.profiles import Profile
from jtc_utils.evidence import claims, findings, verdicts
from jtc_utils.evidence.records import Status

PROFILE_NAMES = {
    "tiny": "the stand-in",
    "real": "the real model",
    "paper": "the paper's models",
    "custom": "your model",
}
# the CSS class of a verdict by its status (its tone, claim_tables.TONES); every other status is "jtc-v-other"
VERDICT_CLASSES = {s: f"jtc-v-{tone}" for s, tone in claim_tables.TONES.items()}
# the interval a verdict reads, named by its coverage, and when a claim holds (every table's caption says it)
COVERAGE_NOTE = (
    f"The interval beside each margin is a {verdicts.INTERVAL_NAME} (the {1 - verdicts.LEVEL:.0%} and "
    f"{verdicts.LEVEL:.0%} points of the resampled margins): a claim holds when its lower end is above "
    "0 and fails when its upper end is below 0."
)


def code_spans(text: str) -> str:
    """``text`` as HTML, with its `code` spans (a reason names a module or a command) set as code, not backticks."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def verdict_class(record: dict) -> str:
    """The CSS class of a record's shape verdict."""
    return VERDICT_CLASSES.get(claims.status(record), "jtc-v-other")


def verdict_cell(record: dict, column: str = "") -> str:
    """A shape verdict as one table cell: the verdict (coloured), the margin with its interval, our numbers, the
    verdict on each training seed where the claim was judged on several, and,
    where the claim fails, is undecided or has no interval, its reason folded under "why" (one click); ``column``
    names the column above the cell on a phone, where a long table's header has scrolled away."""
    words = html.escape(findings.shape_verdict(record))
    label = f'<span class="jtc-col-label">{html.escape(column)}</span>' if column else ""
    cell = (
        f'{label}<span class="jtc-verdict {verdict_class(record)}">{words}</span><br>'
        f'{claim_tables.margin_text(record)}<br><span class="jtc-ours">{html.escape(str(record["ours"]))}</span>'
    )
    if record.get("checks"):
        cell += f'<br><span class="jtc-checks">instrument: {claim_tables.checks_text(record)}</span>'

    if record.get("per_seed"):
        cell += (
            '<br><span class="jtc-seeds">by training seed: '
            + html.escape(", ".join(f"{s['seed']}: {s['verdict']}" for s in record["per_seed"]))
            + "</span>"
        )
    if record.get("reason"):
        cell += f'<details class="jtc-why"><summary>why</summary>{code_spans(record["reason"])}</details>'
    return cell


def _claim_cell(record: dict) -> str:
    cid = record["id"]
    quote = record.get("quote") or record.get("claim") or ""
    return (
        f'<a href="{claim_tables.page_of(cid)}.html#claim-{cid.lower()}">{cid}</a> '
        f'{html.escape(f"“{quote}”" if record.get("quote") else quote)}'
    )


def _rule_cell(record: dict) -> str:
    words = ", ".join(f"“{w}”" for w in record.get("words") or []) or "-"
    return f'<i>{html.escape(str(record["rule"]))}</i><br>reading: {html.escape(words)}'


def _magnitude_cell(record: dict) -> str:
    mag = record.get("magnitude") or {}
    return (
        f'paper: {html.escape(str(mag.get("paper", "-")))}<br>ours: {html.escape(str(mag.get("ours", "-")))}'
        f'<br><b>{html.escape(findings.magnitude_verdict(record))}</b>'
    )


def _table(rows: list[dict], uuid: str, caption: str) -> str:
    """Rows of HTML cells as a claims table in its scroll box, with a caption naming what it reads."""
    import pandas as pd

    t = pd.DataFrame(rows)
    styler = claim_tables.style(t, uuid, widths=False).set_caption(html.escape(f"{caption}. {COVERAGE_NOTE}"))
    return claim_tables.Scrolled(styler).to_html()


def group_table(records: list[dict], profile: Profile | str, uuid: str, caption: str) -> str:
    """One group's claims: the claim (linked to its chapter), the rule and its reading, the shape verdict on
    ``profile`` (its column header names the profile) and the magnitude."""
    name = profiles.name_of(profile)
    where = PROFILE_NAMES.get(name, name)
    rows = [
        {
            "claim": _claim_cell(r),
            "rule and its reading": _rule_cell(r),
            f"shape on {where}: verdict, margin [{verdicts.INTERVAL_NAME}], ours": verdict_cell(r),
            "magnitude: the paper's numbers, ours, verdict": _magnitude_cell(r),
        }
        for r in records
    ]
    return _table(rows, uuid, caption)


def side_by_side(tiny: list[dict], real: list[dict], uuid: str, caption: str) -> str:
    """A paper's claims with their shape verdicts on the stand-in and on the real model in two columns, one row per
    claim (the same rule judges both)."""
    by_id = {r["id"]: r for r in real}
    missing = [r["id"] for r in tiny if r["id"] not in by_id]
    if missing:
        raise ValueError(f"claims {missing} have no record on the real model: both groups must list every claim")
    rows = [
        {
            "claim": _claim_cell(r),
            "rule and its reading": _rule_cell(r),
            f"on the stand-in: verdict, margin [{verdicts.INTERVAL_NAME}], ours": verdict_cell(r, "on the stand-in"),
            f"on the real model: verdict, margin [{verdicts.INTERVAL_NAME}], ours": verdict_cell(
                by_id[r["id"]], "on the real model"
            ),
            "the paper's numbers": html.escape(str((r.get("magnitude") or {}).get("paper", "-"))),
        }
        for r in tiny
    ]
    return _table(rows, uuid, caption)


def summary_table(counts, uuid: str) -> str:
    """The findings per group (rows) and verdict (columns) with the verdict colours on the cells that count."""
    import pandas as pd

    classes = pd.DataFrame("", index=counts.index, columns=counts.columns)
    for col in counts.columns:  # a column named by a status (its stored word) takes that status's colour
        cls = VERDICT_CLASSES.get(col)  # a Status is its word: "holds" finds Status.HOLDS
        if cls:
            classes[col] = [cls if v else "" for v in counts[col]]
    styler = (
        counts.style.set_uuid(uuid)
        .set_table_attributes('class="jtc-claims"')
        .set_td_classes(classes)
        .set_table_styles([{"selector": "td, th", "props": "text-align: left; white-space: normal"}])
    )
    return claim_tables.Scrolled(styler).to_html()


# which verdict speaks to the paper's sentence (the claims page states it above the table of disagreements)
WHICH_TO_BELIEVE = (
    "**Which verdict to believe.** The real model's verdict is the evidence about the paper's sentence: SmolLM2-135M "
    "is a pretrained transformer of the kind the papers study, read on real text. The stand-in's verdict is a "
    "controlled world that helps explain it: small models trained for minutes on a generated corpus whose structure "
    "the book knows, where a shape can be traced to its cause. Where the two differ, the real model's verdict answers "
    "the paper and the stand-in's says whether the shape needs the real model's scale or text; a verdict that is not "
    "judged or not computed on the real model leaves the paper's sentence open there, whatever the stand-in says."
)
JUDGED = (Status.HOLDS, Status.FAILS, Status.UNDECIDED, Status.NO_INTERVAL)  # a verdict, with or without interval


def differing(tiny: list[dict], real: list[dict]) -> list[tuple[dict, dict]]:
    """The pairs (stand-in record, real record) of the claims judged on both profiles whose statuses differ
    (:func:`jtc_utils.evidence.claims.status`: holds, fails, undecided, or a point verdict without an interval)."""
    by_id = {r["id"]: r for r in real}
    return [
        (t, by_id[t["id"]])
        for t in tiny
        if t["id"] in by_id
        and t.get("kind", "claim") == "claim"
        and claims.status(t) in JUDGED
        and claims.status(by_id[t["id"]]) in JUDGED
        and claims.status(t) != claims.status(by_id[t["id"]])
    ]


def disagreement_table(pairs: list[tuple[dict, dict]], sentences: dict, uuid: str) -> str:
    """The claims whose verdicts differ between the stand-in and the real model: each with both verdicts and
    margins and the one sentence (``sentences``: claim id -> why, written in the claim's module from the numbers) on
    why they differ. A pair without a sentence is refused, so a new disagreement cannot go unexplained."""
    missing = [t["id"] for t, _ in pairs if t["id"] not in sentences]
    if missing:
        raise ValueError(
            f"claims {missing} differ between the stand-in and the real model without a sentence on why: "
            "add one to the DIFFERS table of the claim's module"
        )
    rows = [
        {
            "claim": _claim_cell(t),
            "on the stand-in": verdict_cell({**t, "reason": None}, "on the stand-in"),
            "on the real model": verdict_cell({**r, "reason": None}, "on the real model"),
            "why they differ": code_spans(sentences[t["id"]]),
        }
        for t, r in pairs
    ]
    return _table(rows, uuid, "The claims whose verdicts differ between the stand-in and the real model")


def counts_by_status(records: list[dict]) -> dict:
    """Claims (not findings) by status: holds, fails, undecided, no interval, not judged (instrument), not computed,
    no verdict; checks apart."""
    order = [s for s in Status if s not in (Status.CHECK_PASSES, Status.CHECK_FAILS)]
    st = [claims.status(r) for r in records if r.get("kind", "claim") == "claim"]
    names = {Status.NOT_JUDGED: "not judged (instrument)"}
    return {names.get(k, k.value): st.count(k) for k in order}
