"""The runner's up-to-date check: a page is re-executed exactly when something it depends on changed."""

import re
import shutil
import sys
from pathlib import Path

import pytest

from jtc_utils.book.build import executed, pages, runner, scheduling, staleness
from helpers import point_book_at


def test_fingerprint_follows_the_source_and_the_profile(tmp_path, monkeypatch):
    names = runner.notebook_names()
    assert names[0] == "embedded_world" and names[-1] == "claims_verdicts"  # table-of-contents order
    nb_dir = tmp_path / "notebooks"
    nb_dir.mkdir()
    shutil.copy(runner.NOTEBOOKS_DIR / "claims_verdicts.py", nb_dir / "claims_verdicts.py")
    point_book_at(monkeypatch, "NOTEBOOKS_DIR", nb_dir)
    before = staleness.inputs_fingerprint("claims_verdicts", "tiny")
    assert before == staleness.inputs_fingerprint("claims_verdicts", "tiny")
    assert before != staleness.inputs_fingerprint("claims_verdicts", "paper")
    (nb_dir / "claims_verdicts.py").write_text((nb_dir / "claims_verdicts.py").read_text() + "\n# edited\n")
    assert before != staleness.inputs_fingerprint("claims_verdicts", "tiny")


def test_a_page_without_a_stored_fingerprint_is_stale(tmp_path, monkeypatch):
    point_book_at(monkeypatch, "BOOK_DIR", tmp_path)
    assert not staleness.up_to_date("claims_verdicts", "tiny")  # no page at all


def test_cleaning_gives_stable_unique_cell_ids():
    import jupytext

    ids = []
    for _ in range(2):  # jupytext gives fresh random ids on every read
        nb = jupytext.read(runner.NOTEBOOKS_DIR / "sec6_submodules.py")
        nb.cells.append(nb.cells[-1].copy())  # a repeated cell still gets its own id
        executed.clean(nb)
        ids.append([c.id for c in nb.cells])
    assert ids[0] == ids[1]
    assert len(set(ids[0])) == len(ids[0])
    import nbformat

    nbformat.validate(nb)


def test_a_page_depends_on_the_modules_it_can_run_and_on_no_other(tmp_path, monkeypatch):
    """The import closure: claims_verdicts imports claims, which imports linear; it never imports the lens
    training or the runner, so editing those must not re-execute it, and editing anything in its closure must. The
    drawing code is in every page's closure (the figure registry holds each figure's drawing beside its computation:
    a page that draws a figure must be re-executed when its drawing changes)."""
    closure = {
        f.relative_to(runner.ROOT).as_posix()
        for f in staleness.package_closure(runner.NOTEBOOKS_DIR / "claims_verdicts.py")
    }
    assert {
        "jtc_utils/jtc/claims.py",
        "jtc_utils/core/analysis/linear.py",
        "jtc_utils/evidence/figdata.py",
        "jtc_utils/__init__.py",
        "jtc_utils/jtc/plots.py",
    } <= closure
    assert not {"jtc_utils/lenses/train.py", "jtc_utils/book/build/runner.py"} & closure
    # the whole closure counts: figures imports experiment, which imports the readout
    deep = {f.name for f in staleness.package_closure(runner.NOTEBOOKS_DIR / "sec4_predictions.py")}
    assert {"readout.py", "submodules.py", "experiment.py", "hidden.py"} <= deep


def test_editing_a_module_stales_exactly_the_pages_that_import_it(tmp_path, monkeypatch):
    root = tmp_path
    pkg = root / "jtc_utils"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from .sub import c\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text("x = 1\n")
    (pkg / "lone.py").write_text("y = 2\n")
    nbs = root / "notebooks"
    nbs.mkdir()
    (nbs / "page.py").write_text("from jtc_utils import a\n")
    (root / "requirements.txt").write_text("")
    zoo = root / "zoo"
    (zoo / "lenses").mkdir(parents=True)
    (zoo / "lenses" / "w.safetensors").write_bytes(b"1")
    for attr, value in (("ROOT", root), ("NOTEBOOKS_DIR", nbs), ("ZOO_DIR", zoo)):
        point_book_at(monkeypatch, attr, value)
    names = {f.relative_to(root).as_posix() for f in staleness.package_closure(nbs / "page.py")}
    assert names == {
        "jtc_utils/__init__.py",
        "jtc_utils/a.py",
        "jtc_utils/b.py",
        "jtc_utils/sub/__init__.py",
        "jtc_utils/sub/c.py",
    }
    before = staleness.inputs_fingerprint("page", "tiny")
    (pkg / "lone.py").write_text("y = 3\n")  # not imported: the page stays up to date
    (zoo / "lenses" / "w.safetensors").write_bytes(b"2")  # trained lenses: only for pages importing the lenses
    assert staleness.inputs_fingerprint("page", "tiny") == before
    (pkg / "sub" / "c.py").write_text("x = 2\n")  # imported three steps away, inside a function body
    assert staleness.inputs_fingerprint("page", "tiny") != before


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="this machine has a GPU")
def test_asking_the_runner_for_an_absent_gpu_fails_before_any_notebook_runs(capsys):
    with pytest.raises(SystemExit):
        runner.main(["--device", "cuda", "--only", "sec3_linear_shortcuts", "--no-build"])
    err = capsys.readouterr().err
    assert "no CUDA GPU" in err and "device='cpu'" in err


def test_every_computing_notebook_takes_the_device_parameter():
    """The notebooks that run models or fits take ``device`` as a parameter and hand it to their chapter, which
    hands it to jtc_utils.core.infra.device."""
    import jupytext

    for name in runner.notebook_names():
        nb = jupytext.read(runner.NOTEBOOKS_DIR / f"{name}.py")
        source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        if name in ("embedded_world", "claims_verdicts"):  # tables and verdicts only, no model runs
            continue
        params = next(c.source for c in nb.cells if "parameters" in c.metadata.get("tags", []))
        assert 'device = "auto"' in params, name
        assert re.search(r"Chapter\([^)]*\bdevice=device\)", source), name


def test_the_report_names_the_slowest_cells_in_order():
    import nbformat

    nb = nbformat.v4.new_notebook()
    for src, dt in (("a = 1", 0.5), ("import torch\nb = 2", 12.0), ("# %% notes", None), ("c = 3", 3.0)):
        cell = nbformat.v4.new_code_cell(src)
        if dt is not None:
            cell.metadata["papermill"] = {"duration": dt}
        nb.cells.append(cell)
    nb.cells.append(nbformat.v4.new_markdown_cell("text"))
    line = executed.slowest_cells(nb, n=2, peak_gb=1.5)
    assert line.index("[1] 12 s `import torch`") < line.index("[3] 3 s `c = 3`")
    assert "a = 1" not in line and "the page's peak memory 1.50 GB" in line and "real model's cells 0 s" in line
    assert "peak memory" not in executed.slowest_cells(nb, n=2)  # where /proc gave nothing to sample
    assert executed.slowest_cells(nb, n=1, name=pages.ABOUT_THE_MODEL).count("real model's cells 16 s") == 1


def test_the_memory_watch_sees_a_childs_memory():
    """A child process that holds 300 MB: the watch's peak is at least that (sampled from /proc)."""
    import subprocess

    if not Path("/proc/self/status").exists():
        pytest.skip("no /proc to sample")
    code = "import time; b = bytearray(300 * 2**20); b[::4096] = b'x' * len(b[::4096]); time.sleep(1.5)"
    with scheduling.MemoryWatch(every_s=0.1) as watch:
        subprocess.run([sys.executable, "-c", code], check=True)
    assert watch.peak_gb >= 0.29


def test_the_real_models_share_counts_the_cells_that_name_its_figures():
    import nbformat

    nb = nbformat.v4.new_notebook()
    for src, dt in (
        ('figure("fig2")', 5.0),
        ('r10 = figure("real_fig10")', 7.0),
        ("exp_real = x", 2.0),
        ("print(real_model_line())", 1.0),
        ("surreal_fig = 3", 4.0),
    ):
        cell = nbformat.v4.new_code_cell(src)
        cell.metadata["papermill"] = {"duration": dt}
        nb.cells.append(cell)
    assert executed.real_seconds(nb, "sec6_submodules") == 10.0
    assert executed.real_seconds(nb, pages.ABOUT_THE_MODEL) == 19.0


def test_a_prose_edit_refreshes_the_page_without_staling_it_and_a_code_edit_stales_it(tmp_path, monkeypatch):
    """Markdown is prose: editing it keeps the page up to date (its code and outputs are what they were) and the
    runner copies the new prose into the stored page; editing a code cell changes the fingerprint."""
    import nbformat

    name = "sec5_early_exit"
    nb_dir, book_dir = tmp_path / "notebooks", tmp_path / "book"
    nb_dir.mkdir()
    book_dir.mkdir()
    shutil.copy(runner.NOTEBOOKS_DIR / f"{name}.py", nb_dir)
    shutil.copy(runner.BOOK_DIR / f"{name}.ipynb", book_dir)
    point_book_at(monkeypatch, "NOTEBOOKS_DIR", nb_dir)
    point_book_at(monkeypatch, "BOOK_DIR", book_dir)
    src = nb_dir / f"{name}.py"
    before_code, before_page = staleness.code_fingerprint(src), nbformat.read(book_dir / f"{name}.ipynb", as_version=4)
    assert not executed.refresh_prose(name)  # prose already current: nothing written

    text = src.read_text()
    first_prose = text.index("# %% [markdown]\n") + len("# %% [markdown]\n")
    src.write_text(
        text[:first_prose]
        + "# A new opening sentence.\n#\n"
        + text[first_prose:]
        + "\n# %% [markdown]\n# A closing remark.\n"
    )
    assert staleness.code_fingerprint(src) == before_code
    assert executed.refresh_prose(name) and not executed.refresh_prose(name)
    after = nbformat.read(book_dir / f"{name}.ipynb", as_version=4)
    nbformat.validate(after)
    assert any(c.source.startswith("A new opening sentence.") for c in after.cells)
    assert after.cells[-1].source == "A closing remark."
    code = [(c.source, c.outputs) for c in before_page.cells if c.cell_type == "code"]
    assert [(c.source, c.outputs) for c in after.cells if c.cell_type == "code"] == code  # outputs untouched
    assert after.metadata["jtc"] == before_page.metadata["jtc"]

    src.write_text(src.read_text().replace("import ", "import  ", 1))  # a code edit
    assert staleness.code_fingerprint(src) != before_code
    assert not executed.refresh_prose(name)  # a stale page is left to the executor


def _fake_page(log_dir, fail, partners, name):
    """A page for run_pages, in a worker process: records when it started and ended and its thread setting. A page
    with a partner stays until the partner has started (so two pages that can run side by side do overlap, however
    slowly a busy machine starts the workers: no sleep is guessed long enough); the 120 s deadline only stops a hang,
    and a page that reaches it fails its test's order assertions."""
    import os
    import time
    from pathlib import Path

    t0 = time.time()
    Path(log_dir, name + ".start").touch()
    if name in fail:
        raise runner.NotebookFailed(f"notebook {name} failed")
    deadline = t0 + 120
    while name in partners and not Path(log_dir, partners[name] + ".start").exists() and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    Path(log_dir, name).write_text(f"{t0} {time.time()} {os.environ.get('OMP_NUM_THREADS')}")
    return time.time() - t0


def test_pages_run_side_by_side_and_a_reader_waits_for_the_pages_before_it(tmp_path):
    from functools import partial

    lines = []
    pair = {"a": "b", "b": "a", "r": "c", "c": "r"}
    times = scheduling.run_pages(
        ["a", "b", "r", "c"], partial(_fake_page, str(tmp_path), (), pair), 2, lines.append, readers={"r": None}
    )
    assert set(times) == {"a", "b", "r", "c"} and all(t > 0.45 for t in times.values())
    span = {n: [float(x) for x in (tmp_path / n).read_text().split()[:2]] for n in times}
    assert span["b"][0] < span["a"][1]  # a and b overlapped
    assert span["r"][0] >= max(span["a"][1], span["b"][1])  # the reader started after both ended
    assert span["c"][0] < span["r"][1]  # a page after the reader did not wait for it
    assert all((tmp_path / n).read_text().split()[2] == "1" for n in times)  # single-threaded workers


def test_pages_start_in_the_start_order_and_a_reader_still_waits_for_the_pages_before_it(tmp_path):
    from functools import partial

    names = ["a", "b", "r", "c"]
    assert scheduling.start_order(names, ("c",)) == ["c", "a", "b", "r"]
    times = scheduling.run_pages(
        names,
        partial(_fake_page, str(tmp_path), (), {"a": "c", "c": "a"}),
        2,
        lambda _: None,
        readers={"r": None},
        order=scheduling.start_order(names, ("c",)),
    )
    span = {n: [float(x) for x in (tmp_path / n).read_text().split()[:2]] for n in times}
    assert span["c"][0] < span["b"][0]  # c and a started first, b when one of them ended
    assert span["r"][0] >= max(span["a"][1], span["b"][1])  # the reader waited for a and b, not for c's place
    for order in (["a", "b"], names + ["x"]):  # a page missing, a page too many
        with pytest.raises(ValueError, match="same pages"):
            scheduling.run_pages(names, partial(_fake_page, str(tmp_path), (), {}), 2, lambda _: None, order=order)


def _fake_ahead(log_dir, name):
    """Work ahead of page ``name`` (module level: it is pickled to a worker): records when it ended."""
    import time
    from pathlib import Path

    time.sleep(0.3)
    Path(log_dir, name + ".ahead").write_text(str(time.time()))


def test_a_reader_waits_only_for_the_pages_it_reads_and_a_page_for_its_work_ahead(tmp_path):
    """A reader that names the pages it reads starts once those end (not every page before it); a page's work ahead
    runs in a worker of its own before the page, which starts only after it, and is not reported as a page."""
    from functools import partial

    names = ["a", "b", "r", "c"]
    assert scheduling.waits_for("r", names, {"r": ("a",)}) == ["a"]
    assert scheduling.waits_for("r", names, {"r": None}) == ["a", "b"]
    assert scheduling.waits_for("a", names, {"r": None}) == []
    lines = []
    times = scheduling.run_pages(
        names,
        partial(_fake_page, str(tmp_path), (), {"a": "b", "b": "a"}),
        2,
        lines.append,
        readers={"r": ("a",)},
        order=["a", "b", "r", "c"],
        ahead={"c": partial(_fake_ahead, str(tmp_path), "c")},
    )
    assert set(times) == set(names)
    span = {n: [float(x) for x in (tmp_path / n).read_text().split()[:2]] for n in times}
    assert span["r"][0] >= span["a"][1]  # the reader waited for the page it reads ...
    assert float((tmp_path / "c.ahead").read_text()) <= span["c"][0]  # ... and c for its work ahead
    assert any(line.startswith("executing c (ahead)") for line in lines)


def test_a_failed_page_stops_new_ones_and_is_raised_after_the_running_ones_end(tmp_path):
    from functools import partial

    with pytest.raises(runner.NotebookFailed, match="notebook a failed"):
        scheduling.run_pages(
            ["a", "b", "c", "d"], partial(_fake_page, str(tmp_path), ("a",), {"b": "a"}), 2, lambda _: None
        )
    assert (tmp_path / "b").exists()  # running beside the failure: it finished and committed
    assert not (tmp_path / "c").exists() and not (tmp_path / "d").exists()  # never started


def test_pages_run_side_by_side_only_where_their_memory_fits(monkeypatch):
    point_book_at(monkeypatch, "available_memory_gb", lambda: 2.5 * scheduling.PAGE_PEAK_GB)
    assert scheduling.jobs_that_fit(2) == 2 and scheduling.jobs_that_fit(4) == 2
    point_book_at(monkeypatch, "available_memory_gb", lambda: 1.5 * scheduling.PAGE_PEAK_GB)
    assert scheduling.jobs_that_fit(2) == 1
    point_book_at(monkeypatch, "available_memory_gb", lambda: 0.5)
    assert scheduling.jobs_that_fit(2) == 1  # one page always runs (a page that does not fit fails with its own error)
