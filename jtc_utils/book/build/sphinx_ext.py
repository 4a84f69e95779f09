"""The book's own Sphinx extension (``_config.yml``: ``extra_extensions``): what the built pages load.

* one declaration per inline script (sphinx-thebe's and sphinx-togglebutton's reach each page twice);
* MathJax cut to what the pages load (:func:`prune_mathjax`, :data:`MATHJAX_KEEP`; a page's cost on load is
  :func:`page_transfer`, held under :data:`TRANSFER_LIMIT` by the tests);
* one element per id (sphinx-exercise repeats ``exercise-content``; :func:`_unique_ids` numbers them per page).

Figures open at full size on a click through ``_static/jtc-enlarge.js``, which Jupyter Book loads from ``_static/``.
"""

from __future__ import annotations

from pathlib import Path

# what tex-chtml.js loads or can load from the site (relative to _static/mathjax)
MATHJAX_KEEP = (
    "tex-chtml.js",
    "input/tex/extensions",
    "output/chtml/fonts/woff-v2",
    "ui",
    "a11y",
    "sre",
    "adaptors",
    "core.js",
    "startup.js",
    "input/tex.js",
    "output/chtml.js",
)


def _unique_scripts(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for js in scripts:
        # an inline script comes with the file name None from one extension and "" from another
        key = (getattr(js, "filename", js) or "", repr(sorted(getattr(js, "attributes", {}).items())))
        if key in seen:
            continue
        seen.add(key)
        kept.append(js)
    context["script_files"] = kept


def prune_mathjax(root: Path) -> int:
    """Remove from ``root`` (a site's ``_static/mathjax``) what the pages never load; returns the bytes removed.
    sphinx-mathjax-offline copies MathJax's whole distribution (about 24 MB); the pages load ``tex-chtml.js``, which
    fetches its fonts and, on demand, TeX extensions and the menu's accessibility components."""
    root = Path(root)
    if not root.is_dir():
        return 0
    keep = [root / k for k in MATHJAX_KEEP]
    removed = 0
    for path in [p for p in root.rglob("*") if p.is_file()]:
        if not any(path == k or k in path.parents for k in keep):
            removed += path.stat().st_size
            path.unlink()
    for folder in sorted((p for p in root.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        if not any(folder.iterdir()):
            folder.rmdir()
    return removed


TRANSFER_LIMIT = 3_000_000  # bytes a page may cost a reader on load, compressed


def page_transfer(page: Path) -> dict:
    """What loading a built page transfers, gzip-compressed as a web server sends it: the page itself and every
    local script, stylesheet and image it references (``{path: bytes}``; data: URIs are inside the page). Scripts
    a page fetches later (MathJax's fonts, the layer view's plotly once a reader scrolls to it) are not counted."""
    import gzip
    import re

    page = Path(page)
    text = page.read_bytes()
    refs = set(re.findall(rb'<(?:script|img)[^>]*\bsrc="([^"]+)"', text))
    refs |= set(re.findall(rb'<link[^>]*rel="stylesheet"[^>]*href="([^"]+)"', text))
    out = {page.name: len(gzip.compress(text, 6))}
    for ref in refs:
        ref = ref.decode().split("?")[0].split("#")[0]
        if ref.startswith(("data:", "http:", "https:", "//")):
            continue
        f = (page.parent / ref).resolve()
        if f.is_file():
            out[ref] = len(gzip.compress(f.read_bytes(), 6))
    return out


REPEATED_IDS = ("exercise-content", "solution-content")  # sphinx-exercise's, the same on every exercise


def _unique_ids(app, doctree, docname) -> None:
    """Number the ids of :data:`REPEATED_IDS` within a page: ``exercise-content-2`` for the second exercise."""
    from docutils import nodes

    count = dict.fromkeys(REPEATED_IDS, 0)
    for node in doctree.findall(nodes.Element):
        for i, ident in enumerate(node.get("ids", [])):
            if ident in count:
                count[ident] += 1
                node["ids"][i] = f"{ident}-{count[ident]}"


def _build_finished(app, exc) -> None:
    if exc is None and app.builder.format == "html":
        prune_mathjax(Path(app.outdir) / "_static" / "mathjax")


def setup(app):
    app.connect("html-page-context", _unique_scripts, priority=900)
    app.connect("doctree-resolved", _unique_ids)
    app.connect("build-finished", _build_finished, priority=900)  # after sphinx-mathjax-offline's copy (500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
