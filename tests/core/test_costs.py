"""The build's cost model (issue 79): each figure a page computes and each heavy step inside it are measured, with
the arithmetic their shapes need, and the runner's table sets that arithmetic against the machine's floor."""

import json

import numpy as np
import pytest
import torch
from helpers import save_random_model

from jtc_utils.book.build import costs as build_costs
from jtc_utils.core.analysis import linear
from jtc_utils.core.infra import cache, costs
from jtc_utils.core.models import models


@pytest.fixture
def measured(tmp_path, monkeypatch):
    out = tmp_path / "page.jsonl"
    monkeypatch.setenv(costs.ENV, str(out))
    return out


def test_nothing_is_recorded_unless_a_file_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv(costs.ENV, raising=False)
    with costs.figure("f"), costs.step("fits"):
        costs.arithmetic(f32=10)
    assert not list(tmp_path.iterdir())


def test_a_figure_and_its_steps_add_up_with_their_arithmetic(measured):
    """Nested figures and nested steps are rows of their own whose seconds are taken out of the outer one's; the
    arithmetic goes to the innermost step, or to the figure outside any step."""
    with costs.figure("outer"):
        costs.arithmetic(f64=5)
        with costs.step("hidden"):
            costs.arithmetic(f32=100)
            with costs.step("fits"):
                costs.arithmetic(f64=7)
        with costs.figure("inner"), costs.step("lens_eval"):
            costs.arithmetic(f32=3)
    inner, outer = costs.read(measured)  # the inner figure finishes first
    assert (inner["figure"], outer["figure"]) == ("inner", "outer")
    assert [(s["kind"], s["f32"], s["f64"]) for s in outer["steps"]] == [("fits", 0, 7), ("hidden", 100, 0)]
    assert (outer["f32"], outer["f64"]) == (100, 12) and (inner["f32"], inner["f64"]) == (3, 0)
    assert all(s["seconds"] >= 0 for s in outer["steps"]) and outer["seconds"] >= 0


def test_a_cache_miss_is_a_step_and_a_hit_is_not(measured, tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "CACHE_DIR", tmp_path / "cache")
    X = np.random.default_rng(0).normal(size=(200, 8))
    for _ in range(2):
        with costs.figure("f"):
            cache.cached("fits", {"x": 1}, lambda: {"W": linear.fit(X, X)})
    miss, hit = costs.read(measured)
    assert [s["kind"] for s in miss["steps"]] == ["fits"] and hit["steps"] == []
    # the fit's arithmetic from its shapes: XᵀX and the eigh route (n·d² + 3·d³), then Lᵀ Y and R B
    n, d = X.shape
    assert miss["steps"][0]["f64"] == n * d * d + 3 * d**3 + d * n * d + d * d * d


def test_the_table_sets_each_row_against_its_floor(measured, monkeypatch):
    measured.write_text(
        json.dumps({"figure": "a", "seconds": 4.0, "f32": 2e9, "f64": 0.0, "steps": []})
        + "\n"
        + json.dumps(
            {
                "figure": "b",
                "seconds": 30.0,
                "f32": 0.0,
                "f64": 1e9,
                "steps": [{"kind": "fits", "seconds": 20.0, "f32": 0.0, "f64": 1e9}],
            }
        )
        + "\n"
    )
    rate = {"f32": 1e9, "f64": 0.5e9}
    monkeypatch.setattr(build_costs, "path", lambda page: measured)
    rows = build_costs.rows(["page"], rate)
    text = build_costs.report(["page"], rate, least_seconds=5)
    assert [(r["figure"], r["step"]) for r in rows] == [("b", ""), ("b", "fits ×1"), ("a", "")]  # slowest first
    assert [r["floor"] for r in rows] == [2.0, 2.0, 2.0] and [r["ratio"] for r in rows] == [15.0, 10.0, 2.0]
    assert "worst ratio: page, b (15.0: 30.0 s against a floor of 2.00 s)" in text
    two = [
        {"kind": "fits", "seconds": 1.0, "f32": 0.0, "f64": 2.0},
        {"kind": "fits", "seconds": 2.0, "f32": 1.0, "f64": 0.0},
    ]
    assert build_costs.by_kind(two) == [{"kind": "fits", "seconds": 3.0, "f32": 1.0, "f64": 2.0, "n": 2}]
    assert "(1 figure under 5 s)" in text and "all its figures" in text


def test_a_forward_pass_and_a_readout_count_what_their_shapes_need(measured, tmp_path):
    """Per token a forward pass meets every weight matrix of the blocks (embeddings are looked up; the output
    matrix is the readout's) and attention's 2·T·d per layer; a readout is d·V per row."""
    ad = models.adapter(str(save_random_model("gpt2", tmp_path / "gpt")))
    B, T = 3, 7
    ids = torch.randint(0, ad.vocab_size, (B, T))
    with costs.figure("f"):
        with costs.step("hidden"):
            ad.forward_states(ids, torch.ones_like(ids))
        with costs.step("lens_eval"):
            ad.readout(torch.zeros(5, ad.d))
    (f,) = costs.read(measured)
    V, L, d = ad.vocab_size, ad.n_layers, ad.d
    blocks = sum(p.numel() for n, p in ad.model.named_parameters() if p.dim() == 2 and ".h." in n)
    assert [s["kind"] for s in f["steps"]] == ["hidden", "lens_eval"]
    assert f["steps"][0]["f32"] == B * T * (blocks + 2 * L * T * d)
    assert f["steps"][1]["f32"] == 5 * d * V


def test_figures_recomputed_for_a_claim_in_another_setting_are_measured_under_their_own_ids(measured):
    """The claims page's work ahead recomputes figures in the paper's regime and on other training seeds through a
    computing getter, outside the figure registry's compute: each computation is a line of its own, named by the id
    it is saved under (``regime_fig4``), and a figure asked for twice is computed and measured once."""
    from jtc_utils.evidence import claims

    def compute(fig):
        with costs.step("fits"):
            costs.arithmetic(f64=11)
        return {"x": 1}, {}

    get = claims.computing_getter(compute, prefix="regime_")
    get("fig4"), get("fig4"), get("fig5")
    lines = costs.read(measured)
    assert [line["figure"] for line in lines] == ["regime_fig4", "regime_fig5"]
    assert [line["f64"] for line in lines] == [11, 11]
