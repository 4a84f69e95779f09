"""The rendered book: it builds (warnings are errors), every page of the table of contents is there, and math is
served from the book itself (MathJax from a PyPI package), never from a CDN, so equations render offline."""

import re

from jtc_utils import runner


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
