"""What the executed pages show a reader, read from their stored outputs (``book/*.ipynb``): no Python repr (a dict, a
list of strings, an object's constructor form, a numpy scalar) in any output a reader sees (issue 78, item 8)."""

from __future__ import annotations

import json
import re

from jtc_utils.book.build import runner
from jtc_utils.core.infra.paths import ROOT

# the forms Python prints for a value a page meant to show in words
_REPR = re.compile(
    r"\{'[^'\n]{1,60}': "  # a dict with string keys
    r"|\[(?:'[^'\n]{0,60}', )+'[^'\n]{0,60}'\]"  # a list of strings
    r"|\b[A-Z]\w*\('[^'\n]{1,60}'[,)]"  # an object's repr: Name('...', ...)
    r"|\bnp\.(?:float|int)\d+\(|\barray\(\["  # numpy scalars and arrays
)
_HIDDEN = {"remove-output", "remove-cell"}


def shown_text(cell: dict) -> str:
    """The text of a code cell's outputs that a reader sees: streams, and plain text where no HTML stands for it."""
    if _HIDDEN & set(cell.get("metadata", {}).get("tags", [])):
        return ""
    parts = []
    for out in cell.get("outputs", []):
        data = out.get("data", {})
        parts.append("".join(out.get("text", "")))
        if "text/html" not in data and not any(k.startswith("application/papermill") for k in data):
            parts.append("".join(data.get("text/plain", "")))
    return "\n".join(parts)


def reprs_in(notebook: dict) -> list[tuple[int, str]]:
    """(cell index, the matched text) of every Python repr a reader sees in an executed notebook."""
    found = []
    for i, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") == "code":
            found += [(i, m.group(0)) for m in _REPR.finditer(shown_text(cell))]
    return found


def test_no_stored_output_prints_a_python_repr():
    bad = {}
    for name in runner.notebook_names():
        found = reprs_in(json.loads((ROOT / "book" / f"{name}.ipynb").read_text()))
        if found:
            bad[name] = found
    assert not bad, bad


def _cell(text: str, tags=()) -> dict:
    return {"cell_type": "code", "metadata": {"tags": list(tags)}, "outputs": [{"output_type": "stream", "text": text}]}


def test_the_repr_check_finds_each_form_and_passes_words():
    """The check fails on each form the review found (a dict, a list of strings, an object's repr, a numpy scalar)
    and passes the sentences and tables that replaced them, and output a page hides."""
    for raw in (
        "{'news': 0.827, 'encyclopedia': 0.844}",
        "['C10', 'C12b', 'C1b']",
        "FFN('tiny-gpt2-medium', 12 blocks, d=64, d_ff=256): largest deviation",
        "settings: {'FUNCTION_WORDS': 100, 'PER_CLASS': 25}",
        "np.float64(0.25)",
    ):
        assert reprs_in({"cells": [_cell(raw)]}), raw
    for ok in (
        "news            0.827\nencyclopedia    0.844",
        "C10, C12b, C1b",
        "saturation: 1594 events of 3000; elimination: 2867 events of 3000",
        "Fig. 26    0.246",
        "mean r² (layer 3): 0.5 [0.4, 0.6]",
    ):
        assert not reprs_in({"cells": [_cell(ok)]}), ok
    assert not reprs_in({"cells": [_cell("{'a': 1}", ["remove-output"])]})


def test_no_stored_output_holds_an_object_address():
    """The plain text stored beside a table's HTML is the table's own words, not ``<... object at 0x...>``: an address
    changes with every run, so a re-executed page would differ where nothing changed (the claims tables' scroll
    boxes and folds printed theirs)."""
    found = {}
    for name in runner.notebook_names():
        for i, cell in enumerate(json.loads((ROOT / "book" / f"{name}.ipynb").read_text()).get("cells", [])):
            for out in cell.get("outputs", []):
                text = "".join(out.get("data", {}).get("text/plain", "")) + "".join(out.get("text", ""))
                if re.search(r" at 0x[0-9a-f]{6,}", text):
                    found.setdefault(name, []).append(i)
    assert not found, found
