"""Execute the chapter notebooks headlessly into the book, then build the HTML.

    python -m jtc_utils.book.runner                 # every notebooks/*.py, profile tiny, then jupyter-book build
    python -m jtc_utils.book.runner --only sec3_linear_shortcuts --no-build
    python -m jtc_utils.book.runner --profile paper  # the paper's models (internet and a GPU)
    python -m jtc_utils.book.runner --force          # re-execute even the pages whose inputs did not change
    python -m jtc_utils.book.runner --build-only --html-dir /tmp/jtc-html   # render stored pages elsewhere
    python -m jtc_utils.book.runner --jobs 2         # two pages side by side, each single-threaded (`make book`)

Each ``notebooks/<name>.py`` (py:percent, the only hand-edited source) is read with jupytext and executed by
papermill (kernel python3, working directory ``notebooks/``, a per-cell timeout, no progress bars).

A chapter's outputs are one transaction: while it runs, the figure data it writes goes to a staging folder
(``JTC_DATA_OUT`` is pointed there for the kernel); only when every cell has succeeded are its ``book/data`` files
moved into place and then its page ``book/<name>.ipynb`` written, holding the SHA-256 of every data file it
wrote. Any failure (a cell error, the kernel dying, a cell timeout, Ctrl-C) leaves the committed page and data
untouched, names the notebook and the cell by its position in ``notebooks/<name>.py``, and keeps the executed copy
in ``book/_failed/``. A page is up to date when its inputs are unchanged *and* its data files are the ones it
recorded. With ``--jobs N`` the stale pages run N at a time in worker processes (:func:`run_pages`); a page that
reads the numbers of pages before it (:data:`READERS`) waits for them.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from functools import partial
from pathlib import Path

from jtc_utils.core import device as devices
from jtc_utils.core.cache import file_fingerprint
from jtc_utils.core.paths import BOOK_DIR, NOTEBOOKS_DIR, ROOT, ZOO_DIR, atomic_write_bytes, atomic_write_text

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


def check_names(names) -> list[str]:
    """The chapter names asked for, all validated before anything runs: plain names of ``notebooks/*.py`` (a
    trailing ``.py`` or a leading ``notebooks/`` is accepted); anything else, a path outside ``notebooks/``
    included, is refused with the list of chapters."""
    known = notebook_names()
    out, bad = [], []
    for raw in names:
        n = str(raw)
        n = n[len("notebooks/"):] if n.startswith("notebooks/") else n
        n = n[:-3] if n.endswith(".py") else n
        (out if n in known else bad).append(n if n in known else raw)
    if bad:
        raise SystemExit(f"ERROR: unknown chapter(s) {', '.join(map(repr, bad))}: --only takes the names of "
                         f"notebooks/*.py, nothing outside that folder. Chapters: {', '.join(known)}")
    return out


# a cell that computes or reads the real model's figures: it names one (their ids start with ``real_``) or the real
# experiment; every cell of the real model's own page counts (issue 33 bounds the real model's share of the book)
REAL_CELL = re.compile(r"""["']real_|\breal_model_line\b|\bexp_real\b""")
REAL_PAGE = "real_model"


def cell_seconds(cell) -> float:
    """The seconds papermill recorded for an executed cell (0 where it recorded none)."""
    return cell.metadata.get("papermill", {}).get("duration") or 0.0


def real_seconds(nb, name: str) -> float:
    """Seconds an executed page spent in the real model's cells (:data:`REAL_CELL`; all of :data:`REAL_PAGE`)."""
    return sum(cell_seconds(c) for c in nb.cells
               if c.cell_type == "code" and (name == REAL_PAGE or REAL_CELL.search(c.source)))


def slowest_cells(nb, n: int = 3, name: str = "") -> str:
    """A line naming the ``n`` slowest cells of an executed notebook (index, seconds, first source line), the
    seconds of the real model's cells (:func:`real_seconds`) and the largest resident memory a kernel has reached so
    far in this process's children (where to look when a page is slow or large)."""
    import resource

    timed = [(cell_seconds(c), i, c.source.strip().splitlines()[0][:60])
             for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.source.strip()]
    cells = "; ".join(f"[{i}] {d:.0f} s `{first}`" for d, i, first in sorted(timed, reverse=True)[:n])
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20  # kilobytes on Linux
    return (f"    slowest cells: {cells}; the real model's cells {real_seconds(nb, name):.0f} s; kernels' peak memory "
            f"so far {peak:.2f} GB")


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


PACKAGE = "jtc_utils"
# trained lenses (``zoo/lenses``) are inputs only of the pages that import the lens package
LENS_ARTIFACTS, LENS_PACKAGE = "lenses", "jtc_utils.lenses"


def _module_file(module: str) -> Path | None:
    """The source file of a ``jtc_utils`` module or subpackage, or None if there is none."""
    base = ROOT.joinpath(*module.split("."))
    for f in (base.with_suffix(".py"), base / "__init__.py"):
        if f.is_file():
            return f
    return None


def _module_name(f: Path) -> str:
    parts = list(f.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def package_imports(f: Path):
    """``(module, bound name, names taken, node)`` for every import of a ``jtc_utils`` module anywhere in file ``f``
    (function-level imports included), relative imports resolved: ``from X import y`` gives ``X.y`` where that is a
    module of the package, else ``X`` with ``[y]`` taken from it. The one import reader: the closure of a page
    (:func:`package_closure`) and the layout tests read imports through it."""
    import ast

    tree = ast.parse(f.read_text(), filename=str(f))
    here = _module_name(f) if f.is_relative_to(ROOT / PACKAGE) else ""
    package = here if f.name == "__init__.py" else here.rpartition(".")[0]
    ours = lambda m: m == PACKAGE or m.startswith(PACKAGE + ".")  # noqa: E731
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if ours(a.name):
                    yield a.name, a.asname or a.name, [], node
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            if not ours(base):
                continue
            for a in node.names:
                full = f"{base}.{a.name}"
                if _is_module(full):
                    yield full, a.asname or a.name, [], node
                else:
                    yield base, a.asname or a.name, [a.name], node


def _imports(f: Path) -> set[str]:
    """Every ``jtc_utils`` module a file imports (see :func:`package_imports`)."""
    return {module for module, _, _, _ in package_imports(f)}


def package_closure(source: Path) -> list[Path]:
    """The ``jtc_utils`` source files a notebook can run: the modules it imports, what they import, and so on
    (a module's parent packages included, since importing ``a.b`` runs ``a/__init__.py``)."""
    seen: dict[str, Path] = {}
    todo = list(_imports(source))
    while todo:
        mod = todo.pop()
        parts = mod.split(".")
        for i in range(1, len(parts) + 1):
            name = ".".join(parts[:i])
            f = _module_file(name)
            if f is None or name in seen:
                continue
            seen[name] = f
            todo.extend(_imports(f))
    return sorted(seen.values())


def _input_files(name: str) -> list[Path]:
    source = NOTEBOOKS_DIR / f"{name}.py"
    package = package_closure(source)
    lenses = any(_module_name(f) == LENS_PACKAGE for f in package)
    zoo = sorted(p for p in ZOO_DIR.rglob("*") if p.is_file() and not {"_work"} & set(p.parts)
                 and not p.name.endswith(".tmp") and (lenses or LENS_ARTIFACTS not in p.relative_to(ZOO_DIR).parts))
    return [source, ROOT / "requirements.txt", *package, *zoo]


def code_fingerprint(source: Path) -> str:
    """What of a chapter's source its outputs depend on: its code cells (source and cell metadata, such as the
    tags) in order. The markdown cells are the prose around them: editing prose changes no output, so it does not
    make a page stale; the runner copies the new prose into the stored page instead (:func:`refresh_prose`)."""
    import json

    import jupytext

    h = hashlib.sha256()
    for cell in jupytext.read(source).cells:
        if cell.cell_type == "code":
            h.update(json.dumps([cell.source, cell.metadata], sort_keys=True, default=str).encode())
    return h.hexdigest()


def inputs_fingerprint(name: str, profile: str) -> str:
    """What a chapter's outputs depend on: its code (:func:`code_fingerprint`), the ``jtc_utils`` modules it can
    run (its import closure, :func:`package_closure`), the pinned requirements, every file of the zoo (weights,
    configs, tokenizers; the trained lenses only for pages that import the lens package) and the profile. A stored
    page with the same fingerprint is up to date (provided its data files are the ones it recorded, see
    :func:`up_to_date`)."""

    source = NOTEBOOKS_DIR / f"{name}.py"
    h = hashlib.sha256(f"{name}/{profile}".encode())
    for f in _input_files(name):
        h.update(str(f.relative_to(ROOT) if f.is_relative_to(ROOT) else f.name).encode())
        h.update((code_fingerprint(f) if f == source else file_fingerprint(f)).encode())
    return h.hexdigest()


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


def data_dir() -> Path:
    return BOOK_DIR / "data"


def page_record(name: str) -> dict | None:
    """What a stored page says about itself (``metadata.jtc``: inputs fingerprint, profile, data files with their
    SHA-256), or None when there is no page."""
    import nbformat

    page = BOOK_DIR / f"{name}.ipynb"
    if not page.exists():
        return None
    return dict(nbformat.read(page, as_version=4).metadata.get("jtc", {}))


def data_mismatches(record: dict, folder: Path | None = None) -> list[str]:
    """The data files a page recorded that are missing from ``folder`` (default: the book's data) or differ from
    what the page saw."""
    folder = data_dir() if folder is None else folder
    out = []
    for fname, digest in (record.get("data") or {}).items():
        f = folder / fname
        if not f.exists():
            out.append(f"{fname} is missing")
        elif file_fingerprint(f) != digest:
            out.append(f"{fname} differs from the page")
    return out


def up_to_date(name: str, profile: str) -> bool:
    record = page_record(name)
    if not record or "data" not in record:
        return False
    return record.get("inputs") == inputs_fingerprint(name, profile) and not data_mismatches(record)


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
    params, env = {"profile": profile}, {}
    if device is not None:
        devices.resolve(device)  # an absent GPU fails here, before any kernel starts
        env["JTC_DEVICE"] = params["device"] = device
    return transaction(jupytext.read(src), BOOK_DIR / f"{name}.ipynb", data_dir(), params, env, NOTEBOOKS_DIR,
                       timeout, {"inputs": inputs_fingerprint(name, profile), "profile": profile},
                       source=f"notebooks/{name}.py")


@contextlib.contextmanager
def environ(updates: dict, defaults: dict | None = None):
    """``os.environ`` with ``updates`` set (and ``defaults`` where not set already) for the block, every one of those
    variables restored afterwards: what the kernels and workers started inside inherit."""
    saved = {k: os.environ.get(k) for k in (*updates, *(defaults or {}))}
    os.environ.update(updates)
    for k, v in (defaults or {}).items():
        os.environ.setdefault(k, v)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


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


def _ignore_interrupts() -> None:
    """A page worker's start: Ctrl-C is the parent's to handle (it stops the workers), never a traceback per worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def transaction(nb, page: Path, data: Path, parameters: dict, env: dict, cwd: Path, timeout: int, record: dict,
                source: str | None = None) -> float:
    """Execute the notebook ``nb`` with papermill into ``page`` and its figure data into the folder ``data``, as one
    transaction: the kernel writes its data into a staging folder beside ``page`` (``JTC_DATA_OUT``; the same file
    system), and only when every cell has passed does the data move into ``data`` and the page get written, with
    ``record`` and the data's fingerprints in its ``jtc`` metadata. On failure the executed copy is kept in
    ``_failed/`` beside the page and :class:`NotebookFailed` names the cell (by its line in ``notebooks/<name>.py``
    when ``source`` names that file, else by its position). ``env`` is added to the kernel's environment (no
    progress bars, warnings off) and restored afterwards. Serves the book's pages (:func:`execute`) and the custom
    book's (:mod:`jtc_utils.book.custom`); returns the seconds it took."""
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
                out = pm.execute_notebook(nb, str(failed), parameters=parameters, kernel_name="python3",
                                          cwd=str(cwd), progress_bar=False, execution_timeout=timeout,
                                          request_save_on_cell_execute=True)
            except pm.PapermillExecutionError as e:
                executed = nbformat.read(failed, as_version=4)
                raise NotebookFailed(f"notebook {name} failed at {where(executed, e.cell_index)} "
                                     f"({e.ename}: {e.evalue}); the executed copy with the error is {failed}; the "
                                     f"committed page and data are unchanged") from None
            except Exception as e:  # noqa: BLE001 - kernel death, cell timeout, a failure to start the kernel ...
                reason = describe(e, timeout)
                index = _failing_cell(failed)
                _mark_failed_copy(failed, index, f"jtc_utils.book.runner: {reason}")
                at = "before any cell ran"
                if index is not None:
                    at = "at " + where(nbformat.read(failed, as_version=4), index)
                copy = f"the executed copy is {failed}" if failed.exists() else "no executed copy was written"
                raise NotebookFailed(f"notebook {name} failed {at} ({reason}); {copy}; the committed page and "
                                     f"data are unchanged") from None
            files = {f.name: file_fingerprint(f) for f in sorted(staging.glob("*.json"))}
            print(slowest_cells(out, name=name), flush=True)
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


# pages that read figure data other pages write (the claims page reads every chapter's; the appendices read
# sections 3 and 4's): run in parallel, each starts only when every page before it has finished
READERS = ("appendix_b_news", "appendix_d_sizes", "claims_verdicts")
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


# the largest resident memory one page's kernel may reach in a cold whole-book run (issue 33's budget: 6 GB; measured
# 2026-11-27: the model-and-text page 5.55 GB; section 3 6.84 GB before its fits read the states without copies,
# which saves 1.16 GB, and 3.73 GB after with the hidden states already cached): `make book` runs two pages at a
# time only where both fit
PAGE_PEAK_GB = 6.0


def available_memory_gb() -> float:
    """Memory the machine can give now (``MemAvailable``), in GB."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES") / 2**30


def jobs_that_fit(jobs: int, page_gb: float = PAGE_PEAK_GB) -> int:
    """``jobs``, or fewer where that many pages at their peak would not fit the memory available now."""
    return max(1, min(jobs, int(available_memory_gb() // page_gb)))


# pages started first when several run at a time, the long ones first (longest-first scheduling, from the page times
# of a cold build on two cores, 2026-11-27): the model-and-text page extracts the real model's hidden states, the
# longest single step, which most pages need (a cached result is computed once, so a page that needs it meanwhile
# waits); the linearity chapter's long steps (every-token states, pruning) need no extraction, so it runs beside it;
# then section 6, the lenses and FFN, so that the short pages are left to fill the end, not one long page alone
START_FIRST = ("real_model", "secretly_linear", "sec6_submodules", "lenses", "ffn_subupdates")


def start_order(names: list[str], first=START_FIRST) -> list[str]:
    """``names`` with the pages of ``first`` moved to the front (in that order); the others keep theirs."""
    return sorted(names, key=lambda n: first.index(n) if n in first else len(first))


def run_pages(names: list[str], run_one, jobs: int = 1, log=print, readers=READERS, order=None) -> dict:
    """Run ``run_one(name)`` (a picklable function returning seconds, or None for a page already up to date) for
    every page in ``names``, in ``jobs`` worker processes; returns ``{name: seconds or None}``. One at a time, the
    pages run in the order of ``names``; several at a time, they start in the order of ``order`` (default
    :func:`start_order` of ``names``), a reader still waiting for every page before it in ``names``.
    With ``jobs`` > 1 every worker and the kernels it starts are single-threaded (``ONE_THREAD``): on two cores two
    one-thread pages finish sooner than one two-thread page after another (much of a page is Python and small
    kernels), and they never spin-wait on each other's OpenMP threads; workers that need the same cached result
    compute it once (:func:`jtc_utils.core.cache.computing`). A page in ``readers`` starts only when every page
    before it has finished. A failure stops new pages from starting; the running ones finish (each is its own
    transaction) and the first failure is raised."""
    times = {}
    if jobs <= 1:
        for name in names:
            times[name] = run_one(name)
            log(f"  {name}: " + ("up to date" if times[name] is None else f"{times[name]:.0f} s"))
        return times
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pending, running = list(start_order(names) if order is None else order), {}
    if sorted(pending) != sorted(names):
        raise ValueError(f"the start order {order} must hold the same pages as {names}")
    with environ(ONE_THREAD):  # the workers inherit it, and their kernels from them
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                                 initializer=_ignore_interrupts) as pool:
            try:
                failure = _schedule(pool, names, run_one, jobs, log, readers, pending, running, times)
            except KeyboardInterrupt:  # stop now: the running pages' transactions commit nothing
                pool.shutdown(wait=False, cancel_futures=True)
                for child in multiprocessing.active_children():
                    child.terminate()
                raise
    if failure is not None:
        raise failure
    return times


def _schedule(pool, names, run_one, jobs, log, readers, pending, running, times):
    """run_pages' loop over a pool of workers (see there): fills ``times``; returns the first failure, or None."""
    from concurrent.futures import FIRST_COMPLETED, wait

    failure = None
    while running or (pending and failure is None):
        for name in list(pending):
            if failure is not None or len(running) >= jobs:
                break
            if name in readers and any(n not in times for n in names[:names.index(name)]):
                continue  # waits for the pages whose numbers it reads
            pending.remove(name)
            log(f"executing {name} ...")
            running[pool.submit(run_one, name)] = name
        done, _ = wait(running, return_when=FIRST_COMPLETED)
        for fut in done:
            name = running.pop(fut)
            try:
                times[name] = fut.result()
            except Exception as e:  # noqa: BLE001 - the first failure is raised once the others end
                failure = failure or e
                times[name] = None
                log(f"  {name}: failed")
                continue
            log(f"  {name}: " + ("up to date" if times[name] is None else f"{times[name]:.0f} s"))
    return failure


def describe(e: BaseException, timeout: int) -> str:
    kind = type(e).__name__
    if kind == "DeadKernelError":
        return ("the kernel died, most often killed for lack of memory; run it again with fewer samples "
                "(n_train/n_val) or more memory")
    if kind == "CellTimeoutError" or isinstance(e, TimeoutError):
        return f"a cell ran longer than the {timeout} s per-cell timeout; raise it with --timeout"
    first = str(e).strip().splitlines()[0][:300] if str(e).strip() else ""
    return f"{kind}: {first}" if first else kind


def _writable(folder: Path) -> bool:
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
    # the numbers behind the figures, downloadable next to the pages that link them (book/data/<fig>.json)
    data = EXTRA_DIR / "book" / "data"
    shutil.rmtree(data, ignore_errors=True)
    shutil.copytree(BOOK_DIR / "data", data)


def build_html(html_dir: Path | None = None) -> str:
    """Render the book with jupyter-book (notebook execution off: the outputs come from papermill) into
    ``<html_dir>/_build/html`` (default: ``book/``)."""
    out = Path(html_dir) if html_dir else BOOK_DIR
    if not _writable(out):
        raise SystemExit(f"ERROR: cannot write the HTML under {out} (a read-only checkout?). Point the output "
                         f"at a writable folder: `python -m jtc_utils.book.runner --build-only --html-dir /tmp/jtc-html` "
                         f"(and set JTC_CACHE to a writable folder if you re-execute chapters).")
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
    cmd = [str(jb), "build", str(source), "--path-output", str(out), *(["--warningiserror"] if strict else []),
           "--keep-going"]
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


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m jtc_utils.book.runner", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="tiny", choices=["tiny", "paper"])
    ap.add_argument("--only", nargs="+", metavar="CHAPTER", help="chapter names (default: all)")
    what = ap.add_mutually_exclusive_group()
    what.add_argument("--no-build", action="store_true", help="execute notebooks only")
    what.add_argument("--build-only", action="store_true", help="render the HTML from the stored notebooks")
    ap.add_argument("--html-dir", type=Path, default=None,
                    help="folder to build the HTML in (default: book/); use it for a read-only checkout")
    ap.add_argument("--timeout", type=int, default=CELL_TIMEOUT, help="seconds per cell")
    ap.add_argument("--device", default=None,
                    help="where the heavy work runs: auto (a GPU when there is one; the default), cpu, cuda, cuda:N")
    ap.add_argument("--force", action="store_true",
                    help="re-execute every notebook even if its stored page is up to date")
    ap.add_argument("--jobs", type=int, default=1,
                    help="pages executed side by side, each single-threaded (default 1: one page at a time, on "
                         "every core)")
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
        if not _writable(BOOK_DIR):
            raise SystemExit(f"ERROR: cannot write the pages under {BOOK_DIR} (a read-only checkout?). Render the "
                             f"stored pages elsewhere with `python -m jtc_utils.book.runner --build-only --html-dir "
                             f"/tmp/jtc-html`, or clone the repository to a writable folder to re-execute.")
        for folder in remove_stale_staging():
            print(f"removed {folder.name}: the staging folder of a run that was killed (nothing of it was committed)",
                  flush=True)
        stale, todo = args.force or bool(args.only), []  # naming a page means: run it
        for name in names:
            # a page is skipped when its inputs and data are unchanged; once one page re-runs, the later ones
            # (which may read the numbers it writes, like the claims page) re-run too
            stale = stale or not up_to_date(name, args.profile)
            if stale:
                todo.append(name)
            else:
                prose = " (its prose refreshed from the source)" if refresh_prose(name) else ""
                print(f"{name}: up to date (inputs and data unchanged; --force re-executes){prose}", flush=True)
        jobs = jobs_that_fit(args.jobs) if todo else args.jobs
        if jobs < args.jobs:
            print(f"{available_memory_gb():.1f} GB available: {jobs} page(s) at a time instead of {args.jobs} "
                  f"(a page may reach {PAGE_PEAK_GB:.0f} GB)", flush=True)
        print(f"profile {args.profile}: executing {len(todo)} page(s) in {jobs} worker(s)", flush=True)
        try:
            with exit_on_interrupt("interrupted: the pages that finished are committed, the others unchanged; "
                                   "`make book` runs the rest"):
                run_pages(todo, partial(execute, profile=args.profile, timeout=args.timeout, device=args.device),
                          jobs, lambda line: print(line, flush=True))
        except NotebookFailed as e:
            raise SystemExit(f"ERROR: {e}") from None
    if not args.no_build:
        index = build_html(args.html_dir)
        print(f"The book is at {index}")


if __name__ == "__main__":
    main()
