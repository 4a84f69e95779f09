"""Claim records as the book shows them: the verdicts in words, the margin with its interval, the chapter that shows
each claim, and styled HTML tables (coloured verdicts, wrapped text, fixed ids so that a re-executed page is
identical)."""

from __future__ import annotations

import html

import pandas as pd

from jtc_utils.core.data.profiles import Profile
from jtc_utils.evidence import claims, digits, findings, verdicts
from jtc_utils.evidence.claims import default_get, short_number
from jtc_utils.evidence.records import Status
from jtc_utils.evidence.registry import get as registered

# the tone a verdict is shown in, by its status (from the record's fields, never from its words): the one table the
# cells' colours here and the claims page's verdict classes (jtc-v-<tone>) read; every other status is grey
TONES = {Status.HOLDS: "holds", Status.FAILS: "fails", Status.CHECK_FAILS: "fails", Status.UNDECIDED: "undecided"}
_CSS = {
    "holds": "background-color: #dafbe1; color: #1a7f37; font-weight: bold",
    "fails": "background-color: #ffebe9; color: #cf222e; font-weight: bold",
    "undecided": "background-color: #fff8c5; color: #7d4e00; font-weight: bold",
}
_GREY = "color: #57606a; font-style: italic"


def status_css(s: Status | None) -> str:
    """The CSS of a verdict cell of status ``s`` (none for ``None``: a cell that is not a verdict, or a mixed one)."""
    return "" if s is None else _CSS[TONES[s]] if s in TONES else _GREY


def magnitude_status(record: dict) -> Status:
    """The status of a record's magnitude verdict: holds or fails where it is judged; not computed where the profile
    lacks the claim's figures; otherwise not judged (off the paper profile) or no verdict (no number in the
    claim)."""
    mag = record.get("magnitude")
    if mag is None:
        return Status.NO_VERDICT
    if mag["holds"] is None:
        return Status.NOT_COMPUTED if claims.status(record) == Status.NOT_COMPUTED else Status.NOT_JUDGED
    return Status.HOLDS if mag["holds"] else Status.FAILS


def margin_text(record: dict) -> str:
    """The margin, the interval its verdict reads (or how many training seeds are on its side) and its unit, in a
    span the nbval sanitizer recognises (the digits are compared by the figure-data regression instead), then what
    its resamples resample."""
    if record.get("margin") is None or record.get("kind") == "check":
        return "-"
    text = short_number(record["margin"])
    spread = record.get("spread", record.get("lo") != record.get("hi"))
    if record.get("resampled") and spread:
        text += f" [{short_number(record['lo'])}, {short_number(record['hi'])}]"
    unit = f" {record['unit']}" if record.get("unit") else ""
    over = ""
    if record.get("not_judged"):
        over = "; not judged (its instrument fails a check)"
    elif record.get("n_seeds"):
        over = f"; {record['seeds_on_side']} of {record['n_seeds']} seeds"
    elif record.get("resampled"):
        what = " and ".join(record.get("resamples") or [])
        over = (
            f"; {verdicts.INTERVAL_NAME}, resampled: {what}"
            if spread
            else f"; no spread: every resample of the {what} gives this margin"
        )
        if record.get("recentred_by") is not None:
            over += f' (refits, recentred by <span class="jtc-margin">{short_number(-record["recentred_by"])}</span>)'
    return f'<span class="jtc-margin">{text}</span>{unit}{over}'


def checks_text(record: dict) -> str:
    """The record's instrument checks in one line: each one's name, measured value against its threshold, and
    whether it passed ("" where the claim states none)."""

    def num(v):  # a count (runs, layers) as a whole number, a measured share or score to three figures
        if isinstance(v, float) and v.is_integer() and abs(v) >= 1:
            return str(int(v))
        return "-" if v is None else (digits.sig(v, 3) if isinstance(v, float) else str(v))

    return "; ".join(
        f"{c['name']}: <span class=\"jtc-check-value\">{num(c['value'])}</span> (threshold "
        f"{num(c['threshold'])}) {'passes' if c['passed'] else 'FAILS'}"
        for c in record.get("checks") or []
    )


def frame(records: list[dict], link: str | None = None):
    """Claim records (of this module or of a subpackage's ``claims``) as a table indexed by id, with the two
    verdicts in words (columns ``verdict`` and ``magnitude verdict``), the margin with its interval (``margin``),
    the lexicon entries of the rule (``reading``), its instrument checks (``instrument``), the reason (``why``), and
    the magnitude's numbers (``paper's numbers``, ``our numbers``). ``link="anchor"`` makes each id an anchor
    (``claim-<id>``) that the claims page links to, and a link to its row of the claims page's verdict grid;
    ``link="page"`` makes it a link to the chapter that shows the claim (see :func:`page_of`)."""
    table = pd.DataFrame(records)
    table["verdict"] = [findings.shape_verdict(r) for r in records]
    table["margin"] = [margin_text(r) for r in records]
    table["reading"] = [", ".join(f"“{w}”" for w in r.get("words") or []) or "-" for r in records]
    table["instrument"] = [checks_text(r) or "-" for r in records]
    table["why"] = [r.get("reason") or "" for r in records]
    table["magnitude verdict"] = [findings.magnitude_verdict(r) for r in records]
    table["paper's numbers"] = [(r.get("magnitude") or {}).get("paper", "-") for r in records]
    table["our numbers"] = [(r.get("magnitude") or {}).get("ours", "-") for r in records]
    if "quote" not in table:
        table["quote"] = None
    table["quote"] = [f"“{q}”" if q else c for q, c in zip(table["quote"], table["claim"])]
    for col in ("claim", "quote", "paper", "ours", "rule", "why", "paper's numbers", "our numbers"):
        table[col] = table[col].map(lambda v: html.escape(str(v), quote=False))
    ids = list(table["id"])
    if link == "anchor":
        # the anchor the claims page links to, itself a link to the claim's row of the claims page's verdict grid
        table["id"] = [
            f'<a id="claim-{c.lower()}" href="claims_verdicts.html#verdict-{c.lower()}">{c}</a>' for c in ids
        ]
    elif link == "page":
        table["id"] = [f'<a href="{page_of(c)}.html#claim-{c.lower()}">{c}</a>' for c in ids]
    # a claim that fails or is undecided links to its reason (the claims page lists them as why-<id>)
    table["verdict"] = [
        f'<a href="claims_verdicts.html#why-{c.lower()}">{v}</a>' if w else v
        for c, v, w in zip(ids, table["verdict"], table["why"])
    ]
    return table.set_index("id")


def page_of(cid: str) -> str:
    """The chapter (notebook name) whose verdict table shows claim ``cid``."""
    pages = registered().claim_pages
    if cid not in pages:
        raise ValueError(f"no chapter known for claim {cid!r}; the claims: {', '.join(pages)}")
    return pages[cid]


# the verdict right after the claim: on a phone the first columns are what the reader sees before scrolling
CHAPTER_COLUMNS = (
    "claim",
    "verdict",
    "margin",
    "ours",
    "instrument",
    "rule",
    "reading",
    "paper's numbers",
    "our numbers",
    "magnitude verdict",
)
SCROLL = "jtc-scroll"  # the scroll box of a wide table: shadows at the edges, and on a phone a line saying it scrolls


class Scrolled:
    """A styled table in the book's scroll box (:data:`SCROLL`), shown as HTML by IPython and by ``to_html``."""

    def __init__(self, styler):
        self.styler = styler

    def to_html(self) -> str:
        return f'<div class="{SCROLL}">{self.styler.to_html()}</div>'

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:  # the plain-text form stored beside the HTML: the same on every run, no address
        rows, cols = self.styler.data.shape
        return f"a table of {rows} rows and {cols} columns"


class Folded:
    """Tables a reader opens when needed (the claims page's lexicon, seeds and the paper's regime), closed at first
    under a line that says what they hold: an HTML ``<details>``, each table in its scroll box, shown by IPython and by
    ``to_html``."""

    def __init__(self, summary: str, *tables):
        self.summary, self.tables = summary, tables

    def to_html(self) -> str:
        parts = []
        for t in self.tables:
            if hasattr(t, "to_html") and not isinstance(t, Scrolled):  # a Styler: into its scroll box
                parts.append(Scrolled(t).to_html())
            elif hasattr(t, "to_html"):
                parts.append(t.to_html())
            else:  # an IPython HTML object
                parts.append(t.data)
        return f'<details class="jtc-fold"><summary>{html.escape(self.summary)}</summary>{"".join(parts)}</details>'

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:  # the plain-text form stored beside the HTML: the line a reader opens it by
        return self.summary


def style(table, uuid: str, widths: bool = True, statuses: dict | None = None):
    """A claims table (a DataFrame of strings, HTML allowed) styled for the page: verdict columns coloured by their
    status (``statuses``: column -> one :class:`~jtc_utils.evidence.records.Status` or ``None`` per row, from the
    records' fields), wrapped text and, with ``widths``, bounded column widths. ``uuid`` fixes the table's HTML id
    (pandas draws a random one), so that a re-executed page is identical."""
    if table.index.name is not None:  # the named index (claim ids) becomes the first column: one header row
        table = table.reset_index()
    statuses = {c: list(s) for c, s in (statuses or {}).items() if c in table.columns}
    for c, s in statuses.items():
        if len(s) != len(table):
            raise ValueError(f"column {c!r} has {len(table)} rows but {len(s)} statuses: give one per row")
    cells = [
        {
            "selector": "td, th",
            "props": "text-align: left; vertical-align: top; white-space: normal; "
            "padding: 0.25em 0.5em; font-size: 0.85em",
        }
    ]
    if widths:
        cells.append({"selector": "td", "props": "min-width: 6em; max-width: 28em"})
    styler = table.style.set_uuid(uuid)
    if statuses:
        styler = styler.apply(lambda col: [status_css(s) for s in statuses[col.name]], subset=list(statuses))
    return styler.hide(axis="index").set_table_attributes('class="jtc-claims"').set_table_styles(cells, overwrite=False)


def styled(records: list[dict], uuid: str, columns=CHAPTER_COLUMNS, link: str | None = "anchor"):
    """:func:`frame` of ``records`` as an HTML table with verdicts coloured by their status, wrapped text and a
    scroll box of its own where it is wider than the page (see :func:`style`, :class:`Scrolled`)."""
    statuses = {"verdict": [claims.status(r) for r in records], "magnitude verdict": map(magnitude_status, records)}
    styler = style(frame(records, link)[list(columns)], uuid, statuses=statuses)
    # the paper's sentence (the column after the id) gets the room it needs: a rule of the table's own id, as specific
    # as the one that bounds every cell at 6em (a class rule of the style sheet lost to it)
    sentence = {"selector": f"td.col{list(columns).index('claim') + 1}", "props": "min-width: 16em; max-width: 32em"}
    styler = styler.set_table_styles([sentence], overwrite=False)
    return Scrolled(styler.set_table_attributes('class="jtc-claims jtc-sentences"'))


def lexicon_table():
    """The lexicon (:data:`jtc_utils.evidence.verdicts.LEXICON`) as a table for the claims page."""
    rows = [
        {
            "entry": k,
            "words": ", ".join(f"“{w}”" for w in r.words),
            "reading": r.reading,
            "number": "-" if r.value is None else f"{r.value:g}",
            "why": r.why,
        }
        for k, r in verdicts.LEXICON.items()
    ]
    return style(pd.DataFrame(rows).set_index("entry"), "claims-lexicon", widths=False)


def verdict_table(ids=None, get=default_get, profile: Profile | str = "tiny", uuid: str | None = None, link="anchor"):
    """The claims ``ids`` of any paper (default: every claim of the papers the custom book judges whole, the JTC
    paper's) as a styled HTML table (see :func:`styled`), ready to ``display``."""
    get = claims.memo(get)
    records = [claims.check_any(c, get, profile) for c in (ids or registered().judged_on_custom)]
    return styled(records, uuid or "verdicts-" + "-".join(ids or ["all"]), link=link)
