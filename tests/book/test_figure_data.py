"""The JTC paper's invariants on the stored figure data, and its claims judged from them (the recomputation of
every figure is tests/book/test_figure_regression.py)."""

import json

import numpy as np
import pytest

from jtc_utils.book.display import claim_tables
from jtc_utils.core.infra.paths import DATA_DIR, ROOT
from jtc_utils.evidence import claims, figdata, findings
from jtc_utils.jtc import claims as jtc_claims
from jtc_utils.jtc import figures, seeds, shortcut_claims

pytestmark = [pytest.mark.jtc]  # the JTC paper's package

FIG_FILES = sorted(f for f in figures.FIGURES if (DATA_DIR / f"{f}.json").exists())
R2_FILES = [f for f in FIG_FILES if figures.FIGURES[f][0] == "r2"]


def test_every_figure_of_the_registry_has_its_data():
    missing = set(figures.FIGURES) - set(FIG_FILES)
    # the section-6 figures come with their own chapter
    assert not {f for f in missing if not figures.FIGURES[f][0].startswith("parts")}, missing


@pytest.mark.parametrize("fig", R2_FILES)
def test_paper_invariants_hold_on_the_stored_numbers(fig):
    d = figdata.load(fig)["data"]
    r2_mat, r2_id = figdata.as_array(d["r2_mat"]), figdata.as_array(d["r2_id"])
    tr_mat, tr_id = figdata.as_array(d["r2_mat_train"]), figdata.as_array(d["r2_id_train"])
    n = r2_mat.shape[0]
    assert n == d["n_layers"] + 1
    assert np.all(np.diag(r2_mat) == 1) and np.all(np.diag(r2_id) == 1)
    assert np.isnan(r2_mat[np.tril_indices(n, -1)]).all()
    upper = np.triu_indices(n, 1)
    assert np.all(r2_mat[upper] <= 1 + 1e-12)
    # least squares is the best linear map on the data it was fitted on, and id is a linear map
    assert np.all(tr_mat[upper] >= tr_id[upper] - 1e-9)
    json.dumps(d)  # plain JSON


@pytest.mark.parametrize("fig", [f for f in FIG_FILES if figures.FIGURES[f][0] in ("pk", "surp", "ee")])
def test_prediction_invariants_hold_on_the_stored_numbers(fig):
    """At l = L every mapping is the model itself; bands contain the mean; early-exit endpoints (spec 9)."""
    d = figdata.load(fig)["data"]
    L = d["n_layers"]
    kind = figures.FIGURES[fig][0]
    if kind == "pk":
        for c in d["curves"].values():
            assert c["p@1"][L] == c["p@5"][L] == c["p@10"][L] == 1
            assert all(a <= b + 1e-12 <= c_ + 2e-12 for a, b, c_ in zip(c["p@1"], c["p@5"], c["p@10"]))
    elif kind == "surp":
        last = {m: c["surprisal"][L] for m, c in d["curves"].items()}
        assert len(set(np.round(list(last.values()), 10))) == 1
        for c in d["curves"].values():
            assert all(
                lo - 1e-12 <= m <= hi + 1e-12 for lo, m, hi in zip(c["surprisal_lo"], c["surprisal"], c["surprisal_hi"])
            )
    else:
        for m, e in d["early"].items():
            lams = e["lambdas"]
            assert e["x"][lams.index(-1.112)] == 1 and e["y"][lams.index(-1.112)] == pytest.approx(d["fixed"][m][1])
            assert e["x"][lams.index(1.112)] == L and e["y"][lams.index(1.112)] == 1


def test_claims_page_matches_the_stored_numbers():
    stored = figdata.load("claims")["data"]
    assert stored == figdata.plain(seeds.all_claims())  # seed 0's records with the replicas' verdicts
    assert {r["id"] for r in stored} >= set(jtc_claims.CLAIMS)
    for r in stored:
        assert set(r) - {"per_seed", "seeds_differ"} == {
            "id",
            "claim",
            "quote",
            "paper",
            "ours",
            "holds",
            "rule",
            "magnitude",
            "margin",
            "unit",
            "words",
            "statistic",
            "kind",
            "verdict",
            "lo",
            "hi",
            "share",
            "resampled",
            "reason",
            "no_interval",
            "resamples",
            "checks",
            "status",
        } | ({"spread"} if r["resampled"] else set())
        assert r["resamples"] == (["validation samples"] if r["resampled"] else []), r["id"]
        assert r["holds"] in (True, False, None)
        assert r["holds"] is {"holds": True, "fails": False}.get(r["verdict"])
        # off the paper profile the paper's numbers are shown, never judged
        assert r["magnitude"] is None or r["magnitude"]["holds"] is None


def test_every_claim_of_every_paper_links_to_a_page_of_the_book():
    from jtc_utils.ffn import claims as ffn_claims
    from jtc_utils.lenses import claims as lens_claims
    from jtc_utils.linearity import claims as sl_claims

    toc = (ROOT / "_toc.yml").read_text()
    for table in (jtc_claims.CLAIMS, lens_claims.CLAIMS, ffn_claims.CLAIMS, sl_claims.CLAIMS):
        for cid in table:
            assert f"book/{claim_tables.page_of(cid)}" in toc, cid
    with pytest.raises(ValueError, match="no chapter"):
        claim_tables.page_of("Z1")


def test_two_verdicts_judge_shape_everywhere_and_magnitude_on_the_paper_profile_only():
    d = figdata.load("fig4")["data"]
    rec = shortcut_claims.c2(lambda fig: d)
    L = d["n_layers"]
    gain = np.asarray(d["curves"]["mat"]["p@1"][:L]) - np.asarray(d["curves"]["id"]["p@1"][:L])
    assert rec["holds"] == bool((gain > 0).all())  # shape: mat above id at every layer
    assert rec["magnitude"]["holds"] == bool(gain[: shortcut_claims.scaled_layer(44, 48, L)].min() > 0.2)
    assert claims.judged(rec, "tiny")["magnitude"] == {**rec["magnitude"], "holds": None, "note": claims.NOT_JUDGED}
    assert claims.judged(rec, "paper") == rec
    # a curve dragged below id at one layer breaks the shape verdict ("every layer" means every layer)
    worse = json.loads(json.dumps(d))
    worse["curves"]["mat"]["p@1"][1] = worse["curves"]["id"]["p@1"][1] - 0.01
    assert shortcut_claims.c2(lambda fig: worse)["holds"] is False
    # C3 gives only magnitudes: no shape verdict, and the words say so
    c3 = jtc_claims.check("C3")
    assert c3["holds"] is None and findings.shape_verdict(c3).startswith("no verdict")
    assert findings.magnitude_verdict(c3) == claims.NOT_JUDGED


def test_summary_line_counts_the_findings():
    def rec(cid, verdict, stat, resampled=True, kind="claim", ours="x"):
        return {
            "id": cid,
            "claim": cid,
            "ours": ours,
            "verdict": verdict,
            "resampled": resampled,
            "kind": kind,
            "statistic": stat,
            "margin": 1.0 if verdict == "holds" else -1.0,
            "rule": "r",
            "magnitude": None,
        }

    recs = [
        rec("A", "holds", "s1"),
        rec("A2", "holds", "s1"),
        rec("B", "fails", "s2"),
        rec("U", "undecided", "s3"),
        rec("P", "holds", "s4", resampled=False),
        rec("K", "holds", "k", kind="check"),
        {
            **rec("C", None, "s5", ours="not computed on this profile: why"),
            "margin": None,
            "status": claims.NOT_COMPUTED_STATUS,
        },
    ]
    line = findings.summary(recs, "tiny")
    assert "4 findings from 5 claim sentences: 1 hold, 1 fail, 1 undecided" in line
    assert "1 without an interval" in line and "1 claim cannot be computed" in line and "Checks: 1 of 1 pass" in line
    assert "not judged on the tiny profile" in line
    mixed = findings.findings([rec("A", "holds", "s"), rec("B", "fails", "s")])
    assert [f["verdict"] for f in mixed] == ["mixed"]
    paper = [{**recs[2], "magnitude": {"holds": True}}]
    assert "Magnitude: 1 of 1 hold" in findings.summary(paper, "paper")


def test_verdict_tables_are_html_with_anchors_and_links():
    recs = [jtc_claims.check(c) for c in ("C2", "C12b")]
    html = claim_tables.styled(recs, "t").to_html()
    assert html.startswith('<div class="jtc-scroll">') and 'class="jtc-claims jtc-sentences"' in html
    assert 'id="claim-c2"' in html and "HOLDS" in html and "&lt;" in html  # cell text escaped, ids raw
    linked = claim_tables.styled(recs, "t", link="page").to_html()
    assert 'href="sec4_predictions.html#claim-c2"' in linked and 'href="sec6_submodules.html#claim-c12b"' in linked


def test_claims_in_the_papers_regime_match_their_stored_figures():
    from jtc_utils.jtc import regime

    stored = figdata.load("claims_regime")["data"]
    get = claims.profile_getter(regime.REGIME_PREFIX, absent={})
    assert stored == figdata.plain(jtc_claims.all_claims(get))


@pytest.mark.parametrize("name", sorted(p.stem for p in DATA_DIR.glob("sample_size_*.json")))
def test_sample_size_invariants_hold_on_the_stored_numbers(name):
    s = figdata.load(name)["data"]
    assert s["n_train"] == sorted(s["n_train"]) and s["n_train"][-1] == s["n_full"]
    # least squares fits its own training vectors at least as well as it predicts new ones, on average
    assert np.mean(s["r2_mat_train"]) >= np.mean(s["r2_mat"])


@pytest.mark.parametrize("fig", [f for f in FIG_FILES if figures.FIGURES[f][0] in ("parts_pk", "parts_surp")])
def test_every_legend_entry_of_the_submodule_figures_is_drawn(fig):
    """Section 6's sub-module maps are measured from some start layers only (every 5th on the real model): each
    curve is drawn through its measured layers, so every mapping in the legend has a visible line (two or more
    points joined) in its colour, and a sparse curve a marker on each measured layer."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba

    from jtc_utils.jtc import plots
    from jtc_utils.jtc.plots import draw

    stored = figdata.load(fig)
    out = draw(fig, stored["data"], stored["params"])
    ax = out.axes[0]
    drawn = [
        ln
        for ln in ax.lines
        if ln.get_visible()
        and ln.get_linestyle() not in ("", "None")
        and np.isfinite(np.asarray(ln.get_ydata(), dtype=float)).sum() >= 2
    ]
    handles, names = (
        ax.get_legend_handles_labels()
        if ax.get_legend() is None
        else (ax.get_legend().legend_handles, [t.get_text() for t in ax.get_legend().get_texts()])
    )
    assert set(names) >= set(stored["data"]["curves"])
    for h, name in zip(handles, names):
        if name not in stored["data"]["curves"]:
            continue  # the line widths' key (k=1, ...)
        colour = to_rgba(h.get_color())
        assert any(to_rgba(ln.get_color()) == colour for ln in drawn), f"{fig}: no visible line for {name!r}"
    for m, c in stored["data"]["curves"].items():
        v = np.asarray(next(iter(c.values())), dtype=float)
        if not np.isfinite(v).all():  # sparse: a marker on each measured layer, in the mapping's colour
            marked = {
                int(x)
                for ln in ax.lines
                if ln.get_marker() not in ("", "None", None) and to_rgba(ln.get_color()) == to_rgba(plots.COLORS[m])
                for x in ln.get_xdata()
            }
            assert set(np.flatnonzero(np.isfinite(v)).tolist()) <= marked, f"{fig}: {m} lacks markers"
    plt.close(out)


def test_a_single_k_plot_has_no_line_width_key_in_its_legend():
    """With one k the line widths mean nothing: the legend names the mappings only (the y label names k)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from jtc_utils.jtc import plots

    curves = {m: {"p@1": [0.1, 0.5, 1.0], "p@5": [0.3, 0.7, 1.0]} for m in ("mat", "id")}
    one = plots.precision_curves(curves, ks=(1,))
    two = plots.precision_curves(curves, ks=(1, 5))
    names = [[t.get_text() for t in f.axes[0].get_legend().get_texts()] for f in (one, two)]
    plt.close("all")
    assert names[0] == ["mat", "id"] and one.axes[0].get_ylabel() == "Precision@1"
    assert {"k=1", "k=5"} <= set(names[1])


@pytest.mark.parametrize(
    "fig",
    [
        f
        for f in FIG_FILES
        if figures.FIGURES[f][0] in ("labels", "norms", "parts_pk", "parts_surp", "pk", "r2_first", "surp")
    ],
)
def test_a_layer_axis_has_whole_numbered_ticks(fig):
    """Layers are counted: an axis of layers shows no tick such as 2.5."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from jtc_utils.jtc.plots import draw

    stored = figdata.load(fig)
    out = draw(fig, stored["data"], stored["params"])
    out = out if hasattr(out, "axes") else out.figure
    for ax in out.axes:
        label = ax.get_xlabel()
        if label.startswith(("layer", "source layer", "pair")) and "processed" not in label:
            lo, hi = ax.get_xlim()
            ticks = [t for t in ax.get_xticks() if lo - 1e-9 <= t <= hi + 1e-9]
            assert all(float(t).is_integer() for t in ticks), (fig, label, ticks)
    plt.close("all")
