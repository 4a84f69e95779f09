"""The interactive layer view: its numbers are the book's (figure-data regression), its last row is the model's own
output for every mapping, it refuses what it cannot show, and its page loads plotly from the built book."""

import numpy as np
import pytest

from jtc_utils.book.display import layer_view
from jtc_utils.lenses import trajectory
from jtc_utils.evidence import figdata
from jtc_utils.core.analysis import experiment

VIEW = ("id", "mat", "tuned")  # what the book's view shows (section 4)


def test_the_view_draws_the_mappings_its_numbers_hold():
    assert layer_view.BOOK_MAPPINGS == trajectory.BOOK_MAPPINGS == VIEW
    assert layer_view.MAPPINGS == trajectory.MAPPINGS


@pytest.fixture(scope="module")
def exp():
    # the stand-in the book's view shows (Figure 4's model)
    return experiment.shared(figdata.load("layer_view")["data"]["trajectories"][0]["model"], "encyclopedia")


@pytest.mark.slow
def test_stored_trajectories_match_a_recomputation(exp):
    stored = [t for t in figdata.load("layer_view")["data"]["trajectories"] if t["model"] == exp.model_name]
    assert len(stored) == 4
    for ids, t in zip(trajectory.sentences(exp, 2), stored):
        again = trajectory.trajectory(exp, ids=ids, mappings=VIEW)
        assert again["tokens"] == t["tokens"]
        for m in VIEW:
            np.testing.assert_allclose(again[m]["p"], t[m]["p"], atol=1e-5)
            # a near-tie may swap the top token; anything else is a regression
            diff = [(a, b) for ra, rb in zip(again[m]["token"], t[m]["token"]) for a, b in zip(ra, rb) if a != b]
            assert len(diff) <= 1, diff


def test_every_mapping_ends_in_the_models_own_output(exp):
    t = trajectory.trajectory(exp, "the river flows through the", mappings=VIEW)
    L = exp.n_layers
    assert len(t["id"]["p"]) == L + 1 and len(t["id"]["p"][0]) == len(t["tokens"])
    for m in ("mat", "tuned"):
        assert t["id"]["token"][L] == t[m]["token"][L]
        np.testing.assert_allclose(t["id"]["p"][L], t[m]["p"][L])
        assert all(0 < p <= 1 for row in t[m]["p"] for p in row)
    # below the last layer the three read differently
    assert t["tuned"]["p"][0] != t["id"]["p"][0] and t["tuned"]["p"][0] != t["mat"]["p"][0]


def test_bad_input_is_refused_with_the_reason(exp):
    with pytest.raises(ValueError, match="non-empty"):
        trajectory.trajectory(exp, "  ")
    with pytest.raises(ValueError, match="unknown mappings"):
        trajectory.trajectory(exp, "the river", mappings=("id", "rrr"))
    bert = experiment.shared("tiny-bert-base", "encyclopedia")
    with pytest.raises(ValueError, match="not a decoder"):
        trajectory.trajectory(bert, "the river flows")


def test_the_page_loads_plotly_from_the_book_when_the_view_is_reached(exp):
    t = trajectory.trajectory(exp, "the river flows")
    fig = layer_view.figure([t, t])
    assert len(fig.data) == 4  # two sentences x the two default mappings
    html = layer_view.html(fig, "view")
    assert 's.src = "../plotly.min.js"' in html and "cdn.plot.ly" not in html and 'id="view"' in html
    assert '<script src="../plotly.min.js">' not in html and "IntersectionObserver" in html  # not with the page


def test_a_cell_shows_a_short_token_and_its_hover_the_whole_one():
    """A long token is cut in its cell (it spilled over its neighbours on a desktop) and shown whole on hover."""
    assert layer_view.short("the") == "the"
    assert layer_view.short("Wikipedia") == "Wiki…" and len(layer_view.short("Wikipedia")) == layer_view.CELL_CHARS
    traj = figdata.load("layer_view")["data"]["trajectories"][:1]
    fig = layer_view.figure(traj, mappings=("id",))
    trace = fig.data[0]
    assert all(len(t) <= layer_view.CELL_CHARS for row in trace.text for t in row)
    full = [cell[1] for row in trace.customdata for cell in row]
    assert full == [t for row in traj[0]["id"]["token"] for t in row]
    assert "%{customdata[1]}" in trace.hovertemplate
    assert '"displayModeBar": false' in layer_view.html(fig, "v")
