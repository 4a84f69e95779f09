"""Early exit (spec section 6): the vectorized λ sweep against the per-sample loop, the paper's endpoints, the
threshold details, and the read-out of layers saved."""

import numpy as np
import pytest

from jtc_utils.core.analysis import early_exit as ee

pytestmark = [pytest.mark.jtc]  # the JTC paper's method, in the core: its chapters select these tests


def stats(seed=0, L=12, n=400):
    rng = np.random.default_rng(seed)
    gap = rng.random((L + 1, n)) ** 2
    top1 = rng.integers(0, 4, (L + 1, n))
    final = rng.integers(0, 4, n)
    top1[L] = final
    dec = ee.decay(rng.integers(0, 30, n), 14.5)
    return gap, top1, final, dec


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vectorized_sweep_equals_the_per_sample_loop(seed):
    gap, top1, final, dec = stats(seed)
    lams = ee.paper_lambdas("id")
    a, b = ee.sweep(gap, top1, final, dec, lams), ee.sweep_loop(gap, top1, final, dec, lams)
    assert np.array_equal(a["exit"], b["exit"]) and np.array_equal(a["correct"], b["correct"])
    assert np.array_equal(a["x"], b["x"]) and np.array_equal(a["y"], b["y"])


def test_paper_endpoints_and_lambda_lists():
    gap, top1, final, dec = stats()
    L = gap.shape[0] - 1
    assert len(ee.paper_lambdas("mat")) == 13 and len(ee.paper_lambdas("id")) == 22
    r = ee.sweep(gap, top1, final, dec, [-1.112, 1.112])
    assert r["x"][0] == 1 and r["y"][0] == (top1[1] == final).mean()  # everyone exits at layer 1
    assert r["x"][1] == L and r["y"][1] == 1  # nobody exits: the full model


def test_layer_zero_never_exits_and_the_comparison_is_strict():
    L, n = 4, 3
    gap = np.full((L + 1, n), 0.5)
    gap[0] = 1.0
    top1 = np.zeros((L + 1, n), int)
    dec = np.zeros(n)  # threshold = 0.9 λ
    r = ee.sweep(gap, top1, np.zeros(n, int), dec, [0.5 / 0.9, 0.4])
    assert np.all(r["exit"][0] == L)  # gap == threshold does not exit (strict >)
    assert np.all(r["exit"][1] == 1)  # layer 0 had the largest gap but never exits


def test_bert_uses_the_constant_position_three_by_default():
    pos = np.array([0, 5, 9])
    assert np.all(ee.positions_for_threshold(pos, "bert") == 3)
    assert np.array_equal(ee.positions_for_threshold(pos, "bert", "actual"), pos)
    assert np.array_equal(ee.positions_for_threshold(pos, "gpt2"), pos)
    with pytest.raises(ValueError, match="bert_pos"):
        ee.positions_for_threshold(pos, "bert", "middle")


@pytest.mark.parametrize(
    "bad, match",
    [
        ([], "empty"),
        ("0.5", "list of numbers"),
        ([0.1, "x"], "numbers"),
        ([0.1, float("nan")], "finite"),
        (None, "list of numbers"),
        ([True], "numbers"),
    ],
)
def test_bad_lambda_lists_are_refused(bad, match):
    gap, top1, final, dec = stats()
    with pytest.raises(ValueError, match=match):
        ee.sweep(gap, top1, final, dec, bad)


def test_layers_saved_interpolates_linearly():
    # points (1, 0.5), (5, 0.9), (9, 1.0): 0.95 is reached halfway between x=5 and x=9
    r = ee.layers_saved([9, 1, 5], [1.0, 0.5, 0.9], n_layers=12)
    assert r["x"] == pytest.approx(7.0) and r["saved"] == pytest.approx(5.0) and r["share"] == pytest.approx(5 / 12)
    assert ee.layers_saved([1, 2], [0.96, 0.99], 12)["x"] == 1  # already reached at the first point
    assert np.isnan(ee.layers_saved([1, 2], [0.5, 0.6], 12)["x"])
    # equal x: y averaged, as seaborn draws it
    xs, ys = ee.curve_points([3, 3, 1], [0.4, 0.6, 0.2])
    assert xs.tolist() == [1, 3] and ys.tolist() == [0.2, 0.5]
