"""The runner's up-to-date check: a page is re-executed exactly when something it depends on changed."""

import shutil

from jtc_utils import runner


def test_fingerprint_follows_the_source_and_the_profile(tmp_path, monkeypatch):
    names = runner.notebook_names()
    assert names[0] == "embedded_world" and names[-1] == "claims_verdicts"  # table-of-contents order
    nb_dir = tmp_path / "notebooks"
    nb_dir.mkdir()
    shutil.copy(runner.NOTEBOOKS_DIR / "claims_verdicts.py", nb_dir / "claims_verdicts.py")
    monkeypatch.setattr(runner, "NOTEBOOKS_DIR", nb_dir)
    before = runner.inputs_fingerprint("claims_verdicts", "tiny")
    assert before == runner.inputs_fingerprint("claims_verdicts", "tiny")
    assert before != runner.inputs_fingerprint("claims_verdicts", "paper")
    (nb_dir / "claims_verdicts.py").write_text((nb_dir / "claims_verdicts.py").read_text() + "\n# edited\n")
    assert before != runner.inputs_fingerprint("claims_verdicts", "tiny")


def test_a_page_without_a_stored_fingerprint_is_stale(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "BOOK_DIR", tmp_path)
    assert not runner.up_to_date("claims_verdicts", "tiny")  # no page at all


def test_cleaning_gives_stable_unique_cell_ids():
    import jupytext

    ids = []
    for _ in range(2):  # jupytext gives fresh random ids on every read
        nb = jupytext.read(runner.NOTEBOOKS_DIR / "sec6_submodules.py")
        nb.cells.append(nb.cells[-1].copy())  # a repeated cell still gets its own id
        runner.clean(nb)
        ids.append([c.id for c in nb.cells])
    assert ids[0] == ids[1]
    assert len(set(ids[0])) == len(ids[0])
    import nbformat

    nbformat.validate(nb)
