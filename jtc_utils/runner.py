"""Execute the chapter notebooks headlessly into the book, then build the HTML.

    python -m jtc_utils.runner                 # every notebooks/*.py, profile tiny, then jupyter-book build
    python -m jtc_utils.runner --only sec3_linear_shortcuts --no-build
    python -m jtc_utils.runner --profile paper  # the paper's models (internet and a GPU)
    python -m jtc_utils.runner --force          # re-execute even the pages whose inputs did not change

Each ``notebooks/<name>.py`` (py:percent, the only hand-edited source) is read with jupytext and executed by
papermill (kernel python3, working directory ``notebooks/``, a per-cell timeout, no progress bars); volatile
metadata is stripped and the result is written to ``book/<name>.ipynb`` only if every cell succeeded. A failing
cell stops the run with the notebook's name and the cell, and leaves the failed copy in ``book/_failed/``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from .paths import BOOK_DIR, NOTEBOOKS_DIR, ROOT, atomic_write_text

CELL_TIMEOUT = 1800


class NotebookFailed(RuntimeError):
    pass


def notebook_names() -> list[str]:
    """Every notebooks/*.py, in the order of the book's table of contents (the claims page reads what the
    chapters before it wrote); notebooks not in the table of contents come last, sorted."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    order = [Path(c["file"]).name for part in toc.get("parts", []) for c in part.get("chapters", [])]
    names = sorted(p.stem for p in NOTEBOOKS_DIR.glob("*.py"))
    return sorted(names, key=lambda n: (order.index(n) if n in order else len(order), n))


def clean(nb) -> None:
    """Strip what changes on every run (timings, execution stamps), give every cell an id derived from its source
    (so that re-executing an unchanged chapter changes nothing in git) and hide the injected-parameters cell."""
    import hashlib

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


def inputs_fingerprint(name: str, profile: str) -> str:
    """What a chapter's outputs depend on: its source, the package, the pinned requirements, the zoo's weights
    and the profile. A stored page with the same fingerprint is up to date."""
    import hashlib

    from .cache import file_fingerprint
    from .paths import ZOO_DIR

    h = hashlib.sha256(f"{name}/{profile}".encode())
    files = [NOTEBOOKS_DIR / f"{name}.py", ROOT / "requirements.txt", *sorted((ROOT / "jtc_utils").glob("*.py")),
             *sorted(ZOO_DIR.glob("*/model.safetensors"))]
    for f in files:
        h.update(str(f.relative_to(ROOT) if f.is_relative_to(ROOT) else f.name).encode())
        h.update(file_fingerprint(f).encode())
    return h.hexdigest()


def up_to_date(name: str, profile: str) -> bool:
    import nbformat

    page = BOOK_DIR / f"{name}.ipynb"
    if not page.exists():
        return False
    stored = nbformat.read(page, as_version=4).metadata.get("jtc", {}).get("inputs")
    return stored == inputs_fingerprint(name, profile)


def execute(name: str, profile: str = "tiny", timeout: int = CELL_TIMEOUT) -> float:
    """Execute notebooks/<name>.py into book/<name>.ipynb; returns the seconds it took."""
    import jupytext
    import nbformat
    import papermill as pm

    src = NOTEBOOKS_DIR / f"{name}.py"
    if not src.exists():
        raise FileNotFoundError(f"no notebook {src}; available: {', '.join(notebook_names())}")
    nb = jupytext.read(src)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    failed = BOOK_DIR / "_failed" / f"{name}.ipynb"
    failed.parent.mkdir(parents=True, exist_ok=True)
    os.environ["JTC_PROGRESS"] = "0"  # the kernel inherits it: no progress bars in saved outputs
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    t0 = time.time()
    try:
        out = pm.execute_notebook(nb, str(failed), parameters={"profile": profile}, kernel_name="python3",
                                  cwd=str(NOTEBOOKS_DIR), progress_bar=False, execution_timeout=timeout,
                                  request_save_on_cell_execute=False)
    except pm.PapermillExecutionError as e:
        raise NotebookFailed(f"notebook {name} failed at cell {e.exec_count} ({e.ename}: {e.evalue}); the "
                             f"executed copy with the error is {failed}") from None
    clean(out)
    out.metadata["jtc"] = {"inputs": inputs_fingerprint(name, profile), "profile": profile}
    atomic_write_text(BOOK_DIR / f"{name}.ipynb", nbformat.writes(out) + "\n")
    failed.unlink(missing_ok=True)
    return time.time() - t0


def build_html() -> str:
    """Render the book with jupyter-book (notebook execution off: the outputs come from papermill)."""
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb), "build", str(ROOT), "--path-output", str(BOOK_DIR),
           "--warningiserror", "--keep-going"]
    r = subprocess.run(cmd, cwd=ROOT)
    if r.returncode != 0:
        raise SystemExit(f"jupyter-book build failed (exit {r.returncode}); see the messages above")
    index = BOOK_DIR / "_build" / "html" / "index.html"
    if not index.exists():
        raise SystemExit(f"jupyter-book reported success but wrote no {index}")
    return str(index)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m jtc_utils.runner", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="tiny", choices=["tiny", "paper"])
    ap.add_argument("--only", nargs="*", help="notebook names (default: all)")
    ap.add_argument("--no-build", action="store_true", help="execute notebooks only")
    ap.add_argument("--build-only", action="store_true", help="render the HTML from the stored notebooks")
    ap.add_argument("--timeout", type=int, default=CELL_TIMEOUT, help="seconds per cell")
    ap.add_argument("--force", action="store_true",
                    help="re-execute every notebook even if its stored page is up to date")
    args = ap.parse_args(argv)
    if not args.build_only:
        stale = args.force or bool(args.only)  # naming a page means: run it
        for name in args.only or notebook_names():
            # a page is skipped when its inputs are unchanged; once one page re-runs, the later ones (which may
            # read the numbers it writes, like the claims page) re-run too
            stale = stale or not up_to_date(name, args.profile)
            if not stale:
                print(f"{name}: up to date (inputs unchanged; --force re-executes)", flush=True)
                continue
            print(f"executing {name} (profile {args.profile}) ...", flush=True)
            try:
                dt = execute(name, args.profile, args.timeout)
            except NotebookFailed as e:
                raise SystemExit(f"ERROR: {e}") from None
            print(f"  {name}: {dt:.0f} s", flush=True)
    if not args.no_build:
        index = build_html()
        print(f"The book is at {index}")


if __name__ == "__main__":
    main()
