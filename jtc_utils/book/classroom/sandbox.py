"""A sandbox for code the book did not write (a student's submission): bubblewrap (``bwrap``), with new user,
process, network, IPC and host-name namespaces and no capabilities. Each run sees the project, Python and the project
cache read-only; the solutions, executed pages, tests, git, other submissions and grades not at all; its own working
copy, cache and ``/tmp``; no network, no process outside its own and a clean environment (:func:`command`). Nothing
outlives it; address space and file size are limited by ``setrlimit``, time and what it writes by the grader.
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
    the system, ``/tmp``, the read-only folders, the hidden ones, ``/dev`` and ``/proc``, the writable binds."""
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
    for k, v in sorted(env.items()):
        args += ["--setenv", k, v]
    return args + ["--chdir", str(cwd), *argv]


def limiter(memory_bytes: int | None, file_bytes: int | None):
    """A ``preexec_fn`` that sets the run's limits on address space and on the size of any file it writes."""

    def apply():
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
