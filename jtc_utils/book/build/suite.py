"""The test suite's driver (``make test``, ``make test-fast``, ``make test PAGES=...``): the page phase (nbval on the
executed pages) and the test phase (``tests/``), both always run, one summary of both, non-zero when either failed.

    python -m jtc_utils.book.build.suite                        # every page, then every test
    python -m jtc_utils.book.build.suite --fast                 # no page, no real model, no browser
    python -m jtc_utils.book.build.suite --pages ffn_subupdates # one chapter's page, regression and unit tests
    python -m jtc_utils.book.build.suite --dispatch baseline    # the pages on NumPy's baseline kernels (.ci/run)

Every worker is single-threaded (pytest-xdist, :func:`default_jobs`); ``--dispatch baseline`` makes an order that a
CPU's sort kernels decide fail here, not on a reader's machine (:func:`baseline_dispatch`).
"""

from __future__ import annotations

import argparse
import ast
import codecs
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from jtc_utils.book.build import regression, scheduling
from jtc_utils.core.infra.paths import BOOK_DIR, ROOT
from jtc_utils.evidence.registry import get as registered

TESTS_DIR = ROOT / "tests"
LOGS = ROOT / ".cache" / "test-logs"  # each phase's whole output
SANITIZE = TESTS_DIR / "nbval_sanitize.cfg"
FAST = "not slow and not pages and not real and not browser"
PAPERS = ("jtc", "lenses", "ffn", "linearity")  # the paper packages: jtc_utils.<paper>
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
TEST_GB = 3.0  # a test worker's peak resident memory (the real model's subset extraction), for default_jobs
SUMMARY = re.compile(r"^=+ (.*\d+ (passed|failed|error|errors|skipped|deselected).*) in [\d.]+s.*=+$")


def default_jobs(page_phase: bool = True) -> int:
    """As many workers as cores, fewer where that many would not fit the memory available now (a page may reach
    ``scheduling.PAGE_PEAK_GB``, a test worker :data:`TEST_GB`)."""
    return scheduling.jobs_that_fit(os.cpu_count() or 1, scheduling.PAGE_PEAK_GB if page_phase else TEST_GB)


def baseline_dispatch() -> str:
    """The NumPy features this CPU has that the build dispatches at run time beyond its baseline (``X86_V3`` for
    AVX2, ``X86_V4`` and the AVX-512 groups, ...): the value of ``NPY_DISABLE_CPU_FEATURES`` that leaves NumPy on its
    baseline kernels. Empty where the CPU has none of them."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return " ".join(f for f in __cpu_dispatch__ if __cpu_features__.get(f))


def pages() -> list[str]:
    return sorted(p.stem for p in BOOK_DIR.glob("*.ipynb"))


def page_figures(page: str) -> list[str]:
    """The figures a stored page wrote (the ``book/data`` files its metadata records)."""
    meta = json.loads((BOOK_DIR / f"{page}.ipynb").read_text())["metadata"].get("jtc", {})
    return sorted(Path(f).stem for f in meta.get("data", {}))


def page_papers(page: str) -> set[str]:
    """The papers whose figures or records a page saves (each one's paper in the figure registry: a claims file is
    its paper's)."""
    figures = registered().figures
    return {figures[f].paper for f in page_figures(page) if f in figures}


def test_papers(path: Path) -> set[str]:
    """The papers a test file is marked with (``pytestmark = pytest.mark.<paper>``, one of :data:`PAPERS`)."""
    found = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            found |= {n.attr for n in ast.walk(node.value) if isinstance(n, ast.Attribute) and n.attr in PAPERS}
    return found


def chapter_tests(names: list[str]) -> list[str]:
    """pytest node ids for ``names`` (pages): the unit tests of their papers (every test file marked with one) and
    the figure-data regression of the figures they write."""
    papers = set().union(*(page_papers(n) for n in names))
    files = [str(p.relative_to(ROOT)) for p in sorted(TESTS_DIR.rglob("test_*.py")) if test_papers(p) & papers]
    figures = sorted({f for n in names for f in page_figures(n)})
    targets = set(regression.targets())
    return files + [
        f"tests/book/test_figure_regression.py::test_figure_data_is_reproduced[{f}]" for f in figures if f in targets
    ]


def _pytest(args: list[str], env: dict, log: Path) -> tuple[int, str]:
    """Run pytest, its output shown as it comes and kept in ``log``; (exit code, its closing summary)."""
    summary = ""
    rootdir = os.path.commonpath([BOOK_DIR, TESTS_DIR])  # the checkout (node ids relative to it)
    decode = codecs.getincrementaldecoder("utf-8")(errors="replace")
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", f"--rootdir={rootdir}", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        line = ""
        # passed on as it comes, not line by line: pytest's progress dots stand on one line until it is full
        while chunk := proc.stdout.read1(65536):
            text = decode.decode(chunk)
            sys.stdout.write(text)
            sys.stdout.flush()
            out.write(text)
            *done, line = (line + text).split("\n")
            for d in done:
                m = SUMMARY.match(d.strip())
                if m:
                    summary = m.group(1)
        code = proc.wait()
    return code, summary or f"no summary (exit {code})"


def counts(summary: str) -> dict:
    return {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|errors?|skipped|deselected)", summary)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], prog="python -m jtc_utils.book.build.suite")
    ap.add_argument(
        "--pages",
        default="",
        help="comma- or space-separated pages (chapter names): only these pages, "
        "their figures' regression and their paper packages' tests",
    )
    ap.add_argument(
        "--fast",
        action="store_true",
        help=f"no page phase; tests marked neither slow, pages, real nor browser ({FAST!r})",
    )
    ap.add_argument(
        "--jobs", type=int, default=0, help="pytest-xdist workers (default: what the cores and the memory allow)"
    )
    ap.add_argument(
        "--dispatch",
        choices=("native", "baseline"),
        default="native",
        help="baseline: the page phase under NumPy's baseline kernels (NPY_DISABLE_CPU_FEATURES)",
    )
    ap.add_argument("pytest_args", nargs="*", help="passed to both pytest runs (after --)")
    args = ap.parse_args(argv)
    chosen = [p for p in re.split(r"[,\s]+", args.pages) if p]
    unknown = sorted(set(chosen) - set(pages()))
    if unknown:
        ap.error(f"unknown page(s) {', '.join(unknown)}; the pages are: {', '.join(pages())}")
    if args.fast and chosen:
        ap.error("--fast runs no page; pass either --fast or --pages")
    if args.jobs < 0:
        ap.error(f"--jobs must be at least 1, got {args.jobs}")
    LOGS.mkdir(parents=True, exist_ok=True)
    since = str(int(time.time()))
    env = {
        **os.environ,
        "PYTHONWARNINGS": "ignore",
        "JTC_PROGRESS": "0",
        "JTC_REAL_SUBSET": "1200,300",
        "JTC_DATA_OUT": str(ROOT / ".cache" / "test-data"),
        "JTC_PAGES_SINCE": since,
        **ONE_THREAD,
    }
    results = []
    if not args.fast:
        jobs = args.jobs or default_jobs(page_phase=True)
        page_env = dict(env)
        if args.dispatch == "baseline":
            page_env["NPY_DISABLE_CPU_FEATURES"] = baseline_dispatch()
            print(f"page phase: NPY_DISABLE_CPU_FEATURES={page_env['NPY_DISABLE_CPU_FEATURES']!r}", flush=True)
        notebooks = [str(BOOK_DIR / f"{p}.ipynb") for p in (chosen or pages())]
        nbval = ["--nbval-lax", "--nbval-current-env", "--nbval-sanitize-with", str(SANITIZE)]
        code, summary = _pytest(
            [
                *notebooks,
                "-n",
                str(jobs),
                "--dist",
                "loadfile",
                *nbval,
                "-p",
                "jtc_utils.book.build.page_kernels",  # each page's kernel over Unix sockets, started again if it dies
                "--durations=20",
                "-p",
                "no:cacheprovider",
                *args.pytest_args,
            ],
            page_env,
            LOGS / "pages.log",
        )
        results.append(("pages", code, summary))
    jobs = args.jobs or default_jobs(page_phase=False)
    selection = chapter_tests(chosen) if chosen else [str(TESTS_DIR)] + (["-m", FAST] if args.fast else [])
    code, summary = _pytest(
        [
            *selection,
            "-n",
            str(jobs),
            "--dist",
            "loadfile",
            "--durations=20",
            "-p",
            "no:cacheprovider",
            *args.pytest_args,
        ],
        env,
        LOGS / "tests.log",
    )
    results.append(("tests", code, summary))
    # exit 5 is pytest's "nothing collected": a chapter with no unit tests of its own is not a failure
    failed = [name for name, code, _ in results if code not in (0, 5)]
    total = {}
    print("\n" + "=" * 30 + " summary of both phases " + "=" * 30)
    for name, code, summary in results:
        print(f"{name:>5}: {summary} (exit {code}; log {LOGS / name}.log)")
        for k, n in counts(summary).items():
            total[k.rstrip("s") if k.startswith("error") else k] = total.get(k, 0) + n
    line = f"{total.get('passed', 0)} passed, {total.get('failed', 0) + total.get('error', 0)} failed"
    if total.get("skipped"):
        line += f", {total['skipped']} skipped"
    print(("FAILED: " + ", ".join(failed) + " phase") if failed else "both phases passed")
    print(f"all: {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
