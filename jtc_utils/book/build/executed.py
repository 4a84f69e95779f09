"""An executed page as the runner reads and keeps it: its cells' timings and the slowest of them
(:func:`slowest_cells`), the page cleaned of what changes on every run (:func:`clean`), and its prose brought in line
with its source without executing it (:func:`refresh_prose`).
"""

from __future__ import annotations

import hashlib
import re

from jtc_utils.book.build.pages import ABOUT_THE_MODEL
from jtc_utils.core.infra.paths import BOOK_DIR, NOTEBOOKS_DIR, atomic_write_text


# a cell that computes or reads the real model's figures: it names one (their ids start with ``real_``) or the real
# experiment; every cell of the real model's own page counts (the real model's share of the book is bounded)
REAL_CELL = re.compile(r"""["']real_|\breal_model_line\b|\bexp_real\b""")


def cell_seconds(cell) -> float:
    """The seconds papermill recorded for an executed cell (0 where it recorded none)."""
    return cell.metadata.get("papermill", {}).get("duration") or 0.0


def real_seconds(nb, name: str) -> float:
    """Seconds an executed page spent in the real model's cells (:data:`REAL_CELL`; all of the page about the model,
    :data:`jtc_utils.book.build.pages.ABOUT_THE_MODEL`)."""
    return sum(
        cell_seconds(c)
        for c in nb.cells
        if c.cell_type == "code" and (name == ABOUT_THE_MODEL or REAL_CELL.search(c.source))
    )


def slowest_cells(nb, n: int = 3, name: str = "", peak_gb: float | None = None) -> str:
    """A line naming the ``n`` slowest cells of an executed notebook (index, seconds, first source line), the
    seconds of the real model's cells (:func:`real_seconds`) and the page's peak resident memory ``peak_gb`` (its
    kernel's, sampled by :class:`MemoryWatch`; where to look when a page is slow or large)."""
    timed = [
        (cell_seconds(c), i, c.source.strip().splitlines()[0][:60])
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and c.source.strip()
    ]
    cells = "; ".join(f"[{i}] {d:.0f} s `{first}`" for d, i, first in sorted(timed, reverse=True)[:n])
    memory = "" if not peak_gb else f"; the page's peak memory {peak_gb:.2f} GB"
    return f"    slowest cells: {cells}; the real model's cells {real_seconds(nb, name):.0f} s{memory}"


def clean(nb) -> None:
    """Strip what changes on every run (timings, execution stamps), give every cell an id derived from its source
    (so that re-executing an unchanged chapter changes nothing in git) and hide the injected-parameters cell."""
    seen = set()
    for cell in nb.cells:
        base = hashlib.sha256(f"{cell.cell_type}\n{cell.source}".encode()).hexdigest()[:12]
        cid, k = base, 1
        while cid in seen:  # identical cells get distinct ids
            cid, k = f"{base}-{k}", k + 1
        seen.add(cid)
        cell.id = cid
    pm = nb.metadata.get("papermill", {})
    nb.metadata["papermill"] = {"parameters": pm.get("parameters", {})}
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        tags = cell.metadata.get("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")


def refresh_prose(name: str) -> bool:
    """Bring an up-to-date page's prose in line with its source: the source's markdown cells, in their places,
    around the page's stored code cells and outputs (the injected-parameters cell kept after the parameters cell).
    Returns whether the page was rewritten; a page whose code cells differ from the source's is left alone (it is
    stale, and executing it writes the new prose anyway)."""
    import jupytext
    import nbformat

    page_file = BOOK_DIR / f"{name}.ipynb"
    page = nbformat.read(page_file, as_version=4)
    source = jupytext.read(NOTEBOOKS_DIR / f"{name}.py")
    injected = [c for c in page.cells if "injected-parameters" in c.metadata.get("tags", [])]
    stored = iter(c for c in page.cells if c.cell_type == "code" and c not in injected)
    cells = []
    for cell in source.cells:
        if cell.cell_type != "code":
            make = nbformat.v4.new_markdown_cell if cell.cell_type == "markdown" else nbformat.v4.new_raw_cell
            cells.append(make(cell.source, metadata=dict(cell.metadata)))
            continue
        kept = next(stored, None)
        if kept is None or kept.source != cell.source:
            return False
        cells.append(kept)
        if "parameters" in cell.metadata.get("tags", []):
            cells.extend(injected)
    if next(stored, None) is not None:
        return False
    old = [(c.cell_type, c.source) for c in page.cells]
    if old == [(c.cell_type, c.source) for c in cells]:
        return False
    page.cells = cells
    clean(page)
    nbformat.validate(page)
    atomic_write_text(page_file, nbformat.writes(page) + "\n")
    return True
