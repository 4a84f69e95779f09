"""How the page phase starts a page's kernel (:mod:`jtc_utils.book.build.page_kernels`): over Unix sockets, and
started again when it dies before answering, with what it printed in the failure."""

from __future__ import annotations

import json
import sys

import pytest

from jtc_utils.book.build import page_kernels


@pytest.fixture(autouse=True)
def logs(tmp_path, monkeypatch):
    monkeypatch.setattr(page_kernels, "KERNEL_LOGS", tmp_path / "kernels")
    return tmp_path / "kernels"


def test_a_kernel_that_dies_once_is_started_again_and_the_death_is_printed(capsys):
    tries = []

    def start(stderr):
        tries.append(stderr)
        if len(tries) == 1:
            stderr.write_text("zmq.error.ZMQError: Address already in use\n")
            raise RuntimeError("Kernel died before replying to kernel_info")
        return "kernel"

    assert page_kernels.with_retries(start) == "kernel"
    assert len(tries) == 2 and tries[0] != tries[1]
    out = capsys.readouterr().out
    assert "Kernel died before replying" in out and "Address already in use" in out and "starting it again" in out


def test_a_kernel_that_always_dies_fails_after_the_attempts_with_each_ones_stderr():
    tries = []

    def start(stderr):
        tries.append(stderr)
        stderr.write_text(f"death {len(tries)}\n")
        raise RuntimeError("Kernel died before replying to kernel_info")

    with pytest.raises(RuntimeError, match="died 3 times") as e:
        page_kernels.with_retries(start)
    assert len(tries) == page_kernels.ATTEMPTS == 3
    assert all(f"death {i}" in str(e.value) for i in (1, 2, 3))


def test_an_error_other_than_a_death_is_not_retried():
    tries = []

    def start(stderr):
        tries.append(stderr)
        raise ValueError("no such kernel")

    with pytest.raises(ValueError):
        page_kernels.with_retries(start)
    assert len(tries) == 1


@pytest.mark.slow
def test_a_page_kernel_talks_over_unix_sockets_and_runs_code(tmp_path):
    km, kc = page_kernels.start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    try:
        assert km.transport == "ipc"
        reply = kc.execute_interactive("x = 6 * 7", timeout=60)
        assert reply["content"]["status"] == "ok"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


@pytest.mark.slow
def test_a_real_kernel_that_dies_at_start_fails_with_what_it_printed(tmp_path, monkeypatch):
    spec = tmp_path / "jupyter" / "kernels" / "dying"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-c", "import sys; sys.stderr.write('this kernel cannot start'); sys.exit(3)"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "dying", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    with pytest.raises(RuntimeError, match="died 3 times") as e:
        page_kernels.start_new_kernel(startup_timeout=20, kernel_name="dying", cwd=str(tmp_path))
    assert str(e.value).count("this kernel cannot start") == 3
