"""One graded run (:mod:`jtc_utils.book.classroom.grade`): the notebook it executes (the student edition with a
submission's answer cells, each check cell recording the answer) and its execution in a process of its own, in the
sandbox for a submission, with its limits on time and disk. ``python -m jtc_utils.book.classroom.grading_run`` is the
executing process."""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from jtc_utils.core.infra.paths import CACHE_DIR, DATA_DIR, NOTEBOOKS_DIR, ROOT, ZOO_DIR, atomic_write_text

from jtc_utils.book.classroom import intake, sandbox
from jtc_utils.book.build.runner import KERNEL_QUIET
from jtc_utils.book.classroom import student as edition

KERNEL_NAME = "__jtc_grade__"  # the recorder's name in the submission's kernel
UNSANDBOXED = "none (--no-sandbox): the submissions ran unisolated"
GB = 1 << 30
TMP_BYTES = 512 << 20  # the sandbox's /tmp (in memory)
# what a submission's run sees of the project, read-only: the package, the zoo and the figures' numbers (besides
# Python and the project's cache). Not the rest: the sources with their solutions, the executed pages, the built
# book, the tests, git, and whatever else lies in the project's folder (an earlier grading's feedback or class)
RUN_READS = (ROOT / "jtc_utils", ZOO_DIR, DATA_DIR)
# what a submission's kernel inherits from the grader's environment: the arithmetic and the real model's subset
PASSED_ON = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NPY_DISABLE_CPU_FEATURES",
    "ATEN_CPU_CAPABILITY",
    "JTC_REAL_SUBSET",
    "JTC_DEVICE",
    "LANG",
    "LC_ALL",
)


@dataclass(frozen=True)
class Box:
    """How submissions run: ``name`` (:data:`sandbox.NAME`, or :data:`UNSANDBOXED`) and the limits."""

    name: str
    memory_bytes: int = 16 * GB
    disk_bytes: int = 4 * GB

    @property
    def isolated(self) -> bool:
        return self.name != UNSANDBOXED


# --- the graded notebook ------------------------------------------------------------------------------------


def check_call(source: str):
    """The ``exercises.check(label, answer, ...)`` call of a check cell: (label, its source segment, the source of
    its ``data=`` argument or None); None when the cell has none."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "check"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "exercises"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            data = next((ast.get_source_segment(source, k.value) for k in node.keywords if k.arg == "data"), None)
            if data is None and len(node.args) > 2:
                data = ast.get_source_segment(source, node.args[2])
            return node.args[0].value, ast.get_source_segment(source, node), data
    return None


def reference_page(page: str, reference: Path = NOTEBOOKS_DIR):
    """The student edition of ``page`` from the book's source in ``reference``."""
    import jupytext

    source = Path(reference) / f"{page}.py"
    if not source.is_file():
        pages = sorted(p.stem for p in Path(reference).glob("*.py"))
        raise ValueError(
            f"{page!r} is not a page of the book (pages: {', '.join(pages)}): name each submitted notebook as its page"
        )
    return edition.strip(jupytext.read(source))


def solutions(page: str, reference: Path = NOTEBOOKS_DIR):
    """The book's own answers to ``page``'s exercises, as a submission of the student edition: its solution cells,
    each in an answer cell labelled as the student edition labels it (the check right after it)."""
    import jupytext
    import nbformat

    book = jupytext.read(Path(reference) / f"{page}.py")
    cells = []
    for i, cell in enumerate(book.cells):
        if "solution" in cell.metadata.get("tags", []):
            after = next((c for c in book.cells[i + 1 :] if c.cell_type == "code"), None)
            found = edition.CHECK_CALL.search(after.source) if after is not None else None
            if found:
                cells.append(
                    nbformat.v4.new_code_cell(cell.source, metadata={"exercise": found.group(1), "tags": ["answer"]})
                )
    return nbformat.v4.new_notebook(cells=cells)


def answer_cells(nb) -> dict[str, str]:
    """A submission's answer cells by exercise label (the student edition's ``exercise`` metadata)."""
    out = {}
    for cell in nb.cells:
        label = cell.get("metadata", {}).get("exercise")
        if cell.get("cell_type") == "code" and label and "answer" in cell.metadata.get("tags", []):
            out.setdefault(label, cell.source)
    return out


def graded_notebook(reference, submission, setup: str, with_data: bool = False):
    """The notebook to execute: ``reference`` (the student edition) with the submission's answer cells, each check
    cell replaced by a cell that records the answer (``with_data``: and the numbers the page passes to the check,
    for the reference run only, whose answer cells, the book's solutions, have no time limit of their own), and
    ``setup`` first. Returns it and the exercises in order."""
    import copy

    import nbformat

    answers = answer_cells(submission)
    nb = copy.deepcopy(reference)
    cells, labels, snapped = [nbformat.v4.new_code_cell(setup, metadata={"tags": ["grading"]})], [], False
    for cell in nb.cells:
        label = cell.metadata.get("exercise")
        if cell.cell_type == "code" and label and "answer" in cell.metadata.get("tags", []):
            if not snapped:  # the figures computed so far, before the submission's first line runs
                cells.append(nbformat.v4.new_code_cell(f"{KERNEL_NAME}.snapshot()", metadata={"tags": ["grading"]}))
                snapped = True
            cells.append(nbformat.v4.new_code_cell("answer = None", metadata={"tags": ["grading"]}))
            cell.source = answers.get(label, "")
            cell.metadata["grading"] = "solution" if with_data else "answer"
        elif cell.cell_type == "code" and label and "check" in cell.metadata.get("tags", []):
            found = check_call(cell.source)
            if found is None:
                raise ValueError(f"the book's check cell of {label!r} has no exercises.check call")
            _, call, data = found
            cell.source = cell.source.replace(
                call, f"{KERNEL_NAME}.record({label!r}, answer" + (f", data={data})" if data and with_data else ")"), 1
            )
            cell.metadata["grading"] = "record"
            labels.append(label)
        cells.append(cell)
    nb.cells = cells
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"
    nb.nbformat, nb.nbformat_minor = 4, max(nb.get("nbformat_minor", 5), 5)
    nbformat.validate(nb)
    return nb, labels


def setup_source(results: Path, workdir: Path, writable: list[Path], unreadable: list[Path], guard: bool = True) -> str:
    return (
        f"from jtc_utils.book.classroom import recorder as _grade\n"
        f"{KERNEL_NAME} = _grade.install({str(results)!r}, {str(workdir)!r}, {[str(p) for p in writable]!r}, "
        f"{[str(p) for p in unreadable]!r}, guard={guard!r})\n"
        f"del _grade"
    )


# --- executing one submission (a process of its own) ----------------------------------------------------------


GRACE = 10  # seconds an interrupted answer cell has to stop before its kernel is killed


def _execute(notebook: Path, executed: Path, errors: Path, cell_timeout: int, workdir: Path) -> None:
    """Run in the child process: execute ``notebook`` with nbclient, errors allowed; the error of every cell that
    raised or ran past its time (answer cells: ``cell_timeout``) goes to ``errors``. An answer cell past its time is
    interrupted; one that does not stop within :data:`GRACE` seconds (it ignores the interrupt) has its kernel
    killed, and the cells after it do not run."""
    import asyncio
    from queue import Empty

    import nbformat
    from jupyter_core.utils import ensure_async
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    nb = nbformat.read(notebook, as_version=4)
    failed = {}
    limits = sandbox.run_limits()
    if limits:
        limits()

    def on_error(cell, cell_index, execute_reply):
        c = execute_reply["content"]
        failed.setdefault(cell_index, f"{c.get('ename', 'Error')}: {c.get('evalue', '')}".strip())
        atomic_write_text(errors, json.dumps(failed))

    class Client(NotebookClient):
        async def _async_handle_timeout(self, timeout, cell=None):
            reply = await super()._async_handle_timeout(timeout, cell)
            try:  # the interrupted cell's reply (the only request in flight) must come within the grace
                await asyncio.wait_for(ensure_async(self.kc.shell_channel.get_msg(timeout=GRACE)), GRACE + 1)
            except (Empty, asyncio.TimeoutError):
                index = next((i for i, c in enumerate(self.nb.cells) if c is cell), -1)
                failed[index] = (
                    f"TimeoutError: the answer cell ran past its {timeout} s and did not stop when interrupted: "
                    "its run was stopped there"
                )
                atomic_write_text(errors, json.dumps(failed))
                await ensure_async(self.km.shutdown_kernel(now=True))
            return reply

    client = Client(
        nb,
        kernel_name="python3",
        allow_errors=True,
        interrupt_on_timeout=True,
        timeout=None,
        extra_arguments=KERNEL_QUIET,  # the kernel's chatter would hide the real error
        timeout_func=lambda cell: cell_timeout if cell.metadata.get("grading") == "answer" else None,
        error_on_timeout={"ename": "TimeoutError", "evalue": f"the answer cell ran past its {cell_timeout} s"},
        on_cell_error=on_error,
        resources={"metadata": {"path": str(workdir)}},
    )
    try:
        client.execute()
    except DeadKernelError:
        if not failed:  # a kernel that died by itself (a crash, its memory limit): the grader says so
            raise
    finally:
        atomic_write_text(executed, nbformat.writes(nb))


def _child_env(private: Path, workdir: Path, cache: Path, threads: int | None = None) -> dict:
    """The whole environment of a graded run: where it works, its cache and numbers, quiet progress, and the few
    variables of the grader's that set the arithmetic (:data:`PASSED_ON`); nothing else of the grader's."""
    env = {k: os.environ[k] for k in PASSED_ON if k in os.environ}
    env.update(
        {
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
            "HOME": str(workdir),
            "IPYTHONDIR": str(workdir / ".ipython"),
            "TMPDIR": "/tmp",
            "MPLCONFIGDIR": str(private / "mpl"),
            "JTC_CACHE": str(cache),
            "JTC_DATA_OUT": str(workdir / "data"),
            "JTC_PROGRESS": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONWARNINGS": "ignore",
            "HF_HUB_OFFLINE": "1",
            "LANG": env.get("LANG", "C.UTF-8"),
        }
    )
    if threads:  # runs side by side: one thread each (OpenMP's spin-waits make two multi-threaded ones crawl)
        env.update({k: str(threads) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")})
    return env


def own_cache(folder: Path) -> Path:
    """A cache of the run's own in ``folder``: every entry of the project's cache as a link to it (read-only in the
    sandbox), so that a run finds what the book computed and writes what it computes beside the links, never into
    the project's cache."""
    folder.mkdir(parents=True, exist_ok=True)
    if CACHE_DIR.is_dir():
        for root, dirs, files in os.walk(CACHE_DIR):
            rel = Path(root).relative_to(CACHE_DIR)
            dirs[:] = [d for d in dirs if not d.startswith(".") and (rel, d) != (Path("."), "test-logs")]
            (folder / rel).mkdir(parents=True, exist_ok=True)
            for name in files:
                (folder / rel / name).symlink_to(Path(root) / name)
    return folder


def folders(private: Path) -> dict[str, Path]:
    """Where one graded run keeps what: ``run`` (the only folder the run may write: its working copy ``work``, its
    cache, settings, ``/dev/shm``, the notebook and what the executing process writes back) and ``results`` (the
    recorder's file, outside ``run``: in the sandbox it is a mount of its own, which the run can write to but not
    replace, move or remove)."""
    run = private / "run"
    return {"run": run, "work": run / "work", "results": private / "results.jsonl"}


def run(
    nb,
    private: Path,
    workdir: Path,
    timeout: int,
    cell_timeout: int,
    box: Box | None = None,
    hidden: list[Path] = (),
    threads: int | None = None,
    stop=None,
) -> dict:
    """Execute the graded notebook ``nb`` in a process of its own (its kernel in ``workdir``), in the sandbox when
    ``box`` isolates (the reference run, ``box`` None, runs only the book's code); what it recorded: ``recorded``
    (by exercise), ``figures`` (the snapshot before the first answer cell), ``failed`` (cell index: error),
    ``killed`` (why the whole run was stopped, or None) and ``executed`` (the executed notebook, or None).

    Everything read back is what the run could have written, so it is read with the bounds of
    :mod:`jtc_utils.book.classroom.intake`: a file that is not a regular file, too large, too deep or not JSON is
    never waited on and never fatal; it becomes this run's ``killed`` reason."""
    import nbformat

    where = folders(private)
    own, results = where["run"], where["results"]
    own.mkdir(parents=True, exist_ok=True)
    results.touch()
    errors, notebook, executed = own / "errors.json", own / "graded.ipynb", own / "executed.ipynb"
    atomic_write_text(notebook, nbformat.writes(nb))
    cache = own_cache(own / "cache") if box is not None else CACHE_DIR
    for sub in ("mpl", "shm"):
        (own / sub).mkdir(exist_ok=True)  # matplotlib's settings folder; the run's /dev/shm, in its disk share
    env = _child_env(own, workdir, cache, threads)
    argv = [
        sys.executable,
        "-m",
        "jtc_utils.book.classroom.grading_run",
        str(notebook),
        str(executed),
        str(errors),
        str(cell_timeout),
        str(workdir),
    ]
    isolated = box is not None and box.isolated
    fence = None
    if isolated:
        fence = sandbox.TaskFence(sandbox.TASKS)
        env.update(fence.env)
        argv = sandbox.command(
            argv,
            readonly=[*RUN_READS, CACHE_DIR],
            hidden=list(hidden),
            binds=[(own, own), (results, results), (own / "shm", Path("/dev/shm"))],
            env=env,
            cwd=workdir,
            tmp_bytes=TMP_BYTES,
        )
    # one file at most half the disk share: a single growing file meets its limit (EFBIG) before the watch
    limits = sandbox.limiter(
        box.memory_bytes if box is not None else None, box.disk_bytes // 2 if box is not None else None, fence
    )
    log = private.parent / f"{private.name}.log"  # beside the run's folder: what it prints is not its to rewrite
    killed = None
    try:
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                argv,
                cwd=workdir,
                env={"PATH": "/usr/bin:/bin"} if isolated else env,
                start_new_session=True,
                stdout=out,
                stderr=subprocess.STDOUT,
                preexec_fn=limits,
            )
            try:
                killed = _watch(proc, private, timeout, box, stop)
            except BaseException:  # Ctrl-C: the submission's process group (and its sandbox) goes with the grader
                os.killpg(proc.pid, signal.SIGKILL)
                raise
    finally:
        if fence is not None:
            fence.close()
    if killed is None and proc.returncode != 0:
        tail = log.read_bytes()[-2000:].decode(errors="replace").strip().splitlines()[-1:]
        how = f"killed by signal {-proc.returncode}" if proc.returncode < 0 else f"exit status {proc.returncode}"
        killed = f"the notebook's run ended before it finished ({how})" + (f": {tail[0]}" if tail else "")
    log.unlink(missing_ok=True)
    failed, spoiled = {}, []
    if os.path.lexists(errors):
        try:
            got = intake.read_json(errors)
            if not isinstance(got, dict):
                raise intake.Refused("not a table of cells")
            failed = {int(k): str(v)[:2000] for k, v in got.items() if str(k).lstrip("-").isdigit()}
        except intake.Refused as e:
            spoiled.append(f"its record of the cells' errors ({e})")
    recorded, figures = {}, None
    try:
        lines = intake.jsonl(results)
    except intake.Refused as e:
        lines = []
        spoiled.append(f"its recorded answers ({e})")
    for rec in lines:
        if not isinstance(rec, dict):
            continue
        if "figures" in rec and figures is None:  # the first snapshot, taken before any answer ran
            figures = rec["figures"] if isinstance(rec["figures"], dict) else {}
        elif isinstance(rec.get("exercise"), str):
            recorded.setdefault(rec["exercise"], rec)
    if spoiled and killed is None:
        killed = "the run spoiled " + " and ".join(spoiled)
    return {
        "recorded": recorded,
        "figures": figures or {},
        "failed": failed,
        "killed": killed,
        "executed": executed if os.path.lexists(executed) else None,
    }


def _watch(proc, private: Path, timeout: int, box: Box | None, stop=None) -> str | None:
    """Wait for ``proc``; stop it (its whole process group, and with it the sandbox) when it runs past ``timeout``,
    when ``stop`` (a :class:`threading.Event`) is set, or, for a submission, when it writes more than its share of
    the disk. Returns why it was stopped, or None."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            proc.wait(timeout=1.0)
            return None
        except subprocess.TimeoutExpired:
            pass
        why = None
        if stop is not None and stop.is_set():
            why = "grading was interrupted"
        elif time.monotonic() > deadline:
            why = f"the notebook ran past its time limit ({timeout} s) and was stopped"
        elif box is not None and sandbox.folder_size(private) > box.disk_bytes:
            why = f"the notebook wrote more than {box.disk_bytes / GB:g} GB and was stopped"
        if why:
            os.killpg(proc.pid, signal.SIGKILL)  # bwrap's namespace goes with it; unsandboxed, the kernel exits
            proc.wait()  # with its parent (ipykernel's parent poller)
            return why


if __name__ == "__main__":  # the process of one graded run: notebook, executed, errors, cell timeout, workdir
    _nb, _executed, _errors, _cell_timeout, _workdir = sys.argv[1:]
    _execute(Path(_nb), Path(_executed), Path(_errors), int(_cell_timeout), Path(_workdir))
