"""Execute the chapter notebooks headlessly into the book, then build the HTML.

    python -m jtc_utils.book.build.runner                 # every stale page, profile tiny, then jupyter-book build
    python -m jtc_utils.book.build.runner --only sec3_linear_shortcuts --no-build
    python -m jtc_utils.book.build.runner --profile paper  # the paper's models (internet and a GPU)
    python -m jtc_utils.book.build.runner --force          # re-execute even the pages whose inputs did not change
    python -m jtc_utils.book.build.runner --build-only --html-dir /tmp/jtc-html   # render stored pages elsewhere
    python -m jtc_utils.book.build.runner --jobs 2         # two pages side by side, each single-threaded

Each page is one transaction (:func:`transaction`); staleness is :mod:`jtc_utils.book.build.staleness`.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from functools import partial
from pathlib import Path

from jtc_utils.core.infra import costs
from jtc_utils.core.infra import device as devices
from jtc_utils.core.infra.cache import file_fingerprint
from jtc_utils.core.infra.paths import BOOK_DIR, NOTEBOOKS_DIR, ROOT, atomic_write_text
from jtc_utils.evidence.registry import get as registered

from jtc_utils.book.build import costs as build_costs
from jtc_utils.book.build.executed import clean, refresh_prose, slowest_cells
from jtc_utils.book.build.website import build_html, writable
from jtc_utils.book.build.pages import AHEAD
from jtc_utils.book.build.scheduling import (
    PAGE_PEAK_GB,
    MemoryWatch,
    available_memory_gb,
    environ,
    jobs_that_fit,
    run_pages,
)
from jtc_utils.book.build.staleness import data_dir, inputs_fingerprint, package_closure, up_to_date

CELL_TIMEOUT = 1800
# the kernel's own log stays quiet: its chatter (running over TCP without encryption, a KeyboardInterrupt caught while
# the client shuts it down) printed once per page; a cell's error reaches the runner through the cell's output
KERNEL_QUIET = ["--IPKernelApp.log_level=CRITICAL"]


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


def check_names(names) -> list[str]:
    """The chapter names asked for, all validated before anything runs: plain names of ``notebooks/*.py`` (a
    trailing ``.py`` or a leading ``notebooks/`` is accepted); anything else, a path outside ``notebooks/``
    included, is refused with the list of chapters."""
    known = notebook_names()
    out, bad = [], []
    for raw in names:
        n = str(raw)
        n = n[len("notebooks/") :] if n.startswith("notebooks/") else n
        n = n[:-3] if n.endswith(".py") else n
        (out if n in known else bad).append(n if n in known else raw)
    if bad:
        raise SystemExit(
            f"ERROR: unknown chapter(s) {', '.join(map(repr, bad))}: --only takes the names of "
            f"notebooks/*.py, nothing outside that folder. Chapters: {', '.join(known)}"
        )
    return out


def _cell_lines(src: Path) -> list[int]:
    """1-based line of each ``# %%`` cell marker of a py:percent file."""
    return [i for i, line in enumerate(src.read_text().splitlines(), 1) if line.startswith("# %%")]


def _where(name: str, executed, index: int) -> str:
    """A cell of the executed notebook, named by its position in notebooks/<name>.py (the injected-parameters cell
    papermill adds is not in the source, nor are the error markers it inserts; ``index`` counts neither)."""
    cells = [c for c in executed.cells if "papermill-error-cell-tag" not in c.metadata.get("tags", [])]
    injected = [i for i, c in enumerate(cells) if "injected-parameters" in c.metadata.get("tags", [])]
    pos = index - sum(1 for i in injected if i < index)
    lines = _cell_lines(NOTEBOOKS_DIR / f"{name}.py")
    n_source = len(cells) - len(injected)
    # text before the first marker (after the header) makes cells without a marker, at the start only
    offset = n_source - len(lines)
    line = f", line {lines[pos - offset]}" if offset >= 0 and 0 <= pos - offset < len(lines) else ""
    return f"cell {pos + 1} of {n_source} (notebooks/{name}.py{line})"


def _failing_cell(failed: Path) -> int | None:
    """The cell that was running when execution stopped: the last one papermill started."""
    import nbformat

    try:
        nb = nbformat.read(failed, as_version=4)
    except Exception:  # noqa: BLE001 - a copy that cannot be read names no cell
        return None
    started = [i for i, c in enumerate(nb.cells) if c.metadata.get("papermill", {}).get("start_time")]
    return started[-1] if started else None


def _mark_failed_copy(failed: Path, index: int | None, message: str) -> None:
    """Put the reason into the failed copy (a kernel that died or a timeout leaves no traceback of its own)."""
    import nbformat

    try:
        nb = nbformat.read(failed, as_version=4)
    except Exception:  # noqa: BLE001
        return
    if index is not None and nb.cells[index].cell_type == "code":
        nb.cells[index].outputs.append(nbformat.v4.new_output("stream", name="stderr", text=message + "\n"))
        atomic_write_text(failed, nbformat.writes(nb) + "\n")


STAGING_OWNER = "owner.pid"  # in a staging folder: the process that writes it


def remove_stale_staging(name: str = "*", root: Path | None = None) -> list[Path]:
    """Remove the staging folders of chapter ``name`` (default: every chapter) in ``root`` (default: ``book/``) that
    a run killed before its clean-up left behind (their owner process no longer runs): what they hold was never
    committed. Returns the folders removed."""
    removed = []
    for folder in sorted((BOOK_DIR if root is None else root).glob(f".staging-{name}-*")):
        owner = folder / STAGING_OWNER
        try:
            pid = int(owner.read_text())
        except (OSError, ValueError):
            pid = None
        if pid is not None and pid != os.getpid() and _alive(pid):
            continue  # another run of this chapter is writing it
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def execute(name: str, profile: str = "tiny", timeout: int = CELL_TIMEOUT, device: str | None = None) -> float:
    """Execute notebooks/<name>.py into book/<name>.ipynb and its book/data files, as one transaction; returns the
    seconds it took. ``device`` (auto, cpu, cuda) is where the heavy work runs, passed as the notebook parameter
    and to the kernel's environment (``JTC_DEVICE``); None keeps the notebooks' default (auto). Raises
    :class:`NotebookFailed` (naming the notebook and the cell) on any failure."""
    import jupytext

    src = NOTEBOOKS_DIR / f"{name}.py"
    if not src.exists():
        raise FileNotFoundError(f"no notebook {src}; available: {', '.join(notebook_names())}")
    params, env = {"profile": profile}, {costs.ENV: str(_costs_file(name))}
    if device is not None:
        devices.resolve(device)  # an absent GPU fails here, before any kernel starts
        env["JTC_DEVICE"] = params["device"] = device
    return transaction(
        jupytext.read(src),
        BOOK_DIR / f"{name}.ipynb",
        data_dir(),
        params,
        env,
        NOTEBOOKS_DIR,
        timeout,
        {"inputs": inputs_fingerprint(name, profile), "profile": profile},
        source=f"notebooks/{name}.py",
    )


@contextlib.contextmanager
def quiet_interrupt():
    """Ctrl-C as the caller's one line: inside the block, an interrupt is raised as a bare KeyboardInterrupt, whatever
    it interrupted (this process waiting, or a kernel's cell that the same Ctrl-C reached, which papermill reports as
    a failed cell or a dead kernel), and every logger is silenced from then on, so that the kernels' machinery
    (papermill, nbclient, asyncio's unretrieved tasks) prints nothing more on the way out. Where the block is not in
    the main thread, interrupts are only passed on."""
    hit = []
    main = threading.current_thread() is threading.main_thread()

    def handler(signum, frame):
        hit.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handler) if main else None
    try:
        yield
    except BaseException as e:
        if hit or isinstance(e, KeyboardInterrupt) or getattr(e, "ename", "") == "KeyboardInterrupt":
            logging.disable(logging.CRITICAL)
            raise KeyboardInterrupt from None
        raise
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def exit_on_interrupt(line: str):
    """A command's Ctrl-C: :func:`quiet_interrupt` inside the block, then ``line`` (what was kept, how to resume) on
    standard error and exit code 130."""
    try:
        with quiet_interrupt():
            yield
    except KeyboardInterrupt:
        print("\n" + line, file=sys.stderr)
        raise SystemExit(130) from None


def transaction(
    nb,
    page: Path,
    data: Path,
    parameters: dict,
    env: dict,
    cwd: Path,
    timeout: int,
    record: dict,
    source: str | None = None,
) -> float:
    """Execute the notebook ``nb`` with papermill into ``page`` and its figure data into the folder ``data``, as one
    transaction: the kernel writes its data into a staging folder beside ``page`` (``JTC_DATA_OUT``; the same file
    system), and only when every cell has passed does the data move into ``data`` and the page get written, with
    ``record`` and the data's fingerprints in its ``jtc`` metadata. On failure the executed copy is kept in
    ``_failed/`` beside the page and :class:`NotebookFailed` names the cell (by its line in ``notebooks/<name>.py``
    when ``source`` names that file, else by its position). ``env`` is added to the kernel's environment (no
    progress bars, warnings off) and restored afterwards. Serves the book's pages (:func:`execute`) and the custom
    book's (:mod:`jtc_utils.book.custom.command`); returns the seconds it took."""
    import nbformat
    import papermill as pm

    name, root = page.stem, page.parent
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    failed = root / "_failed" / f"{name}.ipynb"
    failed.parent.mkdir(parents=True, exist_ok=True)
    failed.unlink(missing_ok=True)
    remove_stale_staging(name, root)
    staging = Path(tempfile.mkdtemp(prefix=f".staging-{name}-", dir=root))  # same file system as the data
    (staging / STAGING_OWNER).write_text(str(os.getpid()))
    kernel_env = {"JTC_PROGRESS": "0", "JTC_DATA_OUT": str(staging), **env}  # no progress bars in saved outputs

    def where(executed, index: int) -> str:
        return _where(name, executed, index) if source else f"cell {index + 1}"

    t0 = time.time()
    try:
        with environ(kernel_env, {"PYTHONWARNINGS": "ignore"}):
            try:
                with MemoryWatch() as watch:  # the kernel is this process's child (pages run one per process)
                    out = pm.execute_notebook(
                        nb,
                        str(failed),
                        parameters=parameters,
                        kernel_name="python3",
                        cwd=str(cwd),
                        progress_bar=False,
                        execution_timeout=timeout,
                        request_save_on_cell_execute=True,
                        extra_arguments=KERNEL_QUIET,
                    )
            except pm.PapermillExecutionError as e:
                executed = nbformat.read(failed, as_version=4)
                raise NotebookFailed(
                    f"notebook {name} failed at {where(executed, e.cell_index)} "
                    f"({e.ename}: {e.evalue}); the executed copy with the error is {failed}; the "
                    f"committed page and data are unchanged"
                ) from None
            except Exception as e:  # noqa: BLE001 - kernel death, cell timeout, a failure to start the kernel ...
                reason = describe(e, timeout)
                index = _failing_cell(failed)
                _mark_failed_copy(failed, index, f"jtc_utils.book.build.runner: {reason}")
                at = "before any cell ran"
                if index is not None:
                    at = "at " + where(nbformat.read(failed, as_version=4), index)
                copy = f"the executed copy is {failed}" if failed.exists() else "no executed copy was written"
                raise NotebookFailed(
                    f"notebook {name} failed {at} ({reason}); {copy}; the committed page and data are unchanged"
                ) from None
            files = {f.name: file_fingerprint(f) for f in sorted(staging.glob("*.json"))}
            print(slowest_cells(out, name=name, peak_gb=watch.peak_gb), flush=True)
            clean(out)
            out.metadata["jtc"] = {**record, "data": files}
            text = nbformat.writes(out) + "\n"
            # commit: the data first, the page last; an interruption in between leaves a page whose recorded data
            # does not match, which up_to_date and the tests detect (the page is re-executed)
            data.mkdir(parents=True, exist_ok=True)
            for fname in files:
                os.replace(staging / fname, data / fname)
            atomic_write_text(page, text)
            failed.unlink(missing_ok=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return time.time() - t0


def _costs_file(page: str) -> Path:
    """An empty file where page ``page`` (or its work ahead, ``<page>.ahead``) records what its figures cost in this
    run (:mod:`jtc_utils.book.build.costs`)."""
    out = build_costs.path(page)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("")
    return out


def work_ahead(page: str, profile: str = "tiny", device: str | None = None) -> None:
    """A page's work that reads no other page's numbers, declared by a paper (the registry's ``ahead``: the claims
    page's JTC claims judged again in the paper's regime and on the other training seeds,
    :func:`jtc_utils.jtc.rejudge.rejudge`), computed ahead of the page in a worker of its own (no progress bars), so
    that the page reads the figures from the on-disk cache instead of computing them alone at the end of the
    build."""
    measured = {costs.ENV: str(_costs_file(f"{page}.ahead"))}
    with environ({"JTC_PROGRESS": "0", **measured, **({"JTC_DEVICE": device} if device else {})}):
        registered().ahead[page](profile)


def describe(e: BaseException, timeout: int) -> str:
    kind = type(e).__name__
    if kind == "DeadKernelError":
        return (
            "the kernel died, most often killed for lack of memory; run it again with fewer samples "
            "(n_train/n_val) or more memory"
        )
    if kind == "CellTimeoutError" or isinstance(e, TimeoutError):
        return f"a cell ran longer than the {timeout} s per-cell timeout; raise it with --timeout"
    first = str(e).strip().splitlines()[0][:300] if str(e).strip() else ""
    return f"{kind}: {first}" if first else kind


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m jtc_utils.book.build.runner",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--profile", default="tiny", choices=["tiny", "paper"])
    ap.add_argument("--only", nargs="+", metavar="CHAPTER", help="chapter names (default: all)")
    what = ap.add_mutually_exclusive_group()
    what.add_argument("--no-build", action="store_true", help="execute notebooks only")
    what.add_argument("--build-only", action="store_true", help="render the HTML from the stored notebooks")
    ap.add_argument(
        "--html-dir",
        type=Path,
        default=None,
        help="folder to build the HTML in (default: book/); use it for a read-only checkout",
    )
    ap.add_argument("--timeout", type=int, default=CELL_TIMEOUT, help="seconds per cell")
    ap.add_argument(
        "--device",
        default=None,
        help="where the heavy work runs: auto (a GPU when there is one; the default), cpu, cuda, cuda:N",
    )
    ap.add_argument(
        "--force", action="store_true", help="re-execute every notebook even if its stored page is up to date"
    )
    ap.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="pages executed side by side, each single-threaded (default 1: one page at a time, on every core)",
    )
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error(f"--jobs must be at least 1, got {args.jobs}")
    if args.timeout <= 0:
        ap.error(f"--timeout must be a positive number of seconds, got {args.timeout}")
    if args.build_only and (args.only or args.force):
        ap.error("--build-only renders the stored pages and executes nothing: drop --only/--force")
    if args.device is not None:
        try:
            devices.resolve(args.device)
        except ValueError as e:
            ap.error(str(e))
    names = check_names(args.only) if args.only else notebook_names()
    if not args.build_only:
        if not writable(BOOK_DIR):
            raise SystemExit(
                f"ERROR: cannot write the pages under {BOOK_DIR} (a read-only checkout?). Render the "
                f"stored pages elsewhere with `python -m jtc_utils.book.build.runner --build-only --html-dir "
                f"/tmp/jtc-html`, or clone the repository to a writable folder to re-execute."
            )
        for folder in remove_stale_staging():
            print(
                f"removed {folder.name}: the staging folder of a run that was killed (nothing of it was committed)",
                flush=True,
            )
        stale, todo = args.force or bool(args.only), []  # naming a page means: run it
        for name in names:
            # a page is skipped when its inputs and data are unchanged; once one page re-runs, the later ones
            # (which may read the numbers it writes, like the claims page) re-run too
            try:
                package_closure(NOTEBOOKS_DIR / f"{name}.py")  # a source that does not parse: one line
            except ValueError as e:
                raise SystemExit(f"ERROR: {e}") from None
            stale = stale or not up_to_date(name, args.profile)
            if stale:
                todo.append(name)
            else:
                prose = " (its prose refreshed from the source)" if refresh_prose(name) else ""
                print(f"{name}: up to date (inputs and data unchanged; --force re-executes){prose}", flush=True)
        jobs = jobs_that_fit(args.jobs) if todo else args.jobs
        if jobs < args.jobs:
            print(
                f"{available_memory_gb():.1f} GB available: {jobs} page(s) at a time instead of {args.jobs} "
                f"(a page may reach {PAGE_PEAK_GB:.0f} GB)",
                flush=True,
            )
        print(f"profile {args.profile}: executing {len(todo)} page(s) in {jobs} worker(s)", flush=True)
        try:
            with exit_on_interrupt(
                "interrupted: the pages that finished are committed, the others unchanged; `make book` runs the rest"
            ):
                run_pages(
                    todo,
                    partial(execute, profile=args.profile, timeout=args.timeout, device=args.device),
                    jobs,
                    lambda line: print(line, flush=True),
                    ahead={page: partial(work_ahead, page, args.profile, args.device) for page in AHEAD},
                )
        except NotebookFailed as e:
            raise SystemExit(f"ERROR: {e}") from None
        if todo:
            measured = [p for n in todo for p in (n, f"{n}.ahead") if build_costs.path(p).exists()]
            print(build_costs.report(measured), flush=True)
    if not args.no_build:
        index = build_html(args.html_dir)
        print(f"The book is at {index}")


if __name__ == "__main__":
    main()
