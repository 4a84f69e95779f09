"""Every order the book shows, stores or picks items by is total (:mod:`jtc_utils.core.infra.ordering`): the same on
every machine, whatever sort kernels its CPU dispatches. A scan of the package, the notebooks and the benchmarks from
the source, and the ranking helper's own behaviour, under this CPU's NumPy dispatch and under the baseline's."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from jtc_utils.core.infra import ordering
from jtc_utils.core.infra.paths import NOTEBOOKS_DIR, ROOT

SOURCES = sorted(
    [*(ROOT / "jtc_utils").rglob("*.py"), *NOTEBOOKS_DIR.glob("*.py"), *(ROOT / "benchmarks").glob("*.py")]
)
STABLE = {"stable", "mergesort"}
JUSTIFIED = "# order:"  # a call whose order is never shown nor used to pick items says why on its line


def _keyword(call: ast.Call, name: str):
    for kw in call.keywords:
        if kw.arg == name and isinstance(kw.value, ast.Constant):
            return kw.value.value
    return None


def unstable_sorts(text: str) -> list[tuple[int, str]]:
    """``(line, what)`` for every sort in ``text`` whose order can depend on the machine:

    * pandas ``sort_values`` / ``sort_index`` without ``kind="stable"`` (the default quicksort is unstable), and
      ``nlargest`` / ``nsmallest`` / ``rank`` (use a stable sort and ``head``);
    * NumPy ``argsort`` / ``sort`` (function or method) without ``kind="stable"``; ``partition`` / ``argpartition``;
    * ``torch.sort`` without ``stable=True``; ``topk`` anywhere but :func:`jtc_utils.core.infra.ordering.top_k`, unless
      its line (or the line above) says (``# order: ...``) that the order is never listed.

    Python's ``sorted``, ``list.sort(key=...)``, ``min`` and ``max`` are stable or take the first of ties: allowed."""
    lines = text.splitlines()
    found = []
    for node in ast.walk(ast.parse(text)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        attr, line = node.func.attr, node.lineno
        span = "\n".join(lines[max(0, node.lineno - 2) : node.end_lineno])  # the call's lines and the one above
        owner = node.func.value.id if isinstance(node.func.value, ast.Name) else None
        if JUSTIFIED in span:
            continue
        if attr in ("sort_values", "sort_index") and _keyword(node, "kind") not in STABLE:
            found.append((line, f"{attr} without kind='stable'"))
        elif attr in ("nlargest", "nsmallest", "rank", "argpartition") or (
            attr == "partition" and not (node.args and isinstance(node.args[0], ast.Constant))
        ):  # not str's
            found.append((line, f"{attr} (take a stable sort, or ordering.top_k, instead)"))
        elif attr == "argsort" and _keyword(node, "kind") not in STABLE and _keyword(node, "stable") is not True:
            found.append((line, "argsort without kind='stable'"))
        elif attr == "sort":
            if owner == "torch" and _keyword(node, "stable") is not True:
                found.append((line, "torch.sort without stable=True"))
            elif owner in ("np", "numpy") and _keyword(node, "kind") not in STABLE:
                found.append((line, "np.sort without kind='stable'"))
            elif owner not in ("np", "numpy", "torch") and not node.keywords:
                found.append((line, "a bare .sort() (an array's sort is unstable: sorted() or kind='stable')"))
        elif attr == "topk":
            found.append((line, "topk outside ordering.top_k (ties and near-ties in the kernel's order)"))
    return found


def test_the_scan_finds_what_it_forbids():
    bad = """\
df.sort_values("coverage", ascending=False).head(12)
df.sort_index()
np.argsort(x)
x.argsort()
np.sort(x)
torch.sort(x)
logits.topk(5)
s.nlargest(3)
a.sort()
np.partition(x, 3)
"""
    good = """\
df.sort_values("coverage", ascending=False, kind="stable")
np.argsort(x, kind="stable")
torch.sort(x, stable=True)
names.sort(key=len)
sorted(xs)
digest, _, rel = line.partition("  ")
logits.topk(5)  # order: a set to test membership in
"""
    assert sorted(line for line, _ in unstable_sorts(bad)) == list(range(1, 11))
    assert unstable_sorts(good) == []


def test_every_sort_in_the_package_notebooks_and_benchmarks_is_total():
    found = [f"{p.relative_to(ROOT)}:{line}: {what}" for p in SOURCES for line, what in unstable_sorts(p.read_text())]
    assert not found, "\n".join(found)


# ------------------------------------------------------------------------------------------------------------
# the ranking of displayed lists
def test_top_k_breaks_exact_ties_by_the_lower_id_and_keeps_the_scores():
    x = torch.tensor([[1.0, 3.0, 3.0, 2.0, 3.0], [5.0, 4.0, 3.0, 2.0, 1.0]])
    ids, vals = ordering.top_k(x, 2)
    assert ids.tolist() == [[1, 2], [0, 1]] and vals.tolist() == [[3.0, 3.0], [5.0, 4.0]]
    ids, vals = ordering.top_k(x, 3, largest=False)
    assert ids.tolist() == [[0, 3, 1], [4, 3, 2]] and vals.tolist() == [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]


def test_top_k_ranks_near_ties_by_id_and_otherwise_as_topk():
    near = torch.tensor([[1.0, 7.0, 7.0 * (1 + 2e-6), 7.0 * (1 - 2e-6), 2.0]])  # within one grid step of 7
    assert ordering.top_k(near, 2)[0].tolist() == [[1, 2]]  # not [2, 1], the exact order
    assert ordering.top_k(near, 3)[0].tolist() == [[1, 2, 3]]
    apart = torch.tensor([[0.0, 1.0, 2.0, 4.0, 8.0, 16.0]])
    assert ordering.top_k(apart, 4)[0].tolist() == [[5, 4, 3, 2]]
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 500, generator=g)
    ids, vals = ordering.top_k(x, 10)
    t = x.topk(10)  # order: the reference the helper is compared with
    agree = (ids == t.indices.numpy()).all(1)
    for r in np.flatnonzero(~agree):  # any difference from topk is a near-tie ranked by id
        a, b = ids[r], t.indices[r].numpy()
        assert np.allclose(np.sort(x[r, a].numpy(), kind="stable"), np.sort(x[r, b].numpy(), kind="stable"), rtol=3e-4)
    assert agree.mean() > 0.9
    np.testing.assert_array_equal(vals, np.take_along_axis(x.numpy(), ids, 1))


def test_grid_is_monotone_and_only_merges_near_values():
    v = np.sort(np.random.default_rng(0).normal(size=10_000).astype(np.float32) * 10, kind="stable")
    q = ordering.grid(v)
    assert (np.diff(q) >= 0).all()
    assert np.abs(q - v).max() <= np.abs(v).max() * 2.0**-13
    assert ordering.order([1.0, 3.0, 3.0 * (1 + 1e-6), 2.0], descending=True).tolist() == [1, 2, 3, 0]


def test_top_k_refuses_what_it_cannot_rank():
    with pytest.raises(ValueError, match="k must be between 1 and 5"):
        ordering.top_k(torch.zeros(2, 5), 6)
    with pytest.raises(ValueError, match=r"scores must be \[rows, items\]"):
        ordering.top_k(torch.zeros(5), 2)


_PROBE = """
import json, numpy as np, pandas as pd, torch
from numpy._core._multiarray_umath import __cpu_features__ as f
from jtc_utils.core.infra import ordering
rng = np.random.default_rng(1)
x = np.round(rng.random(3000), 1)  # many exact ties
df = pd.DataFrame({"c": x})
print(json.dumps({"v3": bool(f.get("X86_V3")),
                  "np": np.argsort(-x, kind="stable")[:200].tolist(),
                  "pd": df.sort_values("c", ascending=False, kind="stable").index[:200].tolist(),
                  "top": ordering.top_k(torch.from_numpy(x[None]).float(), 50)[0].tolist()}))
"""


def _dispatched() -> str:
    """The NumPy features dispatched at run time beyond the build's baseline that this CPU has (what
    ``NPY_DISABLE_CPU_FEATURES`` turns off; ``.ci/run`` turns them off for the pages)."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return " ".join(f for f in __cpu_dispatch__ if __cpu_features__.get(f))


def test_orders_are_the_same_under_the_baseline_dispatch():
    if not _dispatched():
        pytest.skip("this CPU has no NumPy feature beyond the baseline to turn off")
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    runs = []
    for disable in ("", _dispatched()):
        env["NPY_DISABLE_CPU_FEATURES"] = disable
        out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True)
        runs.append(json.loads(out.stdout))
    assert runs[0]["v3"] and not runs[1]["v3"], "the baseline run still dispatched X86_V3 (AVX2)"
    for key in ("np", "pd", "top"):
        assert runs[0][key] == runs[1][key], key
    x = np.round(np.random.default_rng(1).random(3000), 1)
    tied = np.flatnonzero(x == x.max())[:200].tolist()
    assert runs[0]["np"][: len(tied)] == tied  # ties by position
