"""The student edition (``make student``): every page of the book as a notebook with its solutions removed.

Each solution cell (tagged ``solution``) becomes an open answer cell (``answer = None``, tagged ``answer``); the
check cell after it stays, so a student runs it and reads ✓ or ✗ (see :mod:`jtc_utils.exercises`). Written
solutions (``{solution}`` blocks) and the fences of gated solutions are removed from the text; outputs are cleared,
since the student runs the notebook. Usage::

    python -m jtc_utils.student [--out student]
"""

from __future__ import annotations

import argparse
import re
import shutil
import tempfile
from pathlib import Path

from .paths import NOTEBOOKS_DIR, ROOT

ANSWER = "# Your answer: write the code the exercise asks for, and leave the result in `answer`.\nanswer = None"
_FENCES = (re.compile(r"```\{solution-start\}[^\n]*\n(?::[^\n]*\n)*```[ \t]*\n?"),
           re.compile(r"```\{solution-end\}[^\n]*\n```[ \t]*\n?"),
           re.compile(r"````\{solution\}.*?\n````[ \t]*\n?", re.S))


# sphinx-exercise's directives read as plain headings in Jupyter
_EXERCISES = ((re.compile(r"```\{exercise-start\}[^\n]*\n:label: (\S+)\n```[ \t]*\n"), r"**Exercise `\1`.** "),
              (re.compile(r"```\{exercise-end\}[^\n]*\n```[ \t]*\n?"), ""),
              (re.compile(r"```\{exercise\}[^\n]*\n:label: (\S+)\n(.*?)\n```[ \t]*\n?", re.S), r"**Exercise `\1`.** \2\n"))


def strip(nb):
    """``nb`` (a notebook read by jupytext) without its solutions: a new notebook, ``nb`` is left as it is."""
    import copy

    out = copy.deepcopy(nb)
    cells = []
    for cell in out.cells:
        tags = list(cell.metadata.get("tags", []))
        if "solution" in tags:
            cell.source = ANSWER
            cell.metadata["tags"] = [t for t in tags if t != "solution"] + ["answer"]
        elif cell.cell_type == "markdown":
            for fence in _FENCES:
                cell.source = fence.sub("", cell.source)
            for directive, plain in _EXERCISES:
                cell.source = directive.sub(plain, cell.source)
            if not cell.source.strip():
                continue
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cells.append(cell)
    out.cells = cells
    return out


def build(out_dir: Path | str = ROOT / "student") -> list[Path]:
    """Write the student edition of every page to ``out_dir`` (replaced as a whole, never left half-written)."""
    import jupytext

    from .runner import notebook_names

    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".student-", dir=out_dir.parent))
    try:
        for name in notebook_names():
            nb = strip(jupytext.read(NOTEBOOKS_DIR / f"{name}.py"))
            nb.metadata.pop("jupytext", None)
            jupytext.write(nb, tmp / f"{name}.ipynb")
        if out_dir.exists():
            shutil.rmtree(out_dir)
        tmp.rename(out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return sorted(out_dir.glob("*.ipynb"))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m jtc_utils.student", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "student", help="folder to write (default: student/)")
    args = ap.parse_args(argv)
    paths = build(args.out)
    print(f"student edition: {len(paths)} notebooks in {args.out} (solutions removed; run the check cells)")


if __name__ == "__main__":
    main()
