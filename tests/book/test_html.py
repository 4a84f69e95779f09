"""The rendered book: it builds (warnings are errors), every page of the table of contents is there, and math is
served from the book itself (MathJax from a PyPI package), never from a CDN, so equations render offline."""

import re

from jtc_utils.book.build import runner


def test_every_page_is_built(html):
    root, index = html
    for name in runner.notebook_names():
        assert (root / "book" / f"{name}.html").is_file(), name


def test_math_is_served_locally(html):
    root, _ = html
    page = (root / "book" / "sec3_linear_shortcuts.html").read_text()
    scripts = re.findall(r'<script[^>]*src="([^"]*mathjax[^"]*)"', page, flags=re.I)
    assert scripts, "no MathJax script on a page with equations"
    for src in scripts:
        assert not src.startswith(("http:", "https:", "//")), f"MathJax from the network: {src}"
        assert (root / "book" / src).resolve().is_file(), f"{src} is not in the built book"
    assert "cdn.jsdelivr.net/npm/mathjax" not in page


def _pages(root):
    return [root / "book" / "intro.html"] + [root / "book" / f"{n}.html" for n in runner.notebook_names()]


def test_no_page_declares_a_script_twice(html):
    """sphinx-thebe's configuration script was on every page twice: "Identifier 'THEBE_JS_URL' has already been
    declared" (jtc_utils.book.build.sphinx_ext keeps one)."""
    root, _ = html
    for page in _pages(root):
        text = page.read_text()
        bodies = re.findall(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", text, flags=re.S)
        declared = [b.strip() for b in bodies if b.strip()]
        assert len(declared) == len(set(declared)), f"{page.name}: an inline script appears twice"
        srcs = re.findall(r'<script[^>]*\bsrc="([^"]+)"', text)
        assert len(srcs) == len(set(srcs)), f"{page.name}: a script is loaded twice"
        assert text.count("const THEBE_JS_URL") <= 1, page.name


def test_mathjax_ships_only_what_the_pages_load(html):
    from jtc_utils.book.build.sphinx_ext import MATHJAX_KEEP

    root, _ = html
    mj = root / "_static" / "mathjax"
    assert (mj / "tex-chtml.js").is_file() and list((mj / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))
    assert not (mj / "tex-svg.js").exists() and not (mj / "tex-mml-chtml.js").exists()
    for f in mj.rglob("*"):
        if f.is_file():
            assert any(f == mj / k or (mj / k) in f.parents for k in MATHJAX_KEEP), f


def test_every_figure_can_be_enlarged(html):
    root, _ = html
    assert (root / "_static" / "jtc-enlarge.js").is_file()
    for page in _pages(root):
        text = page.read_text()
        if 'class="jtc-figure' in text:
            assert "_static/jtc-enlarge.js" in text, page.name


PAPER_WORDS = re.compile(r"paper|Geva|Razzhigaev|N-NJTC|et al\.|tuned lens", re.I)


def test_every_figure_reference_names_its_figure(html):
    """A page numbers its own figures ("Figure 1 (paper Figure 4)"), so a bare "Figure 4" in the prose or an exercise
    would send the reader to another plot: every "Figure N" / "Fig. N" either links to a figure of the same page whose
    caption carries that number, or names the paper it counts in ("paper Fig. 4", "the paper's Figure 3")."""
    from bs4 import BeautifulSoup

    root, _ = html
    for page in _pages(root):
        soup = BeautifulSoup(page.read_text(), "html.parser")
        numbers = {}
        for fig in soup.select("figure.jtc-figure[id]"):
            m = re.match(r"\s*Figure (\d+)", fig.figcaption.get_text() if fig.figcaption else "")
            if m:
                numbers[fig["id"]] = int(m.group(1))
        for a in soup.select('a[href^="#figure-"]'):
            target, text = a["href"][1:], a.get_text(" ", strip=True)
            assert target in numbers, f"{page.name}: {text!r} links to {target!r}, not a figure of this page"
            assert text == f"Figure {numbers[target]}", f"{page.name}: {text!r} links to Figure {numbers[target]}"
            a.decompose()
        for el in soup.select("figure, pre, script, style, div.cell_output, div.cell_input, nav, .bd-sidebar-primary"):
            el.decompose()
        text = " ".join(soup.get_text(" ").split())
        for m in re.finditer(r"\b(?:Figures?|Fig\.) \d+", text):
            before = text[max(0, m.start() - 30) : m.start()]
            assert PAPER_WORDS.search(before), (
                f"{page.name}: ...{before}{m.group(0)}... is neither a link nor the paper's"
            )


def test_no_page_costs_more_than_its_limit_to_load(html):
    """The heaviest page (section 4: its figures and the layer view) stays under 3 MB of compressed transfer on
    load; plotly (1.5 MB compressed) is fetched only when a reader scrolls to the view."""
    from jtc_utils.book.build.sphinx_ext import TRANSFER_LIMIT, page_transfer

    root, _ = html
    sizes = {p.name: page_transfer(p) for p in _pages(root)}
    heavy = {name: sum(s.values()) for name, s in sizes.items() if sum(s.values()) > TRANSFER_LIMIT}
    assert not heavy, heavy
    assert not any("plotly" in ref for s in sizes.values() for ref in s), "plotly is loaded with a page"


def test_no_page_shows_a_check_verdict_before_the_reader_tries(html):
    """An exercise's check cell ran on the book's own solution; printing "✓ correct" under an exercise the reader
    has not tried gives the answer away (issue 35). The page shows the check's code, not its verdict (the stored
    notebook keeps the output, which nbval compares)."""
    root, _ = html
    for page in _pages(root):
        text = page.read_text()
        assert not re.search(r"[✓✗] ex-[\w-]+:", text), page.name


def test_a_claims_table_has_one_header_row(html):
    """The claims tables carried the index's name ("id") as a second header row of its own."""
    root, _ = html
    for page in _pages(root):
        for head in re.findall(
            r'<table[^>]*class="jtc-claims"[^>]*>.*?<thead>(.*?)</thead>', page.read_text(), flags=re.S
        ):
            assert head.count("<tr") == 1, page.name


CHAPTERS_WITH_VERDICTS = (
    "sec3_linear_shortcuts",
    "sec4_predictions",
    "sec5_early_exit",
    "sec6_submodules",
    "appendix_b_news",
    "appendix_d_sizes",
    "lenses",
    "ffn_subupdates",
    "secretly_linear",
)


def test_every_chapter_opens_with_what_it_finds(html):
    """Issue 78, item 1: each chapter that judges claims opens, before its first figure and its first verdict table,
    with the grid of what it finds (its claims, their verdicts on each profile), every claim id there a link to its
    table in the page (or to its row on the claims page); the claims page opens with the grid of every claim."""
    root, _ = html
    for name in CHAPTERS_WITH_VERDICTS:
        text = (root / "book" / f"{name}.html").read_text()
        grid = text.find('id="chapter-findings"')
        assert grid != -1, f"{name} has no findings grid"
        for later in ('<figure class="jtc-figure"', 'id="T_verdicts-'):
            if later in text:
                assert grid < text.index(later), f"{name}: its findings come after its first {later}"
        body = text[grid : text.index("</table>", grid)]
        links = re.findall(r'<a href="([^"]+)">', body)
        assert links and all(h.startswith(("#claim-", "claims_verdicts.html#verdict-")) for h in links), (name, links)
        for h in links:
            anchor = h.split("#")[1]
            target = text if h.startswith("#") else (root / "book" / "claims_verdicts.html").read_text()
            assert f'id="{anchor}"' in target, (name, h)
    claims = (root / "book" / "claims_verdicts.html").read_text()
    assert claims.find('id="claims-grid"') < claims.find('id="T_claims-summary')
    # the real-model chapter judges no claim of its own: it opens with the way to the real column of that grid
    real = (root / "book" / "real_model.html").read_text()
    to_grid = real.find('href="claims_verdicts.html#claims-at-a-glance"')
    first_section = re.search(r'<h2>[^<]*<a class="headerlink"', real)  # the article's, not the print contents'
    assert first_section and -1 < to_grid < first_section.start(), "the real-model page does not open with the grid"
    assert 'id="claims-at-a-glance"' in claims
