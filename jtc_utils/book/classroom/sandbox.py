"""A sandbox for code the book did not write (a student's submission): bubblewrap (``bwrap``), with new user,
process, network, IPC and host-name namespaces and no capabilities. Each run sees the package, the zoo, the figures'
numbers, Python and the project cache read-only; nothing else of the project; its own working copy, cache, ``/tmp``
and ``/dev/shm``; no network, no process outside its own and a clean environment (:func:`command`). Nothing
outlives it (nor the grader); address space and file size are limited by ``setrlimit``, processes by a
:class:`TaskFence`, time and what it writes by the grader; its root and ``/dev`` are read-only.
"""

from __future__ import annotations

import functools
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

NAME = "bubblewrap"
INSTALL = (
    "no sandbox for the submissions: install bubblewrap (apt-get install bubblewrap), or pass --no-sandbox "
    "to run them unisolated, accepting that a submission can then change the book, the cache and other "
    "students' grades"
)
# the machine's programs and libraries, shown read-only (a top-level symbolic link, as on merged-/usr systems, is
# recreated as a link)
SYSTEM = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc")
SECRETS = ("/etc/shadow", "/etc/gshadow")  # readable by the sandbox's user otherwise (it maps to the grader's)
CPU_INFO = "/sys/devices/system/cpu"  # how many cores (torch and OpenMP read it)


def tool() -> str | None:
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=1)
def available() -> str | None:
    """:data:`NAME` where ``bwrap`` is installed and can make its namespaces on this machine, else None."""
    bwrap = tool()
    if bwrap is None:
        return None
    try:
        probe = subprocess.run(
            [
                bwrap,
                "--unshare-all",
                "--die-with-parent",
                "--cap-drop",
                "ALL",
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "true",
            ],
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return NAME if probe.returncode == 0 else None


def _under(path: Path, roots) -> bool:
    return any(path == r or r in path.parents for r in roots)


def command(
    argv: list[str],
    *,
    readonly: list[Path],
    hidden: list[Path],
    binds: list[tuple[Path, Path]],
    env: dict[str, str],
    cwd: Path,
    tmp_bytes: int,
) -> list[str]:
    """The ``bwrap`` command line that runs ``argv`` in the sandbox: ``readonly`` folders shown as they are but
    unwritable (with the machine's programs and the running Python), ``hidden`` folders (inside those) shown empty,
    ``binds`` (outside path, inside path) writable, an empty ``/tmp`` of at most ``tmp_bytes`` in memory, ``env``
    the whole environment, ``cwd`` the working folder. Mounts are made in this order, each over the ones before:
    the system, ``/tmp``, the read-only folders, the hidden ones, ``/dev`` and ``/proc``, the writable binds (a
    file or a folder each; ``/dev/shm`` among them, so that shared memory is written in the run's disk share);
    then ``/dev`` and the sandbox's root are made read-only."""
    args = [tool() or "bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv"]
    for top in SYSTEM:
        p = Path("/") / top
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            args += ["--ro-bind", str(p), str(p)]
    args += [a for s in SECRETS if Path(s).exists() for a in ("--ro-bind", "/dev/null", s)]
    args += ["--size", str(tmp_bytes), "--tmpfs", "/tmp"]
    shown = [Path(os.path.realpath(p)) for p in (sys.base_prefix, sys.prefix, *readonly)]
    for p in sorted(set(shown), key=lambda q: len(q.parts)):  # a folder before the folders inside it
        if not _under(p, [Path("/") / t for t in SYSTEM]) and p.exists():
            args += ["--ro-bind", str(p), str(p)]
    for h in sorted({Path(os.path.realpath(p)) for p in hidden}):
        if _under(h, shown) and h.exists():
            args += ["--tmpfs", str(h)]
    args += ["--dev", "/dev", "--proc", "/proc", "--ro-bind-try", CPU_INFO, CPU_INFO]
    for outside, inside in binds:
        args += ["--bind", str(outside), str(inside)]
    # nothing else is writable: the sandbox's own root and /dev are in memory and would take any amount
    args += ["--remount-ro", "/dev", "--remount-ro", "/"]
    for k, v in sorted(env.items()):
        args += ["--setenv", k, v]
    return args + ["--chdir", str(cwd), *argv]


TASKS = 256  # processes and threads of one run (a kernel with torch's threads uses a few dozen)
TASKS_VARIABLE = "JTC_GRADE_TASKS"  # where no cgroup can be made: the limit the run sets on itself, inside


class TaskFence:
    """At most ``tasks`` processes and threads in one run. Where the grader may make a cgroup (as root, with the
    pids controller mounted), the run gets a pids cgroup of its own, whose limit binds root too; elsewhere the run
    sets ``RLIMIT_NPROC`` on itself inside the sandbox (:func:`run_limits`), where its new user namespace counts
    only its own processes, which binds any grader but root (root is exempt from that limit: then ``how`` says that
    no limit applies). :meth:`enter` runs in the child before it starts; :meth:`close` removes the cgroup."""

    def __init__(self, tasks: int = TASKS):
        import uuid

        self.tasks, self.group, self.env = int(tasks), None, {}
        for base, ok in (
            (Path("/sys/fs/cgroup/pids"), lambda b: (b / "pids.max").exists() or (b / "cgroup.procs").exists()),
            (Path("/sys/fs/cgroup"), lambda b: "pids" in _read(b / "cgroup.subtree_control").split()),
        ):
            try:
                if base.is_dir() and ok(base) and os.access(base, os.W_OK):
                    group = base / f"jtc-grade-{uuid.uuid4().hex[:12]}"
                    group.mkdir()
                    (group / "pids.max").write_text(str(self.tasks))
                    self.group = group
                    break
            except OSError:
                continue
        if self.group is None:
            self.env = {TASKS_VARIABLE: str(self.tasks)}
        self.how = (
            f"at most {self.tasks} processes (a cgroup)"
            if self.group is not None
            else f"at most {self.tasks} processes (a limit the run sets on itself)"
            if os.geteuid() != 0
            else "no limit on processes (root, and no cgroup could be made)"
        )

    def enter(self) -> None:
        if self.group is not None:
            with open(self.group / "cgroup.procs", "w") as f:
                f.write(str(os.getpid()))

    def close(self) -> None:
        import time

        if self.group is None:
            return
        for _ in range(50):  # the sandbox's processes die with it, within moments
            try:
                self.group.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.1)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def run_limits():
    """In the sandbox, before the run starts its kernel: the process limit a :class:`TaskFence` without a cgroup
    asks for (a function that sets it), or None."""
    tasks = os.environ.get(TASKS_VARIABLE)
    if not tasks:
        return None
    return lambda: resource.setrlimit(resource.RLIMIT_NPROC, (int(tasks), int(tasks)))


def _die_with_parent() -> None:
    """Be killed when the process that started this one dies (Linux's parent-death signal), so that a grader
    killed outright leaves no run behind."""
    import ctypes
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def limiter(memory_bytes: int | None, file_bytes: int | None, fence: TaskFence | None = None):
    """A ``preexec_fn`` that sets the run's limits on address space and on the size of any file it writes, puts it
    in its ``fence``, and ties its life to the grader's."""

    def apply():
        _die_with_parent()
        if fence is not None:
            fence.enter()
        if memory_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        if file_bytes:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))

    return apply


def folder_size(folder: Path) -> int:
    """Bytes in the files under ``folder`` (links not followed; files that vanish while counted are skipped)."""
    total = 0
    for root, dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total
