"""How long each page of the student edition takes, as a student meets it (issue 37: at most 2 minutes a page on two
cores from a fresh clone, once `make student` has filled the cache the pages share).

    python benchmarks/bench_student.py [--cache DIR] [--out FILE]

Two passes, in the book's order, each page in a fresh kernel with its answer cells blank: first the fill
(:func:`jtc_utils.book.classroom.student.fill`, what `make student` runs once: each page executed on an empty cache,
timed), then every page of the edition executed again, as a student runs it. ``--cache`` points the run at its own cache
folder (``JTC_CACHE``; a new empty folder reproduces a fresh clone, which is the default: a temporary folder); the table
is printed and written to ``--out`` (default ``.cache/bench/student.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BUDGET_S = 120.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path, default=None, help="cache folder (default: a new temporary one)")
    ap.add_argument("--out", type=Path, default=ROOT / ".cache" / "bench" / "student.json")
    args = ap.parse_args(argv)
    cache = args.cache or Path(tempfile.mkdtemp(prefix="jtc-student-cache-"))
    os.environ["JTC_CACHE"] = str(cache.resolve())  # before jtc_utils is imported: it reads it once; kernels inherit it
    os.environ["JTC_PROGRESS"] = "0"
    os.environ.setdefault("PYTHONWARNINGS", "ignore")

    import papermill as pm

    from jtc_utils.book.classroom import student
    from jtc_utils.book.build.runner import notebook_names
    from jtc_utils.core.infra.paths import atomic_write_text

    t0 = time.perf_counter()
    filled = student.fill(progress=False)
    fill_s = time.perf_counter() - t0
    rows = []
    with tempfile.TemporaryDirectory(prefix="jtc-student-bench-") as tmp:
        written, _ = student.build(Path(tmp) / "student")
        pages = {p.stem: p for p in written}
        for name in notebook_names():
            nb = pages[name]
            t = time.perf_counter()
            error = None
            try:
                pm.execute_notebook(
                    str(nb),
                    str(Path(tmp) / f"{name}.out.ipynb"),
                    cwd=str(nb.parent),
                    progress_bar=False,
                    kernel_name="python3",
                )
            except pm.PapermillExecutionError as e:
                error = f"{e.ename}: {e.evalue}"[:200]
            dt = time.perf_counter() - t
            rows.append(
                {
                    "page": name,
                    "fill_seconds": round(filled.get(name, float("nan")), 1),
                    "seconds": round(dt, 1),
                    "within_budget": dt <= BUDGET_S and error is None,
                    "error": error,
                }
            )
            print(
                f"{name:24s} fill {filled.get(name, float('nan')):7.1f} s   student run {dt:7.1f} s "
                f"{'ok' if error is None else 'ERROR ' + error}",
                flush=True,
            )
    over = [r["page"] for r in rows if not r["within_budget"]]
    print(
        f"fill (make student, once): {fill_s / 60:.1f} min; slowest page afterwards: "
        f"{max(r['seconds'] for r in rows):.0f} s; over {BUDGET_S:.0f} s: {over or 'none'}"
    )
    atomic_write_text(
        args.out,
        json.dumps(
            {
                "budget_s": BUDGET_S,
                "cpu_count": os.cpu_count(),
                "cache": str(cache),
                "fill_seconds": round(fill_s, 1),
                "pages": rows,
            },
            indent=1,
        )
        + "\n",
    )


if __name__ == "__main__":
    main()
