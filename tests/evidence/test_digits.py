"""Stored outputs show only digits that survive other arithmetic: the printed values that another machine's nbval
run found different (issue 31) print the same now, and no nbval-checked output shows a noise-level number."""

import copy
import json
import re

import pandas as pd
import pytest

from jtc_utils.core.infra.paths import BOOK_DIR
from jtc_utils.evidence import digits, figdata


def test_a_deviation_that_should_be_zero_shows_its_bound():
    # ffn_subupdates: "1.4e-06" against "1.1e-06"; its real-model cell: relative deviations of 4e-07 to 3e-08
    assert f"{1.4e-6:.1e}" != f"{1.1e-6:.1e}"  # the old output
    assert digits.bound(1.4e-6, 1e-5) == digits.bound(1.1e-6, 1e-5) == "below 1e-05"
    assert digits.bound(4e-7, 1e-5) == digits.bound(3e-8, 1e-5)
    # a deviation that breaks its bound is shown, and says so
    assert digits.bound(2e-4, 1e-5) == "2.0e-04, NOT below 1e-05"


def test_a_broken_models_perplexity_shows_three_significant_digits():
    # secretly_linear: a pruned model's perplexity, 124390.18 against 124390.53
    assert f"{124390.18:.2f}" != f"{124390.53:.2f}"
    assert digits.sig(124390.18) == digits.sig(124390.53) == "124,000"  # plain decimals: no exponent in a column
    assert digits.sig(31.4243) == "31.4" and digits.sig(float("nan")) == "nan"
    assert digits.sig(0.00012345) == "0.000123" and digits.sig(-0.06128, 4) == "-0.06128" and digits.sig(0) == "0"
    assert digits.sig(999.7) == "1,000" and digits.sig(9.996, 3) == "10.0"


def test_the_identity_gap_of_the_linearity_verdict_is_its_bound():
    # secretly_linear's verdict table: "holds to 4.1e-15" against "3.6e-15"
    from jtc_utils.linearity import claims

    d = figdata.load("sl_fig1")["data"]
    texts = []
    for gap in (4.1e-15, 3.6e-15):
        moved = copy.deepcopy(d)
        for v in moved.values():
            for p in v.values():
                if isinstance(p, dict) and "nores_identity" in p:
                    p["nores_identity"] = [x + gap for x in p["nores_in"]]
        texts.append(claims.s2(lambda fig: moved)["ours"])
    assert texts[0] == texts[1] and "below 1e-08" in texts[0]


def test_decimals_follow_the_tolerance():
    assert digits.decimals_for(0.04) == 1 and digits.decimals_for(2e-3) == 2 and digits.decimals_for(1e-6) == 5
    with pytest.raises(ValueError, match="positive"):
        digits.decimals_for(0)
    mixed = pd.DataFrame({"family": ["gpt2"], "r2": [0.949137]}, dtype=object)
    assert mixed.round(3)["r2"][0] == 0.949137  # pandas leaves an object column as it is
    assert digits.frame(mixed, 3)["r2"][0] == 0.949 and digits.frame(mixed, 3)["family"][0] == "gpt2"


# a number in scientific notation below 1e-4 (a deviation, a gap, an identity's rounding): noise on another
# machine unless it is a bound ("below 1e-05")
NOISE_NUMBER = re.compile(r"(?<!below )(?<![\d.])\d(\.\d+)?e-(0[5-9]|[1-9]\d)\b")


def _checked_outputs(nb_path):
    nb = json.loads(nb_path.read_text())
    for i, cell in enumerate(c for c in nb["cells"] if c["cell_type"] == "code"):
        if "nbval-check-output" not in cell.get("metadata", {}).get("tags", []):
            continue
        for out in cell.get("outputs", []):
            text = out.get("text") or "".join(out.get("data", {}).get("text/plain", "")) + "".join(
                out.get("data", {}).get("text/html", "")
            )
            yield i, "".join(text)


@pytest.mark.parametrize("page", sorted(p.name for p in BOOK_DIR.glob("*.ipynb")))
def test_no_checked_output_shows_a_noise_level_number(page):
    bad = [(i, m.group(0)) for i, text in _checked_outputs(BOOK_DIR / page) for m in NOISE_NUMBER.finditer(text)]
    assert not bad, f"{page}: nbval-checked cells print noise-level numbers (cell, number): {bad}"


def test_the_noise_pattern_finds_the_old_outputs():
    assert NOISE_NUMBER.search("largest deviation over 3000 samples and all blocks: 1.1e-06 (< 1e-5: True)")
    assert NOISE_NUMBER.search("the identity holds to 3.6e-15")
    assert not NOISE_NUMBER.search("largest deviation: below 1e-05")
    assert not NOISE_NUMBER.search("perplexity 1.24e+05 at k = 2")
