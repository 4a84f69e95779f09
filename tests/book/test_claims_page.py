"""The claims page as a reader meets it (stored page, and in a browser at phone width): each reason one click from
its verdict, the profile named on every table, the stand-in and the real model side by side per claim, a coloured
summary without code above it, and a visible cue where a table scrolls sideways."""

import re
from html import escape as html_escape

import nbformat
import pytest

from jtc_utils.book.display import claims_page
from jtc_utils.core.infra.paths import BOOK_DIR
from jtc_utils.evidence import figdata


@pytest.fixture(scope="module")
def page():
    nb = nbformat.read(BOOK_DIR / "claims_verdicts.ipynb", as_version=4)
    tables = {}
    for c in nb.cells:
        for o in c.get("outputs", []):
            h = "".join(o.get("data", {}).get("text/html", ""))
            for uuid, body in re.findall(r'<table id="T_([\w-]+)"(.*?)</table>', h, re.S):
                tables[uuid] = (body, c)
    return tables


GROUP_TABLES = ("claims-jtc", "claims-jtc-regime", "claims-lenses", "claims-ffn", "claims-linearity")


def _cells(body):
    return re.findall(r"<td[^>]*>(.*?)</td>", body, re.S)


def test_every_failing_or_undecided_verdict_carries_its_reason(page):
    for uuid in GROUP_TABLES:
        body, _ = page[uuid]
        for cell in _cells(body):
            if re.search(r"jtc-v-(fails|undecided)", cell):
                assert '<details class="jtc-why"><summary>why</summary>' in cell, (uuid, cell[:200])


def test_every_table_names_the_profile_it_reads(page):
    for uuid in GROUP_TABLES:
        body, _ = page[uuid]
        caption = re.search(r"<caption>(.*?)</caption>", body, re.S)
        assert caption and "profile" in caption.group(1), uuid
        assert 'class="index_name' not in body, f"{uuid}: a stray index-name header row"


@pytest.mark.parametrize(
    "uuid, stand_in, real",
    [
        ("claims-jtc", "claims", "claims_real"),
        ("claims-lenses", "claims_lenses", "claims_lenses_real"),
        ("claims-ffn", "claims_ffn", "claims_ffn_real"),
        ("claims-linearity", "claims_linearity", "claims_linearity_real"),
    ],
)
def test_the_stand_in_and_the_real_model_sit_side_by_side(page, uuid, stand_in, real):
    body, _ = page[uuid]
    heads = re.findall(r"<th[^>]*col_heading[^>]*>(.*?)</th>", body, re.S)
    assert any(h.startswith("on the stand-in") for h in heads) and any(h.startswith("on the real model") for h in heads)
    rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)[1:]
    assert len(rows) == len(figdata.load(stand_in)["data"]) == len(figdata.load(real)["data"])


def test_the_summary_is_coloured_and_shows_no_code(page):
    body, cell = page["claims-summary"]
    assert "jtc-v-holds" in body and "jtc-v-fails" in body
    assert "hide-input" in cell.metadata.get("tags", [])


def test_a_verdict_cell_folds_its_reason_and_escapes_it():
    rec = {
        "id": "C1",
        "verdict": "fails",
        "resampled": True,
        "kind": "claim",
        "ours": "a < b",
        "margin": -0.1,
        "lo": -0.2,
        "hi": -0.05,
        "unit": "",
        "reason": "the stand-in is <small>",
        "rule": "a > b",
    }
    cell = claims_page.verdict_cell(rec)
    assert "jtc-v-fails" in cell and "&lt;small&gt;" in cell and "<details" in cell
    assert "<details" not in claims_page.verdict_cell({**rec, "verdict": "holds", "reason": ""})


def test_every_claims_table_names_its_intervals_coverage_and_every_code_cell_is_hidden(page):
    for uuid in GROUP_TABLES:
        body, cell = page[uuid]
        assert "90% interval" in body and "95% interval" not in body, uuid
        assert "hide-input" in cell.metadata.get("tags", []), f"{uuid}: its code shows above the table"


def test_the_page_indexes_each_papers_verdicts_on_its_first_screen():
    nb = nbformat.read(BOOK_DIR / "claims_verdicts.ipynb", as_version=4)
    first = "".join(c.source for c in nb.cells[:3] if c.cell_type == "markdown")
    for label in ("claims-jtc", "claims-lenses", "claims-ffn", "claims-linearity", "claims-which"):
        assert f"(#{label})" in first, label
        assert any(c.cell_type == "markdown" and f"({label})=" in c.source for c in nb.cells), label


def _rec(cid, verdict, margin):
    return {
        "id": cid,
        "verdict": verdict,
        "resampled": True,
        "kind": "claim",
        "ours": "-",
        "margin": margin,
        "lo": margin - 0.1,
        "hi": margin + 0.1,
        "unit": "",
        "rule": "r",
        "claim": cid,
        "status": verdict,
    }


def test_a_disagreement_between_the_profiles_needs_its_sentence():
    tiny = [
        _rec("N1", "holds", 0.3),
        _rec("N2", "fails", -0.2),
        {**_rec("N3", "holds", 0.1), "verdict": None, "status": "not judged", "not_judged": "x"},
    ]
    real = [_rec("N1", "holds", 0.2), _rec("N2", "holds", 0.4), _rec("N3", "fails", -0.3)]
    pairs = claims_page.differing(tiny, real)
    assert [t["id"] for t, _ in pairs] == ["N2"]  # N1 agrees; N3 is not judged on the stand-in: no disagreement
    with pytest.raises(ValueError, match="N2.*DIFFERS"):
        claims_page.disagreement_table(pairs, {}, "t", {"N2": "the real model's"})
    # issue 77, item 6: which verdict speaks to the paper is the claim's own reading, never one rule for all
    with pytest.raises(ValueError, match="N2.*BELIEVE"):
        claims_page.disagreement_table(pairs, {"N2": "because `x`"}, "t", {})
    html = claims_page.disagreement_table(pairs, {"N2": "because `x`"}, "t", {"N2": "the real model's: `y`"})
    assert "<code>x</code>" in html and "jtc-v-fails" in html and "jtc-v-holds" in html
    assert "the real model&#x27;s: <code>y</code>" in html
    # issue 77, item 6: two point verdicts without an interval that differ are a disagreement too (F8), and neither
    # is a finding
    point = {"resampled": False, "no_interval": "no resamples"}
    t8, r8 = {**_rec("F8", "fails", -0.01), **point}, {**_rec("F8", "holds", 0.04), **point}
    assert [t["id"] for t, _ in claims_page.differing([t8], [r8])] == ["F8"]
    assert html_escape(claims_page.NO_FINDING) in claims_page.disagreement_table([(t8, r8)], {"F8": "x"}, "t", {})


def test_the_stored_page_explains_every_disagreement(page):
    body, cell = page["claims-differ"]
    assert "hide-input" in cell.metadata.get("tags", [])
    for stand, real in (
        ("claims", "claims_real"),
        ("claims_lenses", "claims_lenses_real"),
        ("claims_ffn", "claims_ffn_real"),
        ("claims_linearity", "claims_linearity_real"),
    ):
        for t, _ in claims_page.differing(figdata.load(stand)["data"], figdata.load(real)["data"]):
            assert f"#claim-{t['id'].lower()}" in body, t["id"]


def _cell_css(html: str, uuid: str) -> dict:
    """Each cell's CSS in a styled table's HTML (pandas writes one rule for the cells that share their CSS)."""
    out = {}
    for selectors, props in re.findall(r"([^{}]+)\{([^}]*)\}", html.split("</style>")[0]):
        for s in selectors.split(","):
            if (m := re.fullmatch(rf"#T_{uuid}_(row\d+_col\d+)", s.strip())) is not None:
                out[m.group(1)] = props
    return out


def test_a_verdict_is_coloured_by_its_status_not_by_its_words():
    """The colour of a verdict comes from the record's fields: a verdict tested on training seeds (its words carry
    the seed count) is coloured as its status, a point verdict is grey, and a cell whose words read like a verdict
    but whose record has none is not coloured as one."""
    from jtc_utils.book.display import claim_tables
    from jtc_utils.evidence.records import Status

    base = {
        "kind": "claim",
        "margin": 0.1,
        "resampled": False,
        "rule": "r",
        "ours": "o",
        "claim": "c",
        "id": "X1",
        "paper": "p",
    }
    seeded = {**base, "verdict": "holds", "n_seeds": 3, "seeds_on_side": 3}
    point = {**base, "id": "X2", "verdict": "fails"}
    none = {**base, "id": "X3", "verdict": None, "rule": "-"}
    assert claims_page.verdict_class(seeded) == "jtc-v-holds" and claims_page.verdict_class(point) == "jtc-v-other"
    cols = ["claim", "verdict", "magnitude verdict"]
    html = claim_tables.styled([seeded, point, none], "t-status", columns=cols).to_html()
    css = _cell_css(html, "t-status")
    assert "#1a7f37" in css["row0_col2"] and "italic" in css["row1_col2"] and "italic" in css["row2_col2"]
    words = {Status.HOLDS: "HOLDS", Status.NO_VERDICT: "HOLDS"}  # the same words, two statuses
    import pandas as pd

    t = pd.DataFrame({"verdict": list(words.values())})
    styled = claim_tables.style(t, "t-words", statuses={"verdict": list(words)}).to_html()
    rules = _cell_css(styled, "t-words")
    assert "#1a7f37" in rules["row0_col0"] and "#1a7f37" not in rules["row1_col0"]


def _record(cid, status, **kw):
    """A claim record of ``status`` as the claim functions write it (enough for the grid and the headline)."""
    verdict = {"holds": "holds", "fails": "fails", "undecided": "undecided"}.get(status)
    rec = {"id": cid, "claim": f"claim {cid}", "kind": "claim", "verdict": verdict, "resampled": True, **kw}
    if status == "not judged":
        rec.update(status="not judged", not_judged="not judged: the lens was trained 1 time.")
    return rec


def test_the_verdict_grid_gives_each_claim_a_row_with_a_badge_per_profile_and_an_anchor():
    """Issue 78, item 2: the claims page's grid, one row per claim, its id an anchor (verdict-<id>) linking to the
    chapter; a badge per profile coloured by status, ``-`` where the claim has no record there."""
    rows = [{"on A": _record("C1a", "holds"), "on B": _record("C1a", "fails")}, {"on A": _record("N1", "not judged")}]
    html = claims_page.verdict_grid([("Paper", rows)], ["on A", "on B"], "g", "cap", lambda c: f"x.html#{c}", True)
    assert '<tr id="verdict-c1a">' in html and '<tr id="verdict-n1">' in html and 'href="x.html#C1a"' in html
    assert 'jtc-v-holds">holds<' in html and 'jtc-v-fails">fails<' in html and "<td>-</td>" in html
    assert 'jtc-v-other">not judged<' in html and '<th colspan="3">Paper</th>' in html
    plain = claims_page.verdict_grid([(None, rows)], ["on A", "on B"], "g", "cap", lambda c: "#", False)
    assert "verdict-" not in plain  # a chapter's grid adds no second anchor of a claim


def test_the_headline_says_whether_the_papers_headline_holds_and_why_a_profile_has_no_verdict():
    """Issue 78, item 1: per paper, the headline claims' verdict on each profile in one word, the claims that hold
    and fail (linked to their grid rows), and where a profile judged nothing, the records' own reason."""
    real = [_record("C1a", "holds"), _record("C2", "holds"), _record("C12a", "fails")]
    stand_in = [_record("C1a", "holds"), _record("C2", "fails")]
    item = claims_page.headline(
        "JTC", "mat beats id", ("C1a", "C2"), [("the real", real), ("the stand", stand_in)], ("f.html", "Fig")
    )
    assert "<b>holds</b> on the real" in item and "<b>fails</b> on the stand" in item
    assert 'href="claims_verdicts.html#verdict-c12a"' in item and 'Look at <a href="f.html">Fig</a>' in item
    none = claims_page.headline("Lens", "lens", ("N1",), [("the real", [_record("N1", "not judged")])], ("f", "F"))
    assert "<b>not judged</b> on the real" in none and "no verdict: the lens was trained 1 time" in none


def test_every_explained_disagreement_says_which_verdict_speaks_to_the_paper():
    """Each paper's module says, for every claim whose disagreement it explains (DIFFERS), which verdict speaks to
    the paper and whether its instrument passed (BELIEVE): the claims page refuses a disagreement without either."""
    from jtc_utils.ffn import claims as ffn_claims
    from jtc_utils.jtc import claims as jtc_claims
    from jtc_utils.lenses import claims as lens_claims
    from jtc_utils.linearity import claims as sl_claims

    for module in (jtc_claims, lens_claims, ffn_claims, sl_claims):
        assert set(module.DIFFERS) == set(module.BELIEVE), module.__name__
        assert all(text.strip() for text in module.BELIEVE.values()), module.__name__
