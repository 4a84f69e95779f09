"""The one figure path, traced: a chapter's ``figure`` of any paper takes the same steps through the book and the
registry, looking the figure's entry up once, and the registry is built once per process."""

import dataclasses
import json
import sys
from pathlib import Path
from types import MappingProxyType

import matplotlib
import pytest

from jtc_utils.book.display import chapter
from jtc_utils.core.infra.paths import DATA_DIR
from jtc_utils.evidence import figure_registry, registry

matplotlib.use("Agg")

PACKAGE = str(Path(chapter.__file__).parents[1])
ROUTE = ("book/display/chapter.py", "evidence/figure_registry.py", "evidence/registry.py")  # the path's own modules


def _trace(fig, monkeypatch, tmp_path):
    """The route of ``Chapter("tiny").figure(fig)``: every call in the path's own modules, in order, with the
    paper's computation (its stored numbers stand in for it) and drawing as single steps; and how often the entry
    was looked up."""
    import IPython.display

    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: None)
    monkeypatch.setenv("JTC_DATA_OUT", str(tmp_path))
    monkeypatch.setattr(chapter, "PAGE", chapter.Numbering())
    built = registry.get()
    stored = json.loads((DATA_DIR / f"{fig}.json").read_text())
    entry = built.entry(fig)

    def computed(*args):
        return stored["data"], stored["params"]

    lookups = []
    patched = dataclasses.replace(
        built, figures=MappingProxyType({**built.figures, fig: dataclasses.replace(entry, compute=computed)})
    )
    monkeypatch.setattr(registry, "get", lambda: patched)
    monkeypatch.setattr(registry.Registry, "entry", lambda self, f: lookups.append(f) or self.figures[f])

    steps, inside = [], [None]
    opaque = {computed.__code__, entry.draw.__code__, entry.caption.__code__}
    shown = chapter.show.__code__  # the page's display of the drawn figure: one step

    def profile(frame, event, arg):
        code = frame.f_code
        if event == "call" and inside[0] is None:
            own = code.co_filename.endswith(ROUTE)
            if own or code in opaque:
                steps.append("paper" if code in opaque else f"{Path(code.co_filename).stem}.{code.co_qualname}")
            if code in opaque or code is shown or (not own and code.co_filename.startswith(PACKAGE)):
                inside[0] = frame
        elif event == "return" and inside[0] is frame:
            inside[0] = None

    sys.setprofile(profile)
    try:
        chapter.Chapter("tiny").figure(fig)
    finally:
        sys.setprofile(None)
    return steps, lookups


@pytest.mark.parametrize("fig", ["fig2", "nnjtc_fig2"])
def test_a_figure_looks_its_entry_up_once(fig, monkeypatch, tmp_path):
    steps, lookups = _trace(fig, monkeypatch, tmp_path)
    assert lookups == [fig], lookups
    assert steps.count("paper") >= 2, steps  # computed, then drawn and captioned by its paper


def test_a_jtc_and_a_lens_figure_take_the_same_route(monkeypatch, tmp_path):
    jtc, _ = _trace("fig2", monkeypatch, tmp_path)
    monkeypatch.undo()
    lens, _ = _trace("nnjtc_fig2", monkeypatch, tmp_path)
    assert jtc == lens, (jtc, lens)


def test_the_registry_is_built_once_and_then_read():
    first = registry.get()
    assert registry.get() is first
    assert figure_registry.entry("fig2") is first.figures["fig2"]
    with pytest.raises(TypeError):
        first.figures["fig2"] = None  # read-only: nothing fills it after it is built


@pytest.mark.parametrize("fig", ["fig2", "nnjtc_fig2", "geva_values", "sl_fig1"])
def test_every_paper_gives_one_result_type_its_numbers_as_saved(fig, monkeypatch, tmp_path):
    """A figure of any of the four papers comes back as one type: its numbers as saved (the same a reader gets from
    ``book/data``, with no ``params`` among them), its parameters apart, and a ``draw`` of its own where its paper
    draws it. The paper's computation hands back arrays (as the JTC paper's does); the result holds none."""
    import numpy as np

    stored = json.loads((DATA_DIR / f"{fig}.json").read_text())
    built = registry.get()
    entry = built.entry(fig)

    def arrays(x):
        if isinstance(x, dict):
            return {k: arrays(v) for k, v in x.items()}
        if isinstance(x, list) and x and all(isinstance(v, float) for v in x):
            return np.asarray(x)
        return [arrays(v) for v in x] if isinstance(x, list) else x

    computed = dataclasses.replace(entry, compute=lambda *a: (arrays(stored["data"]), stored["params"]))
    monkeypatch.setattr(
        registry, "get", lambda: dataclasses.replace(built, figures=MappingProxyType({**built.figures, fig: computed}))
    )
    monkeypatch.setenv("JTC_DATA_OUT", str(tmp_path))
    result = chapter.Chapter("tiny").figure(fig, plot=False)
    assert isinstance(result, chapter.FigureNumbers) and result.fig == fig
    assert dict(result) == stored["data"]  # the parameters are not among the numbers
    assert result.params == stored["params"]
    assert json.dumps(dict(result)) == json.dumps(stored["data"])  # no array, no NaN: plain JSON values
    assert callable(result.draw)
