"""The book's HTML: what the built site carries beside the pages (plotly, the figures' numbers) and the one
jupyter-book build, for the book and for a reader's custom book (:func:`jupyter_book`)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from jtc_utils.core.infra.paths import BOOK_DIR, ROOT, atomic_write_bytes


def writable(folder: Path) -> bool:
    """Can files be created in ``folder``? (Tried for real: root passes os.access on a read-only mount.)"""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-test-"):
            return True
    except OSError:
        return False


EXTRA_DIR = ROOT / "_extra"  # copied to the root of the built site as is (sphinx's html_extra_path)


def vendor_static() -> None:
    """Put what pages load from the built book itself into ``_extra/`` (copied to the site's root as is): plotly's
    JavaScript for the interactive layer view, from the installed package (no CDN, nothing committed, not loaded on
    every page), and the figures' numbers (``book/data``), which each caption links as a download."""
    import plotly

    src = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    dst = EXTRA_DIR / "plotly.min.js"
    if not dst.exists() or dst.stat().st_size != src.stat().st_size:
        EXTRA_DIR.mkdir(exist_ok=True)
        atomic_write_bytes(dst, src.read_bytes())
    # the site's root page asks the browser for /favicon.ico (it has no icon link of its own): the same icon as
    # _static/favicon.svg, drawn once into an .ico
    icon = EXTRA_DIR / "favicon.ico"
    if not icon.exists():
        EXTRA_DIR.mkdir(exist_ok=True)
        write_favicon(icon)
    # the numbers behind the figures, downloadable next to the pages that link them (book/data/<fig>.json)
    data = EXTRA_DIR / "book" / "data"
    shutil.rmtree(data, ignore_errors=True)
    shutil.copytree(BOOK_DIR / "data", data)


def write_favicon(path: Path) -> None:
    """The book's icon (a green square with a white rising line, as ``_static/favicon.svg``) as a 32 px .ico, written
    whole or not at all."""
    import io

    from PIL import Image, ImageDraw

    scale = 4  # drawn large, then shrunk: smooth edges
    img = Image.new("RGBA", (32 * scale, 32 * scale), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    d.rounded_rectangle([0, 0, 32 * scale - 1, 32 * scale - 1], radius=6 * scale, fill="#1a7f37")
    d.line(
        [(x * scale, y * scale) for x, y in ((7, 22), (14, 10), (18, 17), (25, 8))],
        fill="#ffffff",
        width=3 * scale,
        joint="curve",
    )
    buf = io.BytesIO()
    img.resize((32, 32), Image.LANCZOS).save(buf, format="ICO", sizes=[(32, 32)])
    atomic_write_bytes(path, buf.getvalue())


def build_html(html_dir: Path | None = None) -> str:
    """Render the book with jupyter-book (notebook execution off: the outputs come from papermill) into
    ``<html_dir>/_build/html`` (default: ``book/``)."""
    out = Path(html_dir) if html_dir else BOOK_DIR
    if not writable(out):
        raise SystemExit(
            f"ERROR: cannot write the HTML under {out} (a read-only checkout?). Point the output at a "
            f"writable folder: `python -m jtc_utils.book.build.runner --build-only --html-dir /tmp/jtc-html` "
            f"(and set JTC_CACHE to a writable folder if you re-execute chapters)."
        )
    vendor_static()
    # sphinx does not overwrite a static file it copied before: drop the old copies of the book's own, so that an
    # edited stylesheet reaches the built book
    for own in (ROOT / "_static").glob("*"):
        (out / "_build" / "html" / "_static" / own.name).unlink(missing_ok=True)
    return str(jupyter_book(ROOT, out, strict=True))


def jupyter_book(source: Path, out: Path, strict: bool, quiet: bool = False) -> Path:
    """Build the Jupyter Book at ``source`` into ``<out>/_build/html`` and return its index page; the one HTML build,
    for the book (``strict``: a warning fails it) and for a reader's custom book (``quiet``: its messages shown only
    when it fails). The themes' source maps (megabytes, for their developers) are deleted."""
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [
        str(jb),
        "build",
        str(source),
        "--path-output",
        str(out),
        *(["--warningiserror"] if strict else []),
        "--keep-going",
    ]
    r = subprocess.run(cmd, cwd=source, capture_output=quiet, text=True)
    index = out / "_build" / "html" / "index.html"
    if r.returncode != 0:
        said = f":\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}" if quiet else "; see the messages above"
        raise SystemExit(f"ERROR: jupyter-book build of {source} failed (exit {r.returncode}){said}")
    if not index.exists():
        raise SystemExit(f"ERROR: jupyter-book reported success but wrote no {index}")
    for source_map in (out / "_build" / "html" / "_static").rglob("*.map"):
        source_map.unlink()
    return index
