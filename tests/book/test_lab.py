"""`make lab`: JupyterLab starts offline on the student edition (and, with LAB_DIR=notebooks, opens the book's
py:percent sources as notebooks through jupytext), checked headlessly through the server's REST API."""

import json
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from contextlib import contextmanager

from jtc_utils.book.build import runner
from jtc_utils.core.infra.paths import ROOT
import pytest

pytestmark = [pytest.mark.slow]  # JupyterLab started


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.status, r.read().decode()


@contextmanager
def lab(*make_args):
    port, token = _free_port(), secrets.token_hex(8)
    args = f"--no-browser --ip=127.0.0.1 --port={port} --ServerApp.port_retries=0 --IdentityProvider.token={token}"
    proc = subprocess.Popen(
        ["make", "-s", "lab", f"LAB_ARGS={args}", *make_args],
        cwd=ROOT,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                _get(f"{base}/api/status?token={token}")
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                if proc.poll() is not None or time.monotonic() > deadline:
                    out = proc.stdout.read().decode(errors="replace") if proc.poll() is not None else ""
                    raise AssertionError(f"JupyterLab did not answer on {base}: {out[-2000:]}") from None
                time.sleep(0.5)
        yield lambda path: _get(f"{base}{path}{'&' if '?' in path else '?'}token={token}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def test_make_lab_serves_the_student_edition(tmp_path):
    folder = tmp_path / "student"
    with lab(f"STUDENT_DIR={folder}") as get:
        status, body = get("/api/contents")
        names = {c["name"] for c in json.loads(body)["content"]}
        assert {f"{n}.ipynb" for n in runner.notebook_names()} <= names
        status, page = get("/lab")
        assert status == 200 and "JupyterLab" in page
        kernels = json.loads(get("/api/kernelspecs")[1])
        assert "python3" in kernels["kernelspecs"]
        nb = json.loads(get("/api/contents/sec5_early_exit.ipynb?content=1")[1])
        answers = [c for c in nb["content"]["cells"] if "answer" in c["metadata"].get("tags", [])]
        assert answers and all(c["source"].rstrip().endswith("answer = None") for c in answers)


def test_make_lab_opens_the_books_sources_as_notebooks():
    with lab("LAB_DIR=notebooks") as get:
        status, body = get("/api/contents/sec5_early_exit.py?type=notebook&content=1")
        model = json.loads(body)
        assert model["type"] == "notebook"
        assert any("exercises.check(" in c["source"] for c in model["content"]["cells"])
