"""How the page phase starts each page's kernel (a pytest plugin the suite loads with ``-p``).

nbval starts a kernel per page over TCP on ports it draws at random: two workers starting kernels at once, or an
outgoing connection taking a drawn port before the kernel binds it, kill the kernel before it answers ("Kernel died
before replying to kernel_info", CI of stop 85: every cell of one page errored). Here each kernel talks over Unix
sockets named by its own id (no port to share), keeps what it printed to stderr in ``.cache/test-logs/kernels``
instead of discarding it, and a kernel that dies before it answers is started again, at most :data:`ATTEMPTS` times
in all, each death printed with the end of its stderr; a page whose kernel dies every time fails with that text.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

from jtc_utils.core.infra.paths import ROOT

ATTEMPTS = 3
KERNEL_LOGS = ROOT / ".cache" / "test-logs" / "kernels"


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def with_retries(start: Callable[[Path], tuple], attempts: int = ATTEMPTS) -> tuple:
    """``start(stderr_file)`` again while the kernel dies before it answers, at most ``attempts`` times in all."""
    KERNEL_LOGS.mkdir(parents=True, exist_ok=True)
    deaths = []
    for attempt in range(1, attempts + 1):
        stderr = KERNEL_LOGS / f"{uuid.uuid4().hex}.log"
        try:
            return start(stderr)
        except RuntimeError as e:
            deaths.append(f"attempt {attempt}: {e}\n{_tail(stderr)}".rstrip())
            print(f"\na page's kernel did not start ({deaths[-1]}); starting it again", flush=True)
    raise RuntimeError(f"the page's kernel died {attempts} times before it answered:\n" + "\n".join(deaths))


def start_new_kernel(startup_timeout=60, kernel_name="python", **kwargs):
    """nbval's ``start_new_kernel``, over Unix sockets, its stderr kept, started again if it dies before answering."""
    from jupyter_client.manager import KernelManager
    from jupyter_core.paths import jupyter_runtime_dir
    from nbval.kernel import NbvalKernelspecManager

    kwargs.pop("stderr", None)  # nbval sends it to /dev/null: kept in a file instead, for the message above

    def start(stderr_path: Path):
        # its sockets in Jupyter's runtime folder under a name of their own, an absolute path: the kernel runs in
        # the page's folder, and a relative one would name other sockets there than the client's
        sockets = Path(jupyter_runtime_dir()) / f"jtc-kernel-{uuid.uuid4().hex[:12]}"
        sockets.parent.mkdir(parents=True, exist_ok=True)
        km = KernelManager(
            kernel_name=kernel_name, kernel_spec_manager=NbvalKernelspecManager(), transport="ipc", ip=str(sockets)
        )
        with open(stderr_path, "w") as stderr:
            km.start_kernel(stderr=stderr, **kwargs)
        kc = km.client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=startup_timeout)
        except RuntimeError:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
            raise
        stderr_path.unlink(missing_ok=True)  # it answered: nothing to keep
        return km, kc

    return with_retries(start)


def pytest_configure(config):
    import nbval.kernel

    nbval.kernel.start_new_kernel = start_new_kernel
