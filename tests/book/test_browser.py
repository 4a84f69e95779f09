"""The rendered book in a real browser (Debian's Chromium driven by Playwright), at 1280 px and at phone width.

Every page of the table of contents loads with no console error other than the known ones, every image loads, no
raw TeX is left once MathJax has typeset the page, no output box runs past its column without a scroll box of its
own, and every local link (with its anchor) resolves. A failing page leaves a screenshot under
``.cache/browser-screenshots/``. Without a browser the test is skipped and says how to get one (``.ci/run``
installs Chromium where it is missing).
"""

from __future__ import annotations

import os
import re
import shutil
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from jtc_utils.book.build import runner
from jtc_utils.core.infra.paths import CACHE_DIR

# Chromium, and the book rendered; a test that waits on the browser for longer than this fails instead of hanging
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(600)]

# console messages of the theme itself, not of the book: none left ("Got invalid theme mode" was the theme's colour
# mode left empty on a first visit, now set in _config.yml)
KNOWN_CONSOLE = ()
SHOTS = CACHE_DIR / "browser-screenshots"
WIDTHS = {"desktop": 1280, "phone": 390}


def chromium() -> str | None:
    for name in (os.environ.get("JTC_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and (path := shutil.which(name)):
            return path
    return None


@pytest.fixture(scope="module")
def browser():
    exe = chromium()
    if exe is None:
        pytest.skip(
            "no Chromium on this machine: `apt-get install chromium` (Debian), or set JTC_CHROMIUM to a "
            "Chromium or Chrome binary; .ci/run installs it where it is missing"
        )
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: `make install`")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        yield b
        b.close()


# the page's visible text outside code, with MathJax's own output removed: any TeX left there was not typeset
_TEXT_OUTSIDE_CODE = """() => {
  const main = document.querySelector('main') || document.body;
  const copy = main.cloneNode(true);
  copy.querySelectorAll('pre, code, script, style, mjx-container, .MathJax, .cell_input, .highlight')
      .forEach(e => e.remove());
  return copy.textContent;
}"""

# elements of an output that run past the article's right edge with no scroll box of their own between them
_OVERFLOWING = """() => {
  const article = document.querySelector('article') || document.querySelector('main');
  const right = article.getBoundingClientRect().right;
  const bad = [];
  for (const el of article.querySelectorAll('.cell_output *, table, pre')) {
    if (el.getBoundingClientRect().right <= right + 1) continue;
    let a = el.parentElement, boxed = false;
    while (a && a !== article.parentElement) {
      const o = getComputedStyle(a).overflowX;
      if ((o === 'auto' || o === 'scroll' || o === 'hidden') && a.getBoundingClientRect().right <= right + 1) {
        boxed = true; break;
      }
      a = a.parentElement;
    }
    if (!boxed) bad.push(el.tagName + '.' + el.className);
  }
  return bad.slice(0, 5);
}"""


@contextmanager
def _opened(browser, page: Path, width: int, height: int = 900):
    """``(tab, errors)``: ``page`` loaded in a fresh browser context of that viewport; ``errors`` collects the
    page's uncaught errors. The context is closed on leaving."""
    ctx = browser.new_context(viewport={"width": width, "height": height})
    tab = ctx.new_page()
    errors = []
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.goto(page.as_uri())
    tab.wait_for_load_state("load")
    try:
        yield tab, errors
    finally:
        ctx.close()


RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\\(?:frac|ell|mathrm|mathbf|sum|hat|operatorname|top)\b")


def _local_links(root: Path, page: Path, hrefs: list[str]) -> list[str]:
    """The local links of ``page`` whose file or anchor does not exist in the built book."""
    broken = []
    for href in hrefs:
        url = urlparse(href)
        if url.scheme in ("http", "https", "mailto", "data", "javascript") or url.netloc:
            continue
        target = page if not url.path else (page.parent / unquote(url.path)).resolve()
        if url.scheme == "file":
            target = Path(unquote(url.path))
        if target.is_dir():
            target = target / "index.html"
        if not target.is_file():
            broken.append(href)
        elif url.fragment and target.suffix == ".html":
            if f'id="{unquote(url.fragment)}"' not in target.read_text(errors="replace"):
                broken.append(href)
    return broken


def _check_page(browser, root: Path, page: Path, width: int) -> list[str]:
    problems = []
    ctx = browser.new_context(viewport={"width": width, "height": 900})
    tab = ctx.new_page()
    tab.on(
        "console",
        lambda m: (
            problems.append(f"console {m.type}: {m.text}")
            if m.type == "error" and not (KNOWN_CONSOLE and m.text.startswith(KNOWN_CONSOLE))
            else None
        ),
    )
    tab.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    tab.goto(page.as_uri())
    tab.wait_for_load_state("load")
    tab.evaluate("() => window.MathJax && MathJax.startup ? MathJax.startup.promise : null")
    broken_images = tab.evaluate(
        "() => Array.from(document.images).filter(i => !i.complete || "
        "i.naturalWidth === 0).map(i => i.getAttribute('src'))"
    )
    problems += [f"image does not load: {src}" for src in broken_images]
    problems += [
        f"figure without a describing alt text: {a!r}"
        for a in tab.evaluate(
            "() => Array.from(document.querySelectorAll('figure.jtc-figure img')).map(i => i.alt || '')"
        )
        if len(a) < 20
    ]
    text = tab.evaluate(_TEXT_OUTSIDE_CODE)
    problems += [
        f"raw TeX left: ...{text[max(0, m.start() - 40) : m.end() + 40]!r}..." for m in list(RAW_TEX.finditer(text))[:3]
    ]
    problems += [f"output wider than its column with no scroll box: {e}" for e in tab.evaluate(_OVERFLOWING)]
    if tab.evaluate("() => document.documentElement.scrollWidth > window.innerWidth + 1"):
        problems.append("the page itself scrolls sideways")
    hrefs = tab.evaluate("() => Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))")
    problems += [f"broken local link: {h}" for h in _local_links(root, page, hrefs)]
    if problems:
        SHOTS.mkdir(parents=True, exist_ok=True)
        shot = SHOTS / f"{page.stem}-{width}.png"
        tab.screenshot(path=str(shot), full_page=True)
        problems.append(f"screenshot: {shot}")
    ctx.close()
    return problems


@pytest.mark.parametrize("device", list(WIDTHS))
def test_every_page_renders_cleanly_in_a_browser(html, browser, device):
    root, _ = html
    pages = [root / "book" / "intro.html"] + [root / "book" / f"{n}.html" for n in runner.notebook_names()]
    pages += [root / "book" / "references.html"]
    failures = {p.name: probs for p in pages if (probs := _check_page(browser, root, p, WIDTHS[device]))}
    assert not failures, "\n".join(f"{name}:\n  " + "\n  ".join(probs) for name, probs in failures.items())


def test_the_checks_catch_raw_tex_and_broken_links(tmp_path):
    # the detectors themselves, on a page made to fail (no browser needed)
    assert RAW_TEX.search(r"where \(A_{\ell',\ell}\) is") and not RAW_TEX.search("a price of $5 and $6")
    page = tmp_path / "a.html"
    page.write_text('<p id="here">x</p>')
    (tmp_path / "b.html").write_text("<p>y</p>")
    assert _local_links(tmp_path, page, ["#here", "b.html", "https://x.org"]) == []
    assert _local_links(tmp_path, page, ["#nowhere", "c.html", "b.html#gone"]) == ["#nowhere", "c.html", "b.html#gone"]


@pytest.mark.parametrize("device", list(WIDTHS))
def test_a_figure_opens_at_full_size_and_closes(html, browser, device):
    """A click on a figure shows it at its own size over the page, scrollable: a one-image figure as it is, a grid
    (the lens chapter's first figure, four panels wrapped into the column) whole, its panels at their own size, side
    by side as drawn where they fit the screen and wrapped into rows as wide as the screen where not (issue 66, item
    3); on a screen narrower than a panel, the panel is drawn as wide as the screen or as its smallest text needs
    to stay readable, whichever is wider (issue 78, item 9: an enlarged grid on a phone was a column of panels each
    wider than the screen); Escape closes it."""
    import math

    from jtc_utils.book.display.figure_layout import AIM_TEXT_PX, LEAST_TEXT_PX

    root, _ = html
    for page in ("lenses", "sec5_early_exit"):
        with _opened(browser, root / "book" / f"{page}.html", WIDTHS[device]) as (tab, errors):
            fig = tab.locator("figure.jtc-figure").first
            imgs = fig.locator("img")
            natural = imgs.evaluate_all("l => l.map(i => i.naturalWidth)")
            text = imgs.evaluate_all("l => l.map(i => Number(i.dataset.textPx))")
            column = fig.evaluate("f => f.getBoundingClientRect().width")
            imgs.first.click()
            big = tab.locator("div.jtc-enlarged img")
            assert big.count() == len(natural), page
            widths = big.evaluate_all("l => l.map(i => i.getBoundingClientRect().width)")
            room = tab.evaluate("() => document.documentElement.clientWidth") - 32
            for w, n, t in zip(widths, natural, text):
                if n <= room or not t > 0:  # at its own size
                    assert abs(w - n) <= 1, (page, widths, natural)
                else:  # wider than the screen: as wide as the screen or as its text needs, whichever is wider
                    need = max(room, math.ceil(AIM_TEXT_PX * n / t))
                    assert min(n, room) - 1 <= w <= need + 1 and w * t / n >= LEAST_TEXT_PX, (page, w, n, t, room)
            tops = big.evaluate_all("l => l.map(i => i.getBoundingClientRect().top)")
            rights = big.evaluate_all("l => l.map(i => i.getBoundingClientRect().right)")
            screen = tab.evaluate("() => window.innerWidth")
            if sum(widths) <= screen - 40 or len(widths) == 1:
                assert max(tops) - min(tops) < 2, (page, tops)  # one row, as drawn, where it fits the screen
            else:  # wrapped into rows no wider than the screen (a panel wider than the screen alone scrolls)
                assert all(r <= screen + 1 for r, w in zip(rights, widths) if w <= screen - 40), (page, rights, screen)
                assert max(tops) - min(tops) >= 2, (page, tops)
            if page == "lenses":
                assert len(natural) > 1 and sum(widths) > column, (page, widths, column)
            tab.keyboard.press("Escape")
            assert tab.locator("div.jtc-enlarged").count() == 0
            assert not errors, errors


# per visible heatmap of the layer view: its number of columns, the bottom axis's tick labels, and the x range
_LAYER_VIEW_STATE = """() => {
  const gd = document.getElementById('layer-view');
  const shown = gd.data.filter(t => t.visible === true || t.visible === undefined);
  const axes = Object.keys(gd._fullLayout).filter(k => /^xaxis\\d*$/.test(k));
  const bottom = axes.sort().slice(-1)[0];
  const labels = Array.from(gd.querySelectorAll('.' + bottom.replace('axis', '') + 'tick text'))
      .map(t => t.textContent);
  const xa = gd._fullLayout.xaxis;
  return {columns: shown.map(t => t.z[0].length), labels: labels, range: gd._fullLayout[bottom].range,
          text: shown.map(t => t.texttemplate), colpx: xa._length / (xa.range[1] - xa.range[0]),
          buttons: gd._fullLayout.updatemenus[0].buttons.length,
          menu: gd.querySelector('.updatemenu-container').getBoundingClientRect().width,
          plot: gd.getBoundingClientRect().width,
          per_panel: axes.map(a => gd.querySelectorAll('.' + a.replace('axis', '') + 'tick text').length),
          menu_right: gd.querySelector('.updatemenu-header-group').getBoundingClientRect().right,
          screen: Math.min(window.innerWidth, document.documentElement.clientWidth)};
}"""


@pytest.mark.parametrize("device", list(WIDTHS))
def test_the_layer_view_relabels_its_axis_for_every_sentence(html, browser, device):
    """Choosing each sentence of the interactive layer view in turn (through its menu, as a reader does) shows
    that sentence's heatmaps with one labelled column per token under every panel, a token in every cell, and
    nothing outside the axis; the menu fits the plot's width and the screen."""
    root, _ = html
    with _opened(browser, root / "book" / "sec4_predictions.html", WIDTHS[device]) as (tab, errors):
        _switch_every_sentence(tab)
        box = tab.evaluate("""() => { const b = document.querySelector('div.jtc-wide-view');
            return {scrolls: b.scrollWidth > b.clientWidth + 1,
                    cue: getComputedStyle(b, '::before').content}; }""")
        if box["scrolls"]:  # narrower than the view: it scrolls in its own box, and says so
            assert "scroll" in box["cue"], box
        assert not errors


def _switch_every_sentence(tab):
    from jtc_utils.book.display.layer_view import TEXT_MIN_PX

    assert not tab.evaluate("() => !!window.Plotly"), "plotly is loaded with the page, not when the view is reached"
    tab.locator("#layer-view").scroll_into_view_if_needed()
    tab.wait_for_function(
        "() => document.getElementById('layer-view') && document.getElementById('layer-view')._fullLayout"
    )
    n = tab.evaluate(_LAYER_VIEW_STATE)["buttons"]
    assert n >= 2
    assert not tab.evaluate("() => !!document.querySelector('#layer-view .modebar')"), "plotly's toolbar is shown"
    for i in range(n):
        tab.locator("#layer-view .updatemenu-header-group").click()
        tab.locator("#layer-view .updatemenu-dropdown-button").nth(i).click()
        tab.wait_for_timeout(100)
        s = tab.evaluate(_LAYER_VIEW_STATE)
        T = s["columns"][0]
        assert set(s["columns"]) == {T}, (i, s)
        assert len(s["labels"]) == T and all(lab.startswith(f"{k}:") for k, lab in enumerate(s["labels"])), (i, s)
        assert abs(s["range"][0] + 0.5) < 1e-9 and abs(s["range"][1] - (T - 0.5)) < 1e-9, (i, s)
        assert s["menu"] <= s["plot"], (i, s)
        # every cell has room for its token and shows it, on a phone too (the view scrolls sideways there), and
        # every panel names the tokens under it (issue 66, item 8: a phone showed no token in any cell, and named
        # them only under the third panel); the sentence menu's button lies within the screen
        assert s["colpx"] >= TEXT_MIN_PX and set(s["text"]) == {"%{text}"}, (i, s["colpx"], s["text"])
        assert s["per_panel"] == [T] * len(s["per_panel"]), (i, s["per_panel"], T)
        assert s["menu_right"] <= s["screen"], (i, s["menu_right"], s["screen"])


FIRST_SCREEN = {"desktop": 900, "phone": 844}  # viewport heights: a laptop's, a phone's


@pytest.mark.parametrize("device", list(WIDTHS))
def test_the_introductions_first_screen_says_what_was_found(html, browser, device):
    """Issue 78, item 1: without scrolling, a reader sees what the paper claims and whether its headline holds on the
    real model and on the stand-in, in words from the claims page's records (glued in), with the claims that fail
    named and linked to their rows."""
    root, _ = html
    with _opened(browser, root / "book" / "intro.html", WIDTHS[device], FIRST_SCREEN[device]) as (tab, _):
        found = tab.evaluate("""() => {
      const first = document.querySelector('main ul.jtc-headline li .jtc-headline-verdict');
      const claim = Array.from(document.querySelectorAll('main p'))
          .find(p => p.textContent.trim().startsWith('The claim'));
      const at = el => el ? [el.getBoundingClientRect().bottom, el.textContent] : null;
      const item = document.querySelector('main ul.jtc-headline li');
      return [at(first), at(claim), item ? item.textContent : '',
              item ? Array.from(item.querySelectorAll('a')).map(a => a.getAttribute('href')) : []];
    }""")
    first, claim, item, links = found
    assert first and claim, f"the introduction has no 'The claim' paragraph or no headline verdict: {found}"
    for bottom, text in (first, claim):
        assert bottom <= FIRST_SCREEN[device], f"below the first screen ({bottom:.0f} px): {text[:80]!r}"
    assert "Jump to Conclusions" in first[1] and "on the real model" in first[1] and "on the stand-in" in first[1]
    assert re.search(r"(holds|fails|undecided|not judged)\b[^.]*on the real model", first[1]), first[1]
    assert any(h.startswith("claims_verdicts.html#verdict-c") for h in links), links  # ids lead to their rows
    assert "Look at" in item


@pytest.mark.parametrize("page", ["claims_verdicts", "sec4_predictions", "sec5_early_exit", "lenses"])
def test_a_claims_table_wider_than_a_phone_says_it_scrolls(html, browser, page):
    """At phone width every verdict table (the claims page's and each chapter's) sits in a scroll box: one wider
    than its box scrolls inside it, with shadows at the edges and a line above it that says so; a chapter's table
    shows the verdict in its first columns, within the phone's first screen width."""
    root, _ = html
    with _opened(browser, root / "book" / f"{page}.html", WIDTHS["phone"], 844) as (tab, _):
        boxes = tab.evaluate("""() => Array.from(document.querySelectorAll('table.jtc-claims')).map(t => {
        const d = t.closest('div.jtc-scroll');
        const head = Array.from(t.querySelectorAll('thead th')).map(h => h.textContent.trim());
        const v = Array.from(t.querySelectorAll('thead th')).find(h => h.textContent.trim() === 'verdict');
        return {boxed: !!d, wide: !!d && d.scrollWidth > d.clientWidth + 1,
                overflow: d && getComputedStyle(d).overflowX, cue: d && getComputedStyle(d, '::before').content,
                shadow: d && getComputedStyle(d).backgroundImage, head: head,
                verdictLeft: v ? v.getBoundingClientRect().left - d.getBoundingClientRect().left : null,
                boxWidth: d && d.clientWidth};})""")
    assert boxes, f"{page} shows no verdict table"
    assert all(b["boxed"] for b in boxes), [b["head"] for b in boxes if not b["boxed"]]
    wide = [b for b in boxes if b["wide"]]
    assert wide, f"no verdict table of {page} is wider than a phone: the test has nothing to check"
    for b in wide:
        assert b["overflow"] == "auto" and "scroll" in b["cue"] and "radial-gradient" in b["shadow"], b
    for b in boxes:  # issue 78, item 7: the line says it scrolls only where the table does
        if b["boxed"] and not b["wide"]:
            assert "scroll" not in (b["cue"] or ""), b
    for b in boxes:  # a chapter's table: its verdict column starts within the box's visible width
        if b["verdictLeft"] is not None:
            assert b["verdictLeft"] < b["boxWidth"], b


def _gzipped(path: Path) -> int:
    import gzip

    return len(gzip.compress(path.read_bytes(), 6))


PAGE_BUDGET = 3 * 10**6  # bytes a first visit downloads, compressed, the layer view's plotly included


def test_every_page_with_what_it_loads_is_within_its_size_budget(html):
    """A first visit to any page downloads the page, its local scripts and styles and, where it has an interactive
    view, plotly: at most 3 MB compressed (gzip, as a web server sends them)."""
    from jtc_utils.book.display import layer_view

    root, _ = html
    over = {}
    for page in sorted((root / "book").glob("*.html")):
        text = page.read_text()
        assets = set(re.findall(r'(?:src|href)="([^"#?]+\.(?:js|css))', text))
        if "jtc-plotly-js" in text:  # the layer view loads plotly when the reader reaches it
            assets.add(layer_view.PLOTLY_JS)
        files = [(page.parent / a).resolve() for a in assets if "://" not in a]
        total = _gzipped(page) + sum(_gzipped(f) for f in files if f.is_file())
        if total > PAGE_BUDGET:
            over[page.name] = total
    assert not over, f"pages over {PAGE_BUDGET / 1e6:.0f} MB compressed: {over}"


_PANELS = """() => Array.from(document.querySelectorAll('div.jtc-panels')).map(d => ({
    box: d.getBoundingClientRect().width,
    imgs: Array.from(d.querySelectorAll('img')).map(i => {
      const r = i.getBoundingClientRect();
      return {top: r.top, width: r.width, natural: i.naturalWidth, set: parseFloat(i.style.width),
              loaded: i.naturalWidth > 0}; })}))"""


@pytest.mark.parametrize("device", list(WIDTHS))
def test_a_grid_of_panels_wraps_to_the_width(html, browser, device):
    """A multi-panel figure is one image per panel (jtc_utils.book.display.panels.panels): at desktop width two panels
    of a grid share a row, each at the width the page set for it (its width in inches at the grid's one scale) and the
    panels of a row at one scale; on a phone every panel takes the column's whole width, one under the other,
    instead of the whole grid shrunk to a third."""
    root, _ = html
    for page in ("appendix_d_sizes", "lenses"):
        with _opened(browser, root / "book" / f"{page}.html", WIDTHS[device]) as (tab, _):
            grids = tab.evaluate(_PANELS)
        assert grids, f"{page}: no figure is shown as panels"
        for g in grids:
            assert all(i["loaded"] for i in g["imgs"]), page
            widths = [i["width"] for i in g["imgs"]]
            if device == "phone":
                assert all(w >= 0.98 * g["box"] for w in widths), (page, g)
                tops = [i["top"] for i in g["imgs"]]
                assert tops == sorted(tops) and len(set(round(t) for t in tops)) == len(tops), (page, g)
            else:
                assert all(abs(i["width"] - min(i["set"], g["box"])) <= 1 for i in g["imgs"]), (page, g)
                for a in g["imgs"]:  # panels of one row: one scale
                    for b in g["imgs"]:
                        if abs(a["top"] - b["top"]) < 2:
                            assert abs(a["width"] / a["natural"] - b["width"] / b["natural"]) < 0.03, (page, g)
        if device == "desktop" and page == "appendix_d_sizes":
            first = grids[0]["imgs"]
            assert len(first) >= 2 and abs(first[0]["top"] - first[1]["top"]) < 2, grids[0]


_DIALOG = "id => { const d = document.getElementById(id); return [d.open, d.querySelectorAll('a').length]; }"


@pytest.mark.parametrize("device", list(WIDTHS))
def test_the_menu_and_on_this_page_open_and_close_on_a_tap(html, browser, device):
    """The header's visible menu button (and on a phone "On this page") does what it says: on a phone a tap opens
    the site navigation (and the page's contents) as a dialog with its links, and Escape closes it; on a desktop a
    click hides the sidebar and a second click shows it again (_static/jtc-nav.js: the themes gave their handlers to
    a hidden copy of each button)."""
    root, _ = html
    with _opened(browser, root / "book" / "lenses.html", WIDTHS[device], 844) as (tab, errors):
        menu = tab.locator(".primary-toggle:visible")
        assert menu.count() == 1
        if device == "phone":
            menu.first.click()
            open_, links = tab.evaluate(f"({_DIALOG})('pst-primary-sidebar-modal')")
            assert open_ and links > 5, (open_, links)
            tab.keyboard.press("Escape")
            assert tab.evaluate(f"({_DIALOG})('pst-primary-sidebar-modal')")[0] is False
            tab.locator(".secondary-toggle:visible").first.click()
            open_, links = tab.evaluate(f"({_DIALOG})('pst-secondary-sidebar-modal')")
            assert open_ and links > 2, (open_, links)
            tab.keyboard.press("Escape")
            assert tab.evaluate(f"({_DIALOG})('pst-secondary-sidebar-modal')")[0] is False
        else:
            sidebar = tab.locator("#pst-primary-sidebar")
            assert sidebar.is_visible()
            menu.first.click()
            tab.wait_for_timeout(400)
            assert not sidebar.is_visible() or sidebar.bounding_box()["width"] < 5
            menu.first.click()
            tab.wait_for_timeout(400)
            assert sidebar.is_visible() and sidebar.bounding_box()["width"] > 100
        assert not errors, errors


def test_the_build_ships_a_favicon_and_no_source_maps(html):
    root, _ = html
    assert not list((root / "_static").rglob("*.map")), "the themes' source maps are shipped"
    page = (root / "book" / "lenses.html").read_text()
    assert 'rel="icon"' in page and "favicon.svg" in page
    assert 'data-theme="auto"' in page  # a colour mode from the first visit on: no console error
    icon = (root / "favicon.ico").read_bytes()  # the root page has no icon link: the browser asks for /favicon.ico
    assert icon[:4] == b"\x00\x00\x01\x00", "favicon.ico is not an icon file"


_GRIDS = """() => Array.from(document.querySelectorAll('div.jtc-panels')).map(d => {
  const imgs = Array.from(d.querySelectorAll('img'));
  return {figure: (d.closest('figure') || {}).id || '', n: imgs.length,
          titled: imgs.filter(i => /panel \\d+ of \\d+: ./.test(i.alt)).length,
          natural: Math.min(...imgs.map(i => i.naturalWidth))};})"""


def test_every_panel_of_a_grid_is_titled_where_its_grid_is_and_worth_enlarging(html, browser):
    """A grid cut into panels (jtc_utils.book.display.panels.panels) names every panel where it names any (a panel that
    lost its column's title left the reader guessing the model), and every panel's image is drawn at least
    PANEL_DRAW_PX wide, so that opening it at full size shows more than the page does."""
    from jtc_utils.book.display.panels import PANEL_DRAW_PX

    root, _ = html
    grids = []
    for page in runner.notebook_names():
        with _opened(browser, root / "book" / f"{page}.html", WIDTHS["desktop"]) as (tab, _):
            grids += [{**g, "page": page} for g in tab.evaluate(_GRIDS)]
    assert grids, "no grid of panels in the book: the test has nothing to check"
    for g in grids:
        assert g["titled"] in (0, g["n"]), g
        assert g["natural"] >= PANEL_DRAW_PX, g


# WCAG contrast of every visible piece of text inside the figures' captions and the claims tables (each element with
# text of its own, against the first opaque background behind it), and where a scroll box's edge shading (drawn in
# the colour --jtc-paper, else the page's background) differs from what is behind the box: a band of another colour
_CONTRAST = """() => {
  const rgb = c => (c.match(/[\\d.]+/g) || []).map(Number);
  const opaque = c => { const v = rgb(c); return v.length >= 3 && (v.length < 4 || v[3] > 0.5); };
  const lum = c => { const [r, g, b] = rgb(c).slice(0, 3).map(v => { v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
      return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const behind = el => { for (let e = el; e; e = e.parentElement) { const c = getComputedStyle(e).backgroundColor;
      if (opaque(c)) return c; } return getComputedStyle(document.body).backgroundColor; };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const owns = el => Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
  const seen = new Set(), low = [];
  const roots = document.querySelectorAll('figure.jtc-figure figcaption, table.jtc-claims, table.dataframe');
  roots.forEach(root => [root, ...root.querySelectorAll('*')].forEach(el => {
    if (seen.has(el) || !owns(el) || el.getClientRects().length === 0) return;
    if (getComputedStyle(el).visibility === 'hidden') return;
    seen.add(el);
    const r = ratio(getComputedStyle(el).color, behind(el));
    if (r < 4.5) low.push([el.tagName + '.' + el.className, el.textContent.trim().slice(0, 30),
                           Math.round(r * 100) / 100]);
  }));
  const probe = document.createElement('span'); document.body.appendChild(probe);
  const bands = [];
  document.querySelectorAll('div.jtc-scroll').forEach(d => {
    const paper = getComputedStyle(d).getPropertyValue('--jtc-paper').trim() ||
                  getComputedStyle(document.documentElement).getPropertyValue('--pst-color-background').trim();
    probe.style.color = paper;
    const want = getComputedStyle(probe).color, got = behind(d.parentElement);
    if (ratio(want, got) > 1.1) bands.push([want, got]);
  });
  probe.remove();
  return {checked: seen.size, low: low.slice(0, 8), bands: bands.slice(0, 3), nlow: low.length};
}"""
CONTRAST_PAGES = tuple(runner.notebook_names())  # every page: captions, claims tables and data tables


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("device", list(WIDTHS))
def test_captions_and_claims_tables_are_readable_in_both_colour_schemes(html, browser, device, scheme):
    """Every caption, claims-table cell and data-table cell has a text contrast of at least 4.5:1 against what is
    behind it, in light and dark mode at both widths, and no scroll box paints its edge shading in a colour
    other than what is behind it (in dark mode that was a near-black band over the claim ids)."""
    root, _ = html
    for page in CONTRAST_PAGES:
        with _opened(browser, root / "book" / f"{page}.html", WIDTHS[device]) as (tab, errors):
            tab.evaluate(
                f"() => {{ document.documentElement.dataset.theme = '{scheme}'; "
                f"document.documentElement.dataset.mode = '{scheme}'; }}"
            )
            tab.wait_for_timeout(50)
            got = tab.evaluate(_CONTRAST)
            assert got["checked"] > 3, (page, got)
            assert not got["low"], f"{page} ({scheme}, {device}): {got['nlow']} texts below 4.5:1, e.g. {got['low']}"
            assert not got["bands"], f"{page} ({scheme}, {device}): scroll shading unlike its background {got['bands']}"
            assert not errors, errors


def test_the_contrast_check_finds_a_caption_the_colour_of_its_background(browser, tmp_path):
    page = tmp_path / "p.html"
    page.write_text(
        '<body style="background:#fff"><figure class="jtc-figure"><figcaption style="color:#eee">'
        'hidden words</figcaption></figure><div style="background:#ced6dd"><div class="jtc-scroll" '
        'style="--jtc-paper:#121212"><table class="jtc-claims"><tr><td>C2</td></tr></table></div></div>'
        '</body>'
    )
    with _opened(browser, page, 1280) as (tab, _):
        got = tab.evaluate(_CONTRAST)
    assert got["nlow"] == 1 and got["low"][0][1] == "hidden words" and len(got["bands"]) == 1


@pytest.mark.parametrize("page", ["sec4_predictions", "claims_verdicts"])
def test_the_phones_drawers_close_when_an_entry_is_chosen(html, browser, page):
    """Issue 66, item 5: on a phone, choosing an entry of "On this page" (or of the site menu) closes its drawer, and
    each drawer has a close button of its own."""
    root, _ = html
    with _opened(browser, root / "book" / f"{page}.html", WIDTHS["phone"], 844) as (tab, errors):
        tab.locator(".secondary-toggle:visible").first.click()
        assert tab.evaluate(f"({_DIALOG})('pst-secondary-sidebar-modal')")[0]
        tab.locator("#pst-secondary-sidebar-modal a[href^='#']:visible").last.click()
        tab.wait_for_timeout(200)
        assert tab.evaluate(f"({_DIALOG})('pst-secondary-sidebar-modal')")[0] is False, "the drawer stays open"
        tab.locator(".primary-toggle:visible").first.click()
        assert tab.evaluate(f"({_DIALOG})('pst-primary-sidebar-modal')")[0]
        tab.locator("#pst-primary-sidebar-modal button.jtc-dialog-close").click()
        assert tab.evaluate(f"({_DIALOG})('pst-primary-sidebar-modal')")[0] is False, "the menu has no working close"
        assert not errors, errors


def test_no_page_shows_a_truncated_pandas_table_or_its_code_above_a_claims_table(html):
    """Issue 66, items 4 and 9: no table is cut by pandas ("…" columns, "N rows × M columns"), and no code cell's
    input stands above one of the claims page's tables."""
    root, _ = html
    for name in runner.notebook_names():
        text = (root / "book" / f"{name}.html").read_text()
        assert not re.search(r"\d+ rows × \d+ columns", text), f"{name}: a pandas table is truncated"
    claims = (root / "book" / "claims_verdicts.html").read_text()  # a hidden input sits in a folded <details>
    assert 'claims_page.side_by_side' not in re.sub(r"<details.*?</details>", "", claims, flags=re.S), (
        "the code that draws a claims table shows above it"
    )


# every table wider than the column it sits in: whether it sits in a box that scrolls sideways and shows a cue (edge
# shadows drawn as the box's background, or a line above it)
_WIDE_TABLES = """() => {
  const article = document.querySelector('article') || document.querySelector('main');
  const right = article.getBoundingClientRect().right, out = [];
  article.querySelectorAll('table').forEach(t => {
    if (t.getBoundingClientRect().width <= article.getBoundingClientRect().width + 1) return;
    let box = null;
    for (let a = t.parentElement; a && a !== article; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX;
      if (o === 'auto' || o === 'scroll') { box = a; break; }
    }
    const cue = box && (/gradient/.test(getComputedStyle(box).backgroundImage) ||
                        /scroll/.test(getComputedStyle(box, '::before').content));
    if (!box || !cue) out.push([t.className || 'table', Math.round(t.getBoundingClientRect().width), !!box]);
  });
  return out;
}"""


@pytest.mark.parametrize("device", list(WIDTHS))
def test_every_table_fits_its_column_or_scrolls_with_a_visible_cue(html, browser, device):
    """Issue 66, item 4: a table wider than the text column (a pandas table, a claims table) scrolls in a box of its
    own that shows it does: edge shadows, and on a phone a line above a claims table."""
    root, _ = html
    bad = {}
    for page in runner.notebook_names():
        with _opened(browser, root / "book" / f"{page}.html", WIDTHS[device]) as (tab, _):
            if found := tab.evaluate(_WIDE_TABLES):
                bad[page] = found
    assert not bad, bad


# every caption of a table in a scroll box, its folds opened: how far its text reaches past the box's right edge
_CAPTIONS_PAST_THEIR_BOX = """() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  return Array.from(document.querySelectorAll('div.jtc-scroll table caption')).map(c => {
    const text = document.createRange(); text.selectNodeContents(c);
    const right = Math.max(...Array.from(text.getClientRects()).map(r => r.right));
    return [c.textContent.slice(0, 40), Math.round(right - c.closest('div.jtc-scroll').getBoundingClientRect().right)];
  }).filter(([, past]) => past > 1);
}"""


@pytest.mark.parametrize("device", list(WIDTHS))
def test_a_scrolled_tables_caption_wraps_inside_its_box(html, browser, device):
    """Issue 78, item 7: a table wider than the screen scrolls in its box, and its caption wraps at the box's edge
    instead of running past the screen (the claims page's side-by-side tables, opened)."""
    root, _ = html
    bad = {}
    for page in ("claims_verdicts", "ffn_subupdates"):
        with _opened(browser, root / "book" / f"{page}.html", WIDTHS[device]) as (tab, _):
            if found := tab.evaluate(_CAPTIONS_PAST_THEIR_BOX):
                bad[page] = found
    assert not bad, bad


# every figure image as drawn: its smallest tick label in its own pixels (data-text-px, written by
# jtc_utils.book.display.chapter.show), scaled by the width it is shown at, and whether its caption says to enlarge it
_TEXT_SIZES = """() => Array.from(document.querySelectorAll('figure.jtc-figure img')).map(i => {
  const hint = i.closest('figure').querySelector('span.jtc-enlarge-hint');
  const px = i.dataset.textPx === undefined ? null : i.dataset.textPx === 'none' ? Infinity : Number(i.dataset.textPx);
  return {figure: i.closest('figure').id || i.alt.slice(0, 40), px: px, natural: i.naturalWidth,
          drawn: px === null ? null : px * i.getBoundingClientRect().width / i.naturalWidth,
          hint: !!hint && hint.getClientRects().length > 0 && getComputedStyle(hint).display !== 'none'};
})"""


@pytest.mark.parametrize("device", list(WIDTHS))
def test_every_figures_tick_labels_are_readable_as_drawn(html, browser, device):
    """Issue 66, item 2: every figure image's smallest tick label is at least LEAST_TEXT_PX tall as the page draws
    it, at 1280 px always; on a phone either that, or its caption says (visibly) to enlarge it, and enlarged (the
    image at its own size) its labels are that tall. On the build before the change, appendix D's and linearity's
    were drawn 4.1-4.7 px, and no image said how large its text is."""
    from jtc_utils.book.display.figure_layout import LEAST_TEXT_PX

    root, _ = html
    bad, seen = {}, 0
    for page in runner.notebook_names():
        with _opened(browser, root / "book" / f"{page}.html", WIDTHS[device]) as (tab, _):
            for img in tab.evaluate(_TEXT_SIZES):
                seen += 1
                if img["px"] is None:
                    bad.setdefault(page, []).append((img["figure"], "no text size recorded"))
                elif img["drawn"] < LEAST_TEXT_PX and not (
                    device == "phone" and img["hint"] and img["px"] >= LEAST_TEXT_PX
                ):
                    bad.setdefault(page, []).append((img["figure"], round(img["drawn"], 1), img["hint"]))
    assert seen > 50, f"only {seen} figure images found"
    assert not bad, bad


def test_the_text_size_check_finds_small_and_unrecorded_text(browser, tmp_path):
    page = tmp_path / "p.html"
    tiny = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    page.write_text(
        f'<body style="width:600px"><figure class="jtc-figure" id="a"><img style="width:300px" '
        f'data-text-px="14" src="data:image/png;base64,{tiny}"></figure><figure class="jtc-figure" '
        f'id="b"><img style="width:1px" src="data:image/png;base64,{tiny}"></figure></body>'
    )
    with _opened(browser, page, 1280) as (tab, _):
        got = {g["figure"]: g for g in tab.evaluate(_TEXT_SIZES)}
    assert got["a"]["drawn"] == pytest.approx(14 * 300) and got["b"]["px"] is None and not got["a"]["hint"]


# per grid of panels: each panel's shown width over its natural width (one scale: the panels share a resolution)
_PANEL_SCALES = """() => Array.from(document.querySelectorAll('div.jtc-panels')).map(d => ({
  figure: (d.closest('figure') || {}).id || '',
  scales: Array.from(d.querySelectorAll('img')).map(i => i.getBoundingClientRect().width / i.naturalWidth)}))"""


def test_the_panels_of_a_grid_are_drawn_at_one_scale(html, browser):
    """Issue 66, item 2: the linearity chapter's real-model panel, alone on its row, was drawn larger than its
    neighbours (438 px against 336 for the same natural width)."""
    root, _ = html
    bad = []
    for page in runner.notebook_names():
        with _opened(browser, root / "book" / f"{page}.html", WIDTHS["desktop"]) as (tab, _):
            bad += [
                (page, g["figure"], [round(s, 3) for s in g["scales"]])
                for g in tab.evaluate(_PANEL_SCALES)
                if max(g["scales"]) > min(g["scales"]) * 1.02
            ]
    assert not bad, bad
    with _opened(browser, root / "book" / "lenses.html", WIDTHS["phone"]) as (tab, _):  # one panel a row on a phone
        gaps = tab.evaluate("""() => Array.from(document.querySelectorAll('div.jtc-panels')).flatMap(d => {
            const r = Array.from(d.querySelectorAll('img')).map(i => i.getBoundingClientRect());
            return r.slice(1).map((b, k) => b.top - r[k].bottom); })""")
    # a panel's title is not read as the x label of the panel above it (issue 66, item 7)
    assert gaps and min(gaps) >= 8, gaps


_RAW_HEADER = re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b")  # a variable's name (share_saved), not the page's words
_NUMBER = re.compile(r"^[-+]?\d[\d,]*(\.\d+)?(e[-+]?\d+)?$")


def _too_many_digits(cell: str) -> bool:
    """A number in a table as pandas prints a float it was not told to round: in exponent notation (1.24e+05), or
    to its six decimals with more than four significant digits (0.064534 beside a rounded 0.04516)."""
    if not _NUMBER.match(cell):
        return False
    if "e" in cell:
        return True
    decimals = cell.split(".")[1] if "." in cell else ""
    return len(decimals) >= 6 and len(cell.lstrip("+-").replace(",", "").replace(".", "").lstrip("0")) > 4


def test_no_table_heads_a_column_with_a_variable_name_or_prints_a_raw_float(html):
    """Issue 66, item 4: the tables of the pages head their columns in words (``share saved``, not ``share_saved``),
    print numbers in one notation to a few significant digits (no ``1.24e+05`` beside ``29.3``, no ``0.064534``
    beside ``0.04516``), and every margin and interval of a verdict in plain decimals (no ``-1e+02 [-1.6e+02, -60]``,
    no ``+below 1e-04``)."""
    root, _ = html
    bad = {}
    for name in runner.notebook_names():
        text = (root / "book" / f"{name}.html").read_text()
        for table in re.findall(r'<table[^>]*class="dataframe[^"]*"[^>]*>.*?</table>', text, flags=re.S):
            head = re.search(r"<thead>(.*?)</thead>", table, flags=re.S)
            for th in re.findall(r"<th[^>]*>(.*?)</th>", head.group(1) if head else "", flags=re.S):
                if _RAW_HEADER.search(re.sub(r"<[^>]+>", "", th)):
                    bad.setdefault(name, []).append(("header", th.strip()))
            for td in re.findall(r"<td[^>]*>(.*?)</td>", table, flags=re.S):
                if _too_many_digits(td.strip()):
                    bad.setdefault(name, []).append(("number", td.strip()))
        for margin in re.findall(r'<span class="jtc-margin">([^<]*)</span>', text):
            if re.search(r"\de[-+]?\d|below 1e", margin):
                bad.setdefault(name, []).append(("margin", margin))
    assert not bad, bad


def test_the_table_checks_find_variable_names_and_raw_floats():
    assert _RAW_HEADER.search("share_saved") and _RAW_HEADER.search("ce_gold ℓ=6")
    assert not _RAW_HEADER.search("median LS_res") and not _RAW_HEADER.search("layers saved at 95% (rule)")
    for raw in ("0.064534", "1.24e+05", "7.29e+04", "0.1234567", "-12.345678"):
        assert _too_many_digits(raw), raw
    for ok in (
        "0.04516",
        "0.06128",
        "29.3",
        "124,000",
        "0.123",
        "-641.8",
        "14.68",
        "3",
        "1.000",
        "-0.274",
        "2.7161",
        "237.976",
        "0.000123",
    ):
        assert not _too_many_digits(ok), ok


# every figure's images: where each is drawn relative to its figure, and at what size (a panel's arrangement is the
# rows its images fall into)
_DRAWN = """() => Array.from(document.querySelectorAll('figure.jtc-figure')).map(f => {
  const box = f.getBoundingClientRect();
  return Array.from(f.querySelectorAll('img')).map(i => {
    const r = i.getBoundingClientRect();
    return [Math.round(r.left - box.left), Math.round(r.top - box.top), Math.round(r.width), Math.round(r.height)];
  });
})"""
_SCHEME = "s => { document.documentElement.dataset.theme = s; document.documentElement.dataset.mode = s; }"
LAYOUT_PAGES = ("sec3_linear_shortcuts", "appendix_d_sizes", "lenses", "ffn_subupdates")


def _drawn_in(tab, scheme: str) -> list:
    tab.evaluate(f"({_SCHEME})('{scheme}')")
    tab.wait_for_timeout(100)
    return tab.evaluate(_DRAWN)


def _layout_changes(light: list, dark: list) -> list[str]:
    """The figures whose images are drawn elsewhere or at another size in dark mode than in light mode (1 px
    allowed for rounding)."""
    bad = []
    for k, (a, b) in enumerate(zip(light, dark)):
        if len(a) != len(b) or any(abs(x - y) > 1 for p, q in zip(a, b) for x, y in zip(p, q)):
            bad.append(f"figure {k}: light {a[:4]} dark {b[:4]}")
    return bad


@pytest.mark.parametrize("device", list(WIDTHS))
def test_dark_mode_keeps_every_figures_drawn_size_and_arrangement(html, browser, device):
    """Issue 78, item 3: in dark mode each figure's images are drawn at the size and in the rows of light mode (the
    theme's dark padding had moved 34 of 78 figures to one panel per row at 1280 px and shrunk every figure on a
    phone); and no filter dims them."""
    root, _ = html
    for page in LAYOUT_PAGES:
        with _opened(browser, root / "book" / f"{page}.html", WIDTHS[device]) as (tab, errors):
            light = _drawn_in(tab, "light")
            dark = _drawn_in(tab, "dark")
            filters = tab.evaluate(
                "() => Array.from(document.querySelectorAll('figure.jtc-figure img'))"
                ".map(i => getComputedStyle(i).filter).filter(f => f && f !== 'none')"
            )
        assert light and len(light) == len(dark), page
        assert not _layout_changes(light, dark), (page, device, _layout_changes(light, dark)[:3])
        assert not filters, (page, filters[:3])
        assert not errors, errors


def test_the_layout_check_finds_a_panel_the_dark_theme_pads(browser, tmp_path):
    """The check above fails on the theme's own dark rule (8 px of padding on an output image), as the build before
    this one had it."""
    page = tmp_path / "p.html"
    page.write_text(
        "<style>html[data-theme=dark] img{padding:8px}</style><body style='width:700px'>"
        "<figure class='jtc-figure'><img style='width:340px;height:100px'><img style='width:340px;height:100px'>"
        "</figure></body>"
    )
    with _opened(browser, page, 1280) as (tab, _):
        light, dark = _drawn_in(tab, "light"), _drawn_in(tab, "dark")
    assert len(_layout_changes(light, dark)) == 1


@pytest.mark.parametrize("device", list(WIDTHS))
def test_ctrl_k_then_typing_and_enter_reach_the_search_results(html, browser, device):
    """Issue 78, item 6: the header search takes typing (a close button first in its dialog had taken the focus, so
    typed text went nowhere and Enter closed the dialog)."""
    root, _ = html
    with _opened(browser, root / "book" / "sec3_linear_shortcuts.html", WIDTHS[device]) as (tab, errors):
        tab.keyboard.press("Control+k")
        tab.wait_for_timeout(200)
        tab.keyboard.type("least squares")
        focused = tab.evaluate("() => [document.activeElement.tagName, document.activeElement.value || '']")
        assert focused == ["INPUT", "least squares"], focused
        with tab.expect_navigation(timeout=20_000):
            tab.keyboard.press("Enter")
        assert "search.html" in tab.url and "q=least" in tab.url, tab.url
        tab.wait_for_selector("#search-results li, ul.search li", timeout=20_000)
        assert tab.locator("ul.search li").count() > 0
        # (Sphinx's search fetches each result's text for its snippet, which a browser refuses for a file:// page)
        assert not [e for e in errors if e != "Failed to fetch"], errors


def test_search_snippets_read_formulas_in_symbols_and_quote_no_code(html, browser):
    """Issue 78, item 9: a search result's snippet is the text of its page's HTML, where a formula is its TeX source
    and a code cell its program text; the search page's text reader (Sphinx's, wrapped by the book's script) reads a
    formula in symbols and leaves code cells out, where Sphinx's own quotes both."""
    root, _ = html
    page = (
        '<div role="main"><p>The map <span class="math notranslate nohighlight">\\(\\mathrm{mat}_{\\ell}\\)</span> '
        'is fitted.</p><div class="cell docutils container"><div class="cell_input docutils container">'
        '<div class="highlight"><pre>import numpy as np</pre></div></div></div></div>'
    )
    with _opened(browser, root / "search.html", 1280) as (tab, _):
        raw, shown = tab.evaluate("(p) => [Search.htmlToTextRaw(p, ''), Search.htmlToText(p, '')]", page)
    assert "\\mathrm" in raw and "import numpy" in raw, raw  # the check sees what Sphinx alone quotes
    assert "\\" not in shown and "import" not in shown and "mat_ℓ" in shown and "is fitted" in shown, shown


@contextmanager
def _on_phone(browser, page: Path):
    """A tab on ``page`` in a phone's context (390×844, touch, DPR 2), as the review read the book, loaded; the
    context is closed afterwards."""
    ctx = browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, device_scale_factor=2
    )
    try:
        tab = ctx.new_page()
        tab.goto(page.as_uri())
        tab.wait_for_load_state("load")
        yield tab
    finally:
        ctx.close()


def test_a_drawer_entry_lands_its_heading_at_the_top_and_leaves_no_tooltip(html, browser):
    """Issue 78, item 3: on a phone, an "On this page" entry chosen in its drawer brings its heading within 100 px of
    the top (it landed 490 px down: the browser scrolled while the drawer held the page), and the header button's
    tooltip is gone once the drawer has closed."""
    root, _ = html
    with _on_phone(browser, root / "book" / "sec4_predictions.html") as tab:
        tab.locator(".secondary-toggle:visible").first.tap()
        tab.wait_for_timeout(300)
        links = tab.locator("#pst-secondary-sidebar-modal a[href^='#']")
        assert links.count() >= 3
        link = links.nth(2)
        target = link.get_attribute("href")[1:]
        link.tap()
        tab.wait_for_timeout(500)
        top = tab.evaluate(f"() => document.getElementById({target!r}).getBoundingClientRect().top")
        assert 0 <= top <= 100, f"the heading {target} lands {top:.0f} px from the top"
        shown = "() => [...document.querySelectorAll('.tooltip')].filter(t => getComputedStyle(t).display !== 'none'"
        shown += " && getComputedStyle(t).visibility !== 'hidden' && t.getBoundingClientRect().width > 0).length"
        assert tab.evaluate(shown) == 0, "a tooltip stays in sight"


def test_a_claim_id_reaches_its_row_in_two_actions(html, browser):
    """Issue 78, item 2: a claim id in a chapter's verdict table leads to the claim's row of the claims page's verdict
    grid (one tap), and a claim id searched for opens the claims page at that row (the search, then its result)."""
    root, _ = html
    claims_page = root / "book" / "claims_verdicts.html"
    with _on_phone(browser, root / "book" / "sec6_submodules.html") as tab:
        with tab.expect_navigation(wait_until="load"):  # the tap's navigation, not the page already loaded
            tab.locator("a#claim-c12a").first.tap()
        assert tab.url.endswith("claims_verdicts.html#verdict-c12a"), tab.url
        top = tab.evaluate("() => document.getElementById('verdict-c12a').getBoundingClientRect().top")
        assert 0 <= top <= 844, f"the claim's row is {top:.0f} px down, off the first screen"
        # the search: what Sphinx's results page stores for the page it opens, then that page
        tab.evaluate("() => localStorage.setItem('sphinx_highlight_terms', 'c12a')")
        tab.goto(claims_page.as_uri())
        tab.wait_for_load_state("load")
        tab.wait_for_timeout(300)
        top = tab.evaluate("() => document.getElementById('verdict-c12a').getBoundingClientRect().top")
        assert 0 <= top <= 200, f"a search for C12a opens its row {top:.0f} px down"
        assert tab.url.endswith("#verdict-c12a"), tab.url


# the claims page's height on a phone when issue 78 reviewed it (65,652 px at 390×844): its folds must halve it
REVIEWED_CLAIMS_PAGE_PX = 65_652


def test_the_claims_page_is_half_as_long_on_a_phone_and_a_reason_link_opens_its_fold(html, browser):
    """Issue 78, item 2: with each paper's full table and the list of reasons folded under the grid, the claims page
    on a phone is at most half the height it had; a link to one claim's reason (a verdict's *why* elsewhere) opens
    the fold it sits in and shows that reason."""
    root, _ = html
    with _on_phone(browser, root / "book" / "claims_verdicts.html") as tab:
        height = tab.evaluate("() => document.documentElement.scrollHeight")
        assert height <= REVIEWED_CLAIMS_PAGE_PX / 2, f"the claims page is {height} px tall on a phone"
        target = tab.evaluate("() => document.querySelector('details.jtc-fold [id^=\"why-\"]')?.id")
        assert target, "no claim's reason sits in a fold"
        tab.goto(f"{(root / 'book' / 'claims_verdicts.html').as_uri()}#{target}")
        tab.wait_for_timeout(300)
        opened = f"() => document.getElementById({target!r}).closest('details').open"
        assert tab.evaluate(opened), f"the link to {target} leaves its fold closed"
