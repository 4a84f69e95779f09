"""The lens chapter's tables as pandas frames, from a figure's stored numbers: every lens at L/4, L/2 and 3L/4
(:func:`quarter_table`) and each lens's early exit (:func:`exit_summary`).
"""

from __future__ import annotations

import pandas as pd

from .names import reader_name


# a metric's key in the lens tables' numbers, as a table heads it
METRIC_NAMES = {"p@1": "P@1", "kl": "KL", "ce_gold": "next-token CE", "r2": "r²"}


def quarter_table(t: dict, metrics=("p@1",)) -> pd.DataFrame:
    """The all-lenses table at L/4, L/2 and 3L/4: one row per lens, its parameters per layer (and share of d²), and
    each metric at the three layers."""
    rows = []
    for label, row in t["lenses"].items():
        layers = list(row["layers"])
        r = {
            "lens": reader_name(label),
            "method": row["method"],
            "objective": row["objective"],
            "params": row["params"],
            "share of d²": f"{row['params_share']:.1%}",
        }
        for m in metrics:
            for q in t["quarters"]:
                r[f"{METRIC_NAMES.get(m, m)} ℓ={q}"] = round(float(row[m][layers.index(q)]), 3)
        rows.append(r)
    return pd.DataFrame(rows)


def exit_summary(t: dict) -> pd.DataFrame:
    """Per lens of a table with early-exit curves (``lens_table``, ``real_lens_exit``): the layers saved at 95%
    Precision@1 under the confidence rule and under the oracle, and the mean saturation layer (two decimals)."""
    return pd.DataFrame(
        [
            {
                "lens": reader_name(lab),
                "layers saved at 95% (rule)": round(r["exit"]["saved"]["saved"], 2),
                "layers saved at 95% (oracle)": round(r["exit"]["oracle"]["saved"]["saved"], 2),
                "mean saturation layer": round(r["exit"]["oracle"]["mean_saturation"], 2),
            }
            for lab, r in t["lenses"].items()
            if "exit" in r
        ]
    ).set_index("lens")
