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
