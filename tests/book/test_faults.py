"""Fault injection: each way a run can go wrong is reproduced on a temporary copy, and each must end in a clear
error naming the problem and the fix, with nothing committed changed, and a re-run that completes as before.

Chapter faults run small notebooks of their own in a temporary ``notebooks/`` + ``book/`` pair (the runner's
folders are pointed there), so they execute in seconds; model faults damage a temporary copy of a zoo model or a
small random model; hub faults run against a server on 127.0.0.1 that accepts connections and never answers, and
against a name that cannot resolve.
"""

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import nbformat
import pytest
from helpers import save_random_model

from jtc_utils.book.build import runner, staleness
from jtc_utils.core.models import catalogue, models
from jtc_utils.core.infra import paths
from jtc_utils.core.data import profiles
from jtc_utils.core.analysis import readout
from jtc_utils.core.analysis.experiment import Experiment
from jtc_utils.jtc import top_tokens
from jtc_utils.training import zoo
from helpers import point_book_at

ROOT = Path(__file__).resolve().parents[2]
HEADER = '# %% tags=["parameters"]\nprofile = "tiny"\n\n'


def _snapshot(folder: Path) -> dict:
    """Every file under ``folder`` (the failed-copy and staging folders aside) with its contents."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "_failed" not in p.parts and ".staging" not in str(p)
    }


@pytest.fixture
def book(tmp_path, monkeypatch):
    """A temporary notebooks/ and book/ for the runner, with one committed chapter ``ch`` whose page and data are
    consistent, as `make book` leaves them."""
    nb_dir, book_dir = tmp_path / "notebooks", tmp_path / "book"
    nb_dir.mkdir()
    point_book_at(monkeypatch, "NOTEBOOKS_DIR", nb_dir)
    point_book_at(monkeypatch, "BOOK_DIR", book_dir)
    point_book_at(monkeypatch, "notebook_names", lambda: sorted(p.stem for p in nb_dir.glob("*.py")))

    def write(body: str, name: str = "ch"):
        (nb_dir / f"{name}.py").write_text(HEADER + textwrap.dedent(body))

    write("""\
        # %%
        from jtc_utils.evidence import figdata
        figdata.save("figA", {"value": 1.0}, {"profile": profile})
        figdata.save("figB", {"value": 2.0}, {"profile": profile})
        print("done")
        """)
    runner.execute("ch", timeout=120)
    return {"nb_dir": nb_dir, "book": book_dir, "write": write}


def _consistent(book_dir: Path, name: str = "ch") -> bool:
    rec = staleness.page_record(name)
    return (
        bool(rec)
        and not staleness.data_mismatches(rec)
        and set(rec["data"]) == {p.name for p in (book_dir / "data").glob("*.json")}
    )


# ------------------------------------------------------------------------------------------------------------
# a chapter's page and data are one transaction
def test_a_committed_chapter_records_the_data_it_wrote(book):
    assert _consistent(book["book"])
    assert staleness.up_to_date("ch", "tiny")
    assert json.loads((book["book"] / "data" / "figA.json").read_text())["data"] == {"value": 1.0}


@pytest.mark.slow
def test_a_staging_folder_left_by_a_killed_run_is_removed_by_the_next_run(book):
    """A run killed before its clean-up (SIGKILL, a machine going down) leaves its staging folder; the next run of
    the chapter removes it, and leaves alone one whose process still runs."""
    import subprocess

    dead = subprocess.Popen(["true"])
    dead.wait()
    stale, live = book["book"] / ".staging-ch-killed", book["book"] / ".staging-ch-running"
    for folder, pid in ((stale, dead.pid), (live, os.getppid())):
        folder.mkdir()
        (folder / "figA.json").write_text("{}")
        (folder / runner.STAGING_OWNER).write_text(str(pid))
    old_format = book["book"] / ".staging-ch-older"  # written before staging folders named their owner
    old_format.mkdir()
    runner.execute("ch", timeout=120)
    assert not stale.exists() and not old_format.exists() and live.exists()
    assert sorted(book["book"].glob(".staging-*")) == [live]
    assert _consistent(book["book"])


@pytest.mark.slow
def test_failure_after_a_figure_leaves_page_and_data_untouched(book):
    before = _snapshot(book["book"])
    book["write"]("""\
        # %%
        from jtc_utils.evidence import figdata
        figdata.save("figA", {"value": 99.0}, {"profile": profile})

        # %%
        raise ValueError("boom after the first figure")
        """)
    with pytest.raises(runner.NotebookFailed) as e:
        runner.execute("ch", timeout=120)
    msg = str(e.value)
    assert "notebook ch failed at cell 3 of 3 (notebooks/ch.py, line 8)" in msg
    assert "ValueError: boom after the first figure" in msg and "page and data are unchanged" in msg
    assert (book["book"] / "_failed" / "ch.ipynb").exists()
    assert _snapshot(book["book"]) == before  # figA.json still holds 1.0
    assert not list(book["book"].glob(".staging-*"))
    book["write"]("""\
        # %%
        from jtc_utils.evidence import figdata
        figdata.save("figA", {"value": 1.0}, {"profile": profile})
        figdata.save("figB", {"value": 2.0}, {"profile": profile})
        print("done")
        """)
    runner.execute("ch", timeout=120)  # the re-run completes with the same result
    assert _snapshot(book["book"]) == before
    assert not (book["book"] / "_failed" / "ch.ipynb").exists()


@pytest.mark.slow
def test_a_chapter_reads_its_own_new_numbers_while_they_wait_in_staging(book):
    """A chapter's exercise checks and verdicts read figures it has just saved: during its execution those are in
    the staging folder, not book/data, and reading book/data would give the previous execution's numbers."""
    book["write"]("""\
        # %%
        from jtc_utils.evidence import figdata
        figdata.save("figA", {"value": 5.0}, {"profile": profile})
        print("read back", figdata.load("figA")["data"]["value"], figdata.exists("figA"))
        """)
    runner.execute("ch", timeout=120)
    page = json.loads((book["book"] / "ch.ipynb").read_text())
    printed = "".join("".join(o.get("text", "")) for c in page["cells"] for o in c.get("outputs", []))
    assert "read back 5.0 True" in printed
    assert json.loads((book["book"] / "data" / "figA.json").read_text())["data"] == {"value": 5.0}


@pytest.mark.slow
def test_data_rewritten_outside_the_runner_makes_the_page_stale_and_is_detected(book):
    """An interactive run (or one with other parameters) writes book/data without the page: the runner no longer
    calls the page up to date, and the mismatch is named."""
    f = book["book"] / "data" / "figB.json"
    f.write_text(f.read_text().replace("2.0", "3.0"))
    assert not staleness.up_to_date("ch", "tiny")
    assert staleness.data_mismatches(staleness.page_record("ch")) == ["figB.json differs from the page"]
    f.unlink()
    assert staleness.data_mismatches(staleness.page_record("ch")) == ["figB.json is missing"]
    runner.execute("ch", timeout=120)
    assert staleness.up_to_date("ch", "tiny") and _consistent(book["book"])


@pytest.mark.slow
def test_kernel_death_is_reported_like_a_cell_error(book):
    before = _snapshot(book["book"])
    book["write"]("""\
        # %%
        from jtc_utils.evidence import figdata
        figdata.save("figA", {"value": 99.0}, {"profile": profile})

        # %%
        import os, signal
        os.kill(os.getpid(), signal.SIGKILL)  # what the out-of-memory killer does
        """)
    with pytest.raises(runner.NotebookFailed) as e:
        runner.execute("ch", timeout=120)
    msg = str(e.value)
    assert "notebook ch failed at cell 3 of 3 (notebooks/ch.py, line 8)" in msg
    assert "the kernel died" in msg and "fewer samples" in msg
    failed = book["book"] / "_failed" / "ch.ipynb"
    assert failed.exists() and "kernel died" in json.dumps(nbformat.read(failed, as_version=4).cells[-1].outputs)
    assert _snapshot(book["book"]) == before


@pytest.mark.slow
def test_cell_timeout_is_reported_like_a_cell_error(book):
    before = _snapshot(book["book"])
    book["write"]("""\
        # %%
        x = 1

        # %%
        import time
        time.sleep(60)
        """)
    with pytest.raises(runner.NotebookFailed) as e:
        runner.execute("ch", timeout=3)
    # the cell was stopped at its timeout, by the executor's own clock for that cell (not the kernel's start)
    failed = nbformat.read(book["book"] / "_failed" / "ch.ipynb", as_version=4)
    assert 3 <= failed.cells[-1].metadata["papermill"]["duration"] < 3 + 10  # the cell sleeps 60 s
    msg = str(e.value)
    assert "failed at cell 3 of 3 (notebooks/ch.py, line 7)" in msg and "3 s per-cell timeout" in msg
    assert "--timeout" in msg and (book["book"] / "_failed" / "ch.ipynb").exists()
    assert _snapshot(book["book"]) == before


@pytest.mark.slow
def test_an_interrupted_runner_changes_nothing(book):
    """The runner killed (Ctrl-C, kill -9) after a chapter wrote its first figure: book/data is untouched."""
    before = _snapshot(book["book"])
    book["write"]("""\
        # %%
        from jtc_utils.evidence import figdata
        figdata.save("figA", {"value": 99.0}, {"profile": profile})

        # %%
        import time
        time.sleep(120)
        """)
    # every module of the runner that holds the book's folders points at the test's (see helpers.point_book_at)
    code = (
        f"from pathlib import Path; from jtc_utils.book.build import runner, staleness\n"
        f"for m in (runner, staleness):\n"
        f"    m.NOTEBOOKS_DIR = Path({str(book['nb_dir'])!r}); m.BOOK_DIR = Path({str(book['book'])!r})\n"
        f"runner.notebook_names = lambda: ['ch']\n"
        f"runner.main(['--only', 'ch', '--no-build'])"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.time() + 90
    while not list(book["book"].glob(".staging-ch-*/figA.json")) and time.time() < deadline:
        time.sleep(0.5)
    assert list(book["book"].glob(".staging-ch-*/figA.json")), "the chapter never wrote its staged figure"
    os.killpg(proc.pid, 9)
    proc.wait()
    assert _snapshot(book["book"]) == before


def test_committed_pages_and_data_agree():
    """Every page of the book records the SHA-256 of each book/data file it wrote, and every data file belongs to a
    page (a figure drawn in two chapters is recorded by both, with the same digest): a page and its numbers cannot
    drift apart unnoticed."""
    owners = {}
    for page in sorted(paths.BOOK_DIR.glob("*.ipynb")):
        rec = nbformat.read(page, as_version=4).metadata.get("jtc", {})
        assert "data" in rec, f"{page.name} records no data fingerprints: re-run `make book`"
        assert staleness.data_mismatches(rec) == [], f"{page.name} and book/data disagree: re-run `make book`"
        for f in rec["data"]:
            owners.setdefault(f, []).append(page.stem)
    files = {p.name for p in paths.DATA_DIR.glob("*.json")}
    assert files == set(owners), f"data files without a page: {sorted(files - set(owners))}"


# ------------------------------------------------------------------------------------------------------------
# the runner's command line
def test_chapter_names_are_all_checked_before_anything_runs(monkeypatch, capsys):
    ran = []
    point_book_at(monkeypatch, "execute", lambda *a, **k: ran.append((a, k)) or 0.0)
    for bad in (["../tests/conftest"], ["sec3_linear_shortcuts", "no_such_chapter"], ["/etc/passwd"]):
        with pytest.raises(SystemExit, match="unknown chapter.*nothing outside that folder.*sec3_linear_shortcuts"):
            runner.main(["--only", *bad, "--no-build"])
    assert ran == []
    runner.main(["--only", "notebooks/sec3_linear_shortcuts.py", "--no-build"])  # a path inside is fine
    assert ran == [(("sec3_linear_shortcuts",), {"profile": "tiny", "timeout": runner.CELL_TIMEOUT, "device": None})]


def test_contradictory_runner_flags_are_refused(capsys):
    for argv in (["--build-only", "--no-build"], ["--build-only", "--force"], ["--timeout", "0"]):
        with pytest.raises(SystemExit) as e:
            runner.main(argv)
        assert e.value.code == 2
    err = capsys.readouterr().err
    assert "not allowed with argument" in err and "executes nothing" in err and "positive number" in err


def _read_only_checkout(tmp_path) -> Path:
    """A copy of the repository's book sources, to be bind-mounted read-only."""
    repo = tmp_path / "repo"
    shutil.copytree(
        ROOT,
        repo,
        ignore=shutil.ignore_patterns(".venv", ".cache", "_build", "_failed", ".git", "zoo", "*.ipynb_checkpoints"),
    )
    return repo


def test_a_read_only_checkout_says_where_to_point_the_output(tmp_path):
    if shutil.which("unshare") is None:
        pytest.skip("no unshare: cannot make a read-only mount here")
    repo = _read_only_checkout(tmp_path)
    html = tmp_path / "html"
    script = (
        f"mount --bind -o ro {repo} {repo} && cd {repo} && "
        f"{{ {sys.executable} -m jtc_utils.book.build.runner --only sec3_linear_shortcuts --no-build; "
        "echo rc=$?; "
        f"{sys.executable} -m jtc_utils.book.build.runner --build-only; echo rc=$?; }}"
    )
    env = {**os.environ, "PYTHONPATH": str(repo), "JTC_CACHE": str(tmp_path / "cache")}
    r = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, env=env, timeout=300)
    if "mount" in r.stderr and "rc=" not in r.stdout:
        pytest.skip(f"read-only bind mounts are not allowed here: {r.stderr.strip()[:200]}")
    out = r.stdout + r.stderr
    assert out.count("rc=1") == 2, out
    assert "cannot write the pages under" in out and "cannot write the HTML under" in out
    assert out.count("--build-only --html-dir") == 2
    assert not html.exists()


# ------------------------------------------------------------------------------------------------------------
# models: identity is all of their files; damaged files are refused
@pytest.fixture
def zoo_copy(tmp_path, monkeypatch):
    """A temporary zoo holding tiny-gpt2 and tiny-bert-base with their checksums."""
    z = tmp_path / "zoo"
    for name in ("tiny-gpt2", "tiny-bert-base"):
        shutil.copytree(paths.ZOO_DIR / name, z / name)
    monkeypatch.setattr(catalogue, "ZOO_DIR", z)
    catalogue.write_manifest()
    return z


@pytest.mark.parametrize(
    "damage",
    [
        "delete tokenizer.json",
        "edit n_layer",
        "flip 64 weight bytes",
        "truncate weights",
        "delete weights",
        "add a file",
    ],
)
def test_a_damaged_zoo_model_is_refused_with_the_fix(zoo_copy, damage):
    name = "tiny-gpt2" if damage != "delete tokenizer.json" else "tiny-bert-base"
    folder = zoo_copy / name
    original = _snapshot(folder)
    w = folder / "model.safetensors"
    if damage == "delete tokenizer.json":
        (folder / "tokenizer.json").unlink()
        expect = "tokenizer.json is missing"
    elif damage == "edit n_layer":
        cfg = json.loads((folder / "config.json").read_text())
        cfg["n_layer"] = 4
        (folder / "config.json").write_text(json.dumps(cfg))
        expect = "config.json has changed"
    elif damage == "flip 64 weight bytes":
        raw = bytearray(w.read_bytes())
        for i in range(64):
            raw[len(raw) // 2 + i] ^= 0x5A
        w.write_bytes(bytes(raw))
        expect = "model.safetensors has changed"
    elif damage == "truncate weights":
        w.write_bytes(w.read_bytes()[:-1000])
        expect = "model.safetensors has changed"
    elif damage == "delete weights":
        w.unlink()
        expect = "model.safetensors is missing"
    else:
        (folder / "extra.bin").write_bytes(b"x")
        expect = "extra.bin is not in the manifest"
    with pytest.raises(models.ModelUnavailableError) as e:
        models.load(name)
    msg = str(e.value)
    assert expect in msg and f"git checkout -- zoo/{name}" in msg and "make zoo" in msg
    assert e.value.__cause__ is None
    # restored as the message says, it loads again
    shutil.rmtree(folder)
    folder.mkdir()
    for rel, data in original.items():
        (folder / rel).write_bytes(data)
    model, tok = models.load(name)
    assert len(tok) == model.config.vocab_size


@pytest.mark.parametrize("family", ["gpt2", "bert"])
def test_a_local_model_with_a_missing_tokenizer_file_is_refused(tmp_path, family):
    folder = save_random_model(family, tmp_path / "m")
    models.load(str(folder))
    (folder / "tokenizer.json").unlink()
    with pytest.raises(
        models.ModelUnavailableError,
        match=r"its tokenizer has \d+ tokens but the model's "
        r"vocabulary has 4096.*save_pretrained",
    ):
        models.load(str(folder))


@pytest.mark.parametrize(
    "change, expect",
    [
        ({"n_layer": 2}, "unexpected tensor"),
        ({"n_layer": 5}, "missing tensor"),
        ({"n_embd": 64}, "shapes of its weights"),
    ],
)
def test_a_local_model_whose_config_disagrees_with_its_weights_is_refused(tmp_path, change, expect):
    folder = save_random_model("gpt2", tmp_path / "m")
    cfg = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**cfg, **change}))
    with pytest.raises(models.ModelUnavailableError, match=f"inconsistent.*{expect}"):
        models.load(str(folder))


def test_model_identity_covers_config_and_tokenizer(tmp_path, zoo_copy):
    """What the caches are keyed on changes with any file of the model, not only the weights."""
    folder = save_random_model("gpt2", tmp_path / "m")
    ids = [models.adapter(str(folder)).identity]
    cfg = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**cfg, "layer_norm_epsilon": 1e-3}))  # loads, computes otherwise
    ids.append(models.adapter(str(folder)).identity)
    tj = json.loads((folder / "tokenizer.json").read_text())
    vocab = tj["model"]["vocab"]  # swap two tokens' ids: same size, other tokenization
    a, b = list(vocab)[300:302]
    vocab[a], vocab[b] = vocab[b], vocab[a]
    (folder / "tokenizer.json").write_text(json.dumps(tj))
    ids.append(models.adapter(str(folder)).identity)
    assert len(set(ids)) == 3
    # zoo models: the identity is the checksum manifest's record of every file
    a = models.adapter("tiny-gpt2").identity
    (zoo_copy / "tiny-gpt2" / "tokenizer_config.json").write_text("{}")
    catalogue.write_manifest()
    assert catalogue.manifest_digest("tiny-gpt2") != a.removeprefix("zoo:")


def test_page_fingerprint_covers_every_zoo_file(tmp_path, monkeypatch):
    z = tmp_path / "zoo"
    shutil.copytree(paths.ZOO_DIR / "tiny-gpt2", z / "tiny-gpt2")
    point_book_at(monkeypatch, "ZOO_DIR", z)
    before = staleness.inputs_fingerprint("claims_verdicts", "tiny")
    for f in ("config.json", "tokenizer.json"):
        p = z / "tiny-gpt2" / f
        old = p.read_bytes()
        p.write_bytes(old + b" ")
        assert staleness.inputs_fingerprint("claims_verdicts", "tiny") != before, f
        p.write_bytes(old)
    assert staleness.inputs_fingerprint("claims_verdicts", "tiny") == before


def test_a_missing_local_folder_is_not_reported_as_a_hub_id(tmp_path):
    for name in (str(tmp_path / "nowhere"), "./nowhere/model", "a/b/c"):
        with pytest.raises(models.ModelUnavailableError, match="no model folder at .*nothing is there"):
            models.load(name)
    (tmp_path / "empty").mkdir()
    with pytest.raises(models.ModelUnavailableError, match="no config.json"):
        models.load(str(tmp_path / "empty"))


def test_a_checkpoint_that_would_run_pickled_code_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(zoo, "ZOO_DIR", tmp_path)
    marker = tmp_path / "pwned"
    work = tmp_path / "_work" / "evil"
    work.mkdir(parents=True)

    class Evil:
        def __reduce__(self):
            return (Path.touch, (marker,))

    import torch

    torch.save({"spec": Evil()}, work / "ckpt.pt")
    from jtc_utils.embedded import corpus

    texts = [s.text for s in corpus.training_sentences(n=50)]
    with pytest.raises(RuntimeError, match="cannot be loaded safely.*delete it"):
        zoo.train_model(
            catalogue.Spec("evil", "gpt2", 2, 16, 2, 4 * 8 * 40, "test", batch=8), texts=texts, progress=False
        )
    assert not marker.exists()


# ------------------------------------------------------------------------------------------------------------
# the hub: bounded waiting. Each bound is on the wait itself, by the probe's own clock (ModelUnavailableError.waited_s),
# not on the child process, whose start and imports of torch and transformers a busy machine can stretch at will.
SLACK = 3  # seconds beyond the probe's timeout: its join's own second and a thread's wake-up on a loaded machine


def _load_gpt2_with(endpoint: str, home: Path, timeout: float, setup: str = "") -> subprocess.CompletedProcess:
    code = (
        f"from jtc_utils.core.models import models\nmodels.HUB_TIMEOUT = {timeout}\n{setup}\ntry:\n"
        "    models.load('gpt2')\nexcept models.ModelUnavailableError as e:\n    print('ERROR', e.waited_s, e)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_ENDPOINT=endpoint, HF_HOME=str(home), PYTHONWARNINGS="ignore")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


def _waited_within(r: subprocess.CompletedProcess, bound: float) -> float:
    assert r.stdout.startswith("ERROR"), r.stdout + r.stderr[-2000:]
    waited = float(r.stdout.split()[1])
    assert waited < bound, f"the hub probe waited {waited} s, over its bound of {bound} s"
    return waited


def _silent_hub(tmp_path, timeout: float, setup: str = "") -> subprocess.CompletedProcess:
    with socket.socket() as srv:  # the kernel completes the handshake; nobody ever reads or answers
        srv.bind(("127.0.0.1", 0))
        srv.listen(16)
        return _load_gpt2_with(f"http://127.0.0.1:{srv.getsockname()[1]}", tmp_path, timeout, setup)


@pytest.mark.slow
def test_a_hub_that_accepts_and_never_answers_fails_within_the_bound(tmp_path):
    r = _silent_hub(tmp_path, models.HUB_TIMEOUT)
    assert _waited_within(r, models.HUB_TIMEOUT + SLACK) >= models.HUB_TIMEOUT  # it waited for its timeout, no less
    assert "could not be reached" in r.stdout and "HF_HOME" in r.stdout


@pytest.mark.slow
def test_the_bound_fails_a_probe_that_waits_longer(tmp_path):
    """The same check on a probe that waits 2 x SLACK seconds past its timeout (its request and its thread's join
    both given that much longer): it must fail."""
    late = (
        "import threading, urllib.request\n_join, _open = threading.Thread.join, urllib.request.urlopen\n"
        f"threading.Thread.join = lambda self, timeout=None: _join(self, timeout and timeout + {2 * SLACK})\n"
        f"urllib.request.urlopen = lambda r, timeout=None: _open(r, timeout=timeout and timeout + {2 * SLACK})"
    )
    r = _silent_hub(tmp_path, 2, late)
    with pytest.raises(AssertionError, match="over its bound"):
        _waited_within(r, 2 + SLACK)


def test_no_name_resolution_fails_at_once_without_retries(tmp_path):
    r = _load_gpt2_with("http://jtc-book-no-such-host.invalid", tmp_path, models.HUB_TIMEOUT)
    _waited_within(r, models.HUB_TIMEOUT + SLACK)
    assert "could not be reached" in r.stdout and "Retry" not in r.stdout + r.stderr


# ------------------------------------------------------------------------------------------------------------
# smaller defects
def test_written_files_keep_the_users_umask(tmp_path, monkeypatch):
    from jtc_utils.core.infra import cache

    monkeypatch.setattr(cache, "CACHE_DIR", tmp_path)
    for mask, mode in ((0o022, 0o644), (0o002, 0o664), (0o077, 0o600)):
        old = os.umask(mask)
        try:
            paths.atomic_write_text(tmp_path / f"t{mask}.json", "{}")
            cache.save(tmp_path / f"c{mask}.npz", {"x": __import__("numpy").zeros(2)})
        finally:
            os.umask(old)
        for f in (tmp_path / f"t{mask}.json", tmp_path / f"c{mask}.npz"):
            assert stat.S_IMODE(f.stat().st_mode) == mode, (f, oct(mask))


def test_numbers_are_checked_not_truncated():
    with pytest.raises(ValueError, match="seed must be at least 0, got -1"):
        Experiment("tiny-gpt2", "news", n_train=20, n_val=20, seed=-1)
    with pytest.raises(TypeError, match="seed must be a whole number"):
        Experiment("tiny-gpt2", "news", n_train=20, n_val=20, seed=1.5)
    exp = Experiment("tiny-gpt2", "news", n_train=60, n_val=20)
    with pytest.raises(TypeError, match=r"k must be a whole number, got 2.7"):
        readout.check_ks(exp.adapter, (1, 2.7))
    with pytest.raises(TypeError, match=r"k must be a whole number, got 2.7"):
        top_tokens.top_tokens(exp, "The river flows", k=2.7)
    with pytest.raises(TypeError, match=r"layer .* must be a whole number, got 1.7"):
        top_tokens.top_tokens(exp, "The river flows", layers=[1.7])
    with pytest.raises(ValueError, match=r"layer .* must be between 0 and 6, got 9"):
        top_tokens.top_tokens(exp, "The river flows", layers=[9])
    assert readout.check_ks(exp.adapter, [1, 5]) == (1, 5)


def test_an_unknown_domain_role_is_named():
    with pytest.raises(ValueError, match="unknown domain role 'third'; choose 'main' .* or 'second'"):
        profiles.get("tiny").domain("third")


def test_the_readme_documents_the_environment_and_read_only_builds():
    readme = (ROOT / "README.md").read_text()
    for needle in ("JTC_CACHE", "JTC_DATA_OUT", "JTC_PROGRESS", "--html-dir", "read-only"):
        assert needle in readme, needle


@pytest.mark.slow
def test_a_failing_cell_is_named_by_its_line_even_after_a_header(book):
    """A jupytext header followed by blank lines makes an empty first cell without a marker: the line reported
    is still the failing cell's marker."""
    src = (
        "# ---\n# jupyter:\n#   jupytext:\n#     formats: ipynb,py:percent\n# ---\n\n\n"
        + HEADER
        + "# %%\nx = 1\n\n# %%\nraise RuntimeError('here')\n"
    )
    (book["nb_dir"] / "ch.py").write_text(src)
    line = src.splitlines().index("raise RuntimeError('here')")  # 0-based index of the code = 1-based marker line
    with pytest.raises(runner.NotebookFailed, match=rf"notebooks/ch.py, line {line}\) \(RuntimeError: here\)"):
        runner.execute("ch", timeout=120)
