"""The on-disk cache: content-addressed, atomic, and robust to damaged files."""

from pathlib import Path

import numpy as np
import pytest

from jtc_utils.core.infra import cache


def test_cache_hit_miss_and_corruption(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "CACHE_DIR", tmp_path)
    calls = []

    def compute():
        calls.append(1)
        return {"X": np.arange(12.0).reshape(3, 4)}

    a = cache.cached("t", {"k": 1}, compute)
    b = cache.cached("t", {"k": 1}, compute)
    assert len(calls) == 1 and np.array_equal(a["X"], b["X"])
    cache.cached("t", {"k": 2}, compute)
    assert len(calls) == 2

    path = cache.path_for("t", {"k": 1})
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # truncated, as if a run was killed mid-write without rename
    c = cache.cached("t", {"k": 1}, compute)
    assert len(calls) == 3 and np.array_equal(c["X"], a["X"])

    raw = bytearray(path.read_bytes())  # a flipped byte inside the array data
    i = raw.find(np.arange(12.0).reshape(3, 4)[2].tobytes())
    raw[i + 3] ^= 0xFF
    path.write_bytes(bytes(raw))
    d = cache.cached("t", {"k": 1}, compute)
    assert len(calls) == 4 and np.array_equal(d["X"], a["X"])
    assert not list(tmp_path.rglob(".tmp-*"))  # nothing half-written left behind


def test_interrupted_write_leaves_no_file(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "CACHE_DIR", tmp_path)

    class Boom(Exception):
        pass

    def compute():
        return {"X": np.ones(3)}

    orig = np.savez

    def failing_savez(f, **kw):
        orig(f, **kw)
        raise Boom

    monkeypatch.setattr(np, "savez", failing_savez)
    try:
        cache.cached("t", {"k": 1}, compute)
    except Boom:
        pass
    # nothing but the (empty) lock file of the entry it tried to compute
    assert [p.parent.name for p in tmp_path.rglob("*") if p.is_file()] == [".locks"]
    monkeypatch.setattr(np, "savez", orig)
    assert cache.cached("t", {"k": 1}, compute)["X"].tolist() == [1, 1, 1]


def _compute_once_in_a_process(cache_dir, log, hold_s):
    """Run in a child process: cached() of one key, its computation appending a line to ``log`` and taking a while."""
    import time

    from jtc_utils.core.infra import cache as c

    c.CACHE_DIR = Path(cache_dir)

    def compute():
        with open(log, "a") as f:
            f.write("computed\n")
        time.sleep(hold_s)
        return {"x": np.arange(3)}

    return c.cached("shared", {"k": 1}, compute)["x"].tolist()


def test_two_processes_missing_the_same_entry_compute_it_once(tmp_path):
    import multiprocessing as mp

    log = tmp_path / "log"
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        got = pool.starmap(_compute_once_in_a_process, [(str(tmp_path / "c"), str(log), 1.5)] * 2)
    assert got == [[0, 1, 2], [0, 1, 2]]
    assert log.read_text() == "computed\n"  # the second waited on the lock, then loaded the first one's result


def test_a_lock_held_past_the_wait_limit_lets_the_waiter_compute(tmp_path, monkeypatch):
    import fcntl

    monkeypatch.setattr(cache, "CACHE_DIR", tmp_path)
    path = cache.path_for("k", {"a": 1})
    lock = tmp_path / ".locks" / f"{path.parent.name}-{path.name}.lock"
    lock.parent.mkdir(parents=True)
    with open(lock, "a") as held:  # another open file description: flock treats it as another holder
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.warns(UserWarning, match="waited past the limit"):
            with cache.computing(path, wait_s=0.3):
                ran = True
    assert ran


def test_an_entry_copied_under_another_name_is_recomputed(tmp_path, monkeypatch):
    """A file with a valid checksum but computed for another key (its arrays of another shape) is not a hit."""
    monkeypatch.setattr(cache, "CACHE_DIR", tmp_path)
    small = cache.cached("t", {"k": "small"}, lambda: {"X": np.zeros((2, 3))})
    cache.cached("t", {"k": "big"}, lambda: {"X": np.ones((5, 7))})
    big_path, small_path = cache.path_for("t", {"k": "big"}), cache.path_for("t", {"k": "small"})
    small_path.write_bytes(big_path.read_bytes())  # valid on its own, wrong for this name
    again = cache.cached("t", {"k": "small"}, lambda: {"X": np.zeros((2, 3))})
    assert again["X"].shape == small["X"].shape == (2, 3)


def test_a_folder_where_an_entry_belongs_is_refused_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "CACHE_DIR", tmp_path)
    cache.path_for("t", {"k": 1}).mkdir(parents=True)
    with pytest.raises(ValueError, match=r"is a folder where a cache entry's file belongs: remove it") as e:
        cache.cached("t", {"k": 1}, lambda: {"X": np.zeros(2)})
    assert "\n" not in str(e.value)
