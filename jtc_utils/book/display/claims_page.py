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
    "**Which verdict to believe** is said claim by claim, in the table's last column, by the claim's own module: "
    "which profile's verdict speaks to the paper's sentence, why, and whether the instrument that measures it passed "
    "its checks. No rule decides it for every claim. SmolLM2-135M is a pretrained transformer of the kind the papers "
    "study, read on real text, while the stand-in is a controlled world that helps explain it (small models trained "
    "for minutes on a generated corpus whose structure the book knows), and each row says which of the two the "
    "sentence is about. A point verdict without an interval is no finding on either side. A verdict that is not "
    "judged or not computed on the real model leaves the paper's sentence open there, whatever the stand-in says."
)
NO_FINDING = "neither: a point verdict without an interval is no finding"


def which_to_believe(tiny: dict, real: dict, believe: dict) -> str:
    """Which of two differing verdicts speaks to the paper's sentence (see :data:`WHICH_TO_BELIEVE`): none where
    either verdict has no interval, else the claim's own reading (``believe``: claim id -> text, each module's
    ``BELIEVE``); a claim without one is refused, so that no disagreement is settled by a rule for every claim."""
    if Status.NO_INTERVAL in (claims.status(tiny), claims.status(real)):
        return NO_FINDING
    if tiny["id"] not in believe:
        raise ValueError(
            f"claim {tiny['id']} differs between the stand-in and the real model without saying which verdict speaks "
            "to the paper: add it to the BELIEVE table of the claim's module"
        )
    return believe[tiny["id"]]


JUDGED = (Status.HOLDS, Status.FAILS, Status.UNDECIDED, Status.NO_INTERVAL)  # a verdict, with or without interval


def differing(tiny: list[dict], real: list[dict]) -> list[tuple[dict, dict]]:
    """The pairs (stand-in record, real record) of the claims judged on both profiles whose verdicts differ: their
    statuses (:func:`jtc_utils.evidence.claims.status`: holds, fails, undecided, or a point verdict without an
    interval) or, both without an interval, their point verdicts."""
    by_id = {r["id"]: r for r in real}

    def verdict(r):
        return claims.status(r), r.get("verdict")

    return [
        (t, by_id[t["id"]])
        for t in tiny
        if t["id"] in by_id
        and t.get("kind", "claim") == "claim"
        and claims.status(t) in JUDGED
        and claims.status(by_id[t["id"]]) in JUDGED
        and verdict(t) != verdict(by_id[t["id"]])
    ]


def disagreement_table(pairs: list[tuple[dict, dict]], sentences: dict, uuid: str, believe: dict) -> str:
    """The claims whose verdicts differ between the stand-in and the real model: each with both verdicts and
    margins, the one sentence (``sentences``: claim id -> why, written in the claim's module from the numbers) on
    why they differ, and which verdict speaks to the paper (:func:`which_to_believe`, ``believe``: the modules'
    own readings). A pair without a sentence or a reading is refused, so a new disagreement cannot go unexplained."""
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
            "which speaks to the paper": code_spans(which_to_believe(t, r, believe)),
        }
        for t, r in pairs
    ]
    return _table(rows, uuid, "The claims whose verdicts differ between the stand-in and the real model")


def badge(record: dict | None) -> str:
    """A claim's status on one profile as a small coloured word (``-`` where it was not judged there)."""
    if record is None:
        return "-"
    return f'<span class="jtc-verdict {verdict_class(record)}">{html.escape(claims.status(record).value)}</span>'


def verdict_grid(sections, columns, uuid: str, caption: str, link, row_ids: bool = False) -> str:
    """Claims by profile, one status badge each: ``sections`` is a list of (title or ``None``, rows), each row
    ``{column: record}`` for the ``columns`` (their headers, in order), a missing column drawn ``-``; the claim's id
    links to ``link(cid)`` and, with ``row_ids``, every row is the anchor ``verdict-<id>`` (the claims page's grid,
    which the chapters and a search for a claim id land on). Plain HTML, narrow enough for a phone."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in ("claim", *columns))
    body = []
    for title, rows in sections:
        if title:
            body.append(f'<tr class="jtc-grid-group"><th colspan="{len(columns) + 1}">{html.escape(title)}</th></tr>')
        for row in rows:
            first = next(r for r in row.values() if r is not None)
            cid = first["id"]
            rid = f' id="verdict-{cid.lower()}"' if row_ids else ""
            cells = "".join(f"<td>{badge(row.get(c))}</td>" for c in columns)
            body.append(
                f'<tr{rid}><td><a href="{link(cid)}">{html.escape(cid)}</a> '
                f"{html.escape(str(first.get('claim') or ''))}</td>{cells}</tr>"
            )
    return (
        f'<div class="{claim_tables.SCROLL}"><table class="jtc-claims jtc-grid" id="{uuid}">'
        f"<caption>{html.escape(caption)}</caption><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody>"
        "</table></div>"
    )


def _ids(records: list[dict]) -> str:
    return ", ".join(
        f'<a href="claims_verdicts.html#verdict-{r["id"].lower()}">{html.escape(r["id"])}</a>' for r in records
    )


def _headline_verdict(statuses: list[Status]) -> str:
    """Several claims' statuses as one word: holds where all hold, fails where any fails, else what they are."""
    if statuses and all(s == Status.HOLDS for s in statuses):
        return "holds"
    if Status.FAILS in statuses:
        return "fails"
    return " / ".join(dict.fromkeys(s.value for s in statuses)) or "not tested"


def headline(paper: str, says: str, key: tuple, profiles_: list[tuple[str, list[dict]]], look: tuple) -> str:
    """One paper's findings in words, for the first screen: whether its headline (``says``, tested by the claims
    ``key``) holds on each profile, then per profile the claims that hold, fail or are undecided (each id a link to
    its row of the verdict grid) and, where a profile gives no verdict at all, why (the records' own reasons);
    ``look`` is (href, name) of the one figure to look at. HTML, one list item."""
    verdicts_, lines = [], []
    for where, recs in profiles_:
        by: dict[Status, list[dict]] = {}
        for r in recs:
            if r.get("kind", "claim") == "claim":
                by.setdefault(claims.status(r), []).append(r)
        verdict = _headline_verdict([claims.status(r) for r in recs if r["id"] in key])
        verdicts_.append(f"<b>{html.escape(verdict)}</b> on {html.escape(where)}")
        bits = [f"{st.value} {_ids(by[st])}" for st in (Status.HOLDS, Status.FAILS, Status.UNDECIDED) if by.get(st)]
        if not any(by.get(st) for st in JUDGED):
            why = {
                (r.get("not_judged") or "").removeprefix("not judged: ").rstrip(".")
                for r in by.get(Status.NOT_JUDGED, [])
            }
            why.discard("")
            bits.append("no verdict" + (f": {html.escape('; '.join(sorted(why)))}" if why else ""))
        elif by.get(Status.NOT_JUDGED):
            bits.append(f"not judged (instrument) {_ids(by[Status.NOT_JUDGED])}")
        lines.append(f"On {html.escape(where)}: {'; '.join(bits)}.")
    return (
        f'<li><span class="jtc-headline-verdict"><b>{html.escape(paper)}</b>: {html.escape(says)} '
        f"({', '.join(key)}): {', '.join(verdicts_)}.</span><br>"
        + "<br>".join(lines)
        + f'<br>Look at <a href="{look[0]}">{html.escape(look[1])}</a>.</li>'
    )


def counts_by_status(records: list[dict]) -> dict:
    """Claims (not findings) by status: holds, fails, undecided, no interval, not judged (instrument), not computed,
    no verdict; checks apart."""
    order = [s for s in Status if s not in (Status.CHECK_PASSES, Status.CHECK_FAILS)]
    st = [claims.status(r) for r in records if r.get("kind", "claim") == "claim"]
    names = {Status.NOT_JUDGED: "not judged (instrument)"}
    return {names.get(k, k.value): st.count(k) for k in order}
