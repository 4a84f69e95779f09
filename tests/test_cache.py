"""The on-disk cache: content-addressed, atomic, and robust to damaged files."""

import numpy as np

from jtc_utils.core import cache


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
    assert not any(p.is_file() for p in tmp_path.rglob("*"))
    monkeypatch.setattr(np, "savez", orig)
    assert cache.cached("t", {"k": 1}, compute)["X"].tolist() == [1, 1, 1]
