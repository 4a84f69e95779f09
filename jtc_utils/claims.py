"""The paper's checkable claims (spec section 9), each judged by one function from the numbers behind the figures.

Every function takes ``get``, a function from a figure id to its numbers (by default read from ``book/data``;
chapters pass what they just computed), and returns a record ``{id, claim, paper, ours, holds, rule}``. The rule
that decides ``holds`` is written next to the claim and is the same for every profile. Where the stand-in has
fewer layers than the paper's model, layer numbers are scaled by depth (layer 44 of 48 becomes 22 of 24).
"""

from __future__ import annotations

import numpy as np

from . import figdata, linear

# the zoo has half the paper's depth; "layer 44 of 48" is compared at the same relative depth


def _arr(x) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x.astype(float)
    return figdata.as_array(list(x))


def default_get(fig: str) -> dict:
    return figdata.load(fig)["data"]


class NotComputed(LookupError):
    """The numbers behind a figure do not exist on the profile being judged (the real profile has one model size
    and an encoder without a masked-LM head); the claim gets no verdict there."""


# why a figure has no counterpart on the real profile
REAL_ABSENT = {
    **{f: "the real encoder (all-MiniLM-L6-v2) has no masked-LM head, so no token predictions"
       for f in ("fig6", "fig7", "fig9", "fig16", "fig17", "fig21", "fig29", "fig33", "table1", "plausibility")},
    **{f: "the real profile has one model size" for f in ("fig22", "fig23", "fig24", "fig25", "fig26", "fig27",
                                                          "fig28", "fig30", "fig31", "fig32")},
}


def profile_getter(prefix: str = "real_", results: dict | None = None, absent: dict | None = None):
    """A ``get`` for another profile's figures, stored as ``<prefix><fig>``: numbers just computed
    (``results``) or read from ``book/data``; a figure the profile does not have raises :class:`NotComputed`."""
    absent = REAL_ABSENT if absent is None else absent
    results = results or {}

    def get(fig):
        name = prefix + fig
        if name in results:
            return results[name]
        if fig in absent or not (figdata.DATA_DIR / f"{name}.json").exists():
            raise NotComputed(absent.get(fig, f"{name} has not been computed (run its chapter)"))
        return default_get(name)

    return get


def _available(get, figs) -> dict:
    """The numbers of those ``figs`` that exist on the profile (all of them on tiny and paper); NotComputed if
    none does. A rule "in every figure" is applied to every figure the profile has."""
    out, why = {}, None
    for f in figs:
        try:
            out[f] = get(f)
        except NotComputed as e:
            why = e
    if not out:
        raise why
    return out


def _scaled(layer: int, paper_L: int, L: int) -> int:
    return int(round(layer * L / paper_L))


def _p1_diff(d) -> np.ndarray:
    c = d["curves"]
    return _arr(c["mat"]["p@1"]) - _arr(c["id"]["p@1"])


def _rec(cid, claim, paper, ours, holds, rule):
    return {"id": cid, "claim": claim, "paper": paper, "ours": ours, "holds": None if holds is None else bool(holds),
            "rule": rule}


def c1a(get):
    figs = _available(get, ("fig2", "fig3", "fig12", "fig13", "fig22", "fig23", "fig24", "fig25"))
    shares = {f: linear.r2_summary(_arr(d["r2_mat"]), _arr(d["r2_id"]))["share_mat_above_id"]
              for f, d in figs.items()}
    return _rec("C1a", "mat r² > id r² for (almost) every layer pair", "every pair, Figs 2, 3, 12, 13, 22-25",
                "share of pairs with mat > id: " + ", ".join(f"{f} {v:.2f}" for f, v in shares.items()),
                min(shares.values()) >= 0.95, "share >= 0.95 in every figure")


def c1b(get):
    shares = {f: linear.r2_summary(_arr(d["r2_mat"]), _arr(d["r2_id"]))["share_id_below_0.1"]
              for f, d in _available(get, ("fig3", "fig13", "fig25")).items()}
    return _rec("C1b", "id r² is near or below 0 for most pairs of BERT", "most pairs (Figs 3, 13, 25)",
                "share of pairs with id r² < 0.1: " + ", ".join(f"{f} {v:.2f}" for f, v in shares.items()),
                min(shares.values()) > 0.5, "share > 0.5 in every BERT figure")


def c2(get):
    d = get("fig4")
    L = d["n_layers"]
    upto = _scaled(44, 48, L)
    diff = _p1_diff(d)[:upto]
    return _rec("C2", "till layer 44 of 48, P@1(mat) - P@1(id) > 0.2", "> 0.2 for l < 44 (Fig 4)",
                f"min difference over l < {upto} of {L}: {diff.min():.2f} (mean {diff.mean():.2f})",
                diff.min() > 0.2, f"difference > 0.2 at every l < {upto}")


def c3(get):
    d = get("fig4")
    L = d["n_layers"]
    n = _scaled(10, 48, L)
    ranges = {1: (0.28, 0.45), 5: (0.52, 0.74), 10: (0.62, 0.82)}
    means = {k: float(_arr(d["curves"]["mat"][f"p@{k}"])[:n].mean()) for k in ranges}
    ok = all(lo - 0.05 <= means[k] <= hi + 0.05 for k, (lo, hi) in ranges.items())
    return _rec("C3", "mat's early-layer precision: P@10 0.62-0.82, P@5 0.52-0.74, P@1 0.28-0.45",
                "ranges over the early layers (Fig 4)",
                f"mean over l < {n}: " + ", ".join(f"P@{k} {v:.2f}" for k, v in means.items()),
                ok, "each mean within the paper's range ± 0.05")


def c4(get):
    d = get("fig5")
    m, i = d["curves"]["mat"], d["curves"]["id"]
    L = d["n_layers"]
    below = _arr(m["surprisal"])[:L] < _arr(i["surprisal"])[:L]
    apart = _arr(m["surprisal_hi"])[:L] < _arr(i["surprisal_lo"])[:L]
    return _rec("C4", "mat's surprisal is substantially below id's at every layer before the last",
                "all l < L (Fig 5)", f"mat below id at {below.sum()}/{L} layers, 95% bands apart at {apart.sum()}/{L}",
                apart.all(), "95% bootstrap bands separate at every l < L")


def c5(get):
    d = get("fig6")
    L = d["n_layers"]
    n = _scaled(10, 24, L)
    vals = np.concatenate([_arr(d["curves"]["mat"][f"p@{k}"])[:n] for k in (1, 5, 10)])
    idv = _arr(d["curves"]["id"]["p@1"])[:n]
    return _rec("C5", "BERT: mat precision 0.2-0.6 over the first ten layers (all k); id close to 0 there",
                "mat 0.2-0.6, id near 0 (Fig 6)",
                f"l < {n}: mat {vals.min():.2f}-{vals.max():.2f}, id P@1 mean {idv.mean():.2f}",
                vals.min() >= 0.15 and vals.max() <= 0.65 and idv.mean() <= 0.1,
                "mat within 0.15-0.65 and id P@1 mean <= 0.1 over the first layers")


def c6(get):
    d = get("fig6")
    L = d["n_layers"]
    diff = _p1_diff(d)[:L]
    start = _scaled(3, 24, L)
    mat1 = _arr(d["curves"]["mat"]["p@1"])[start:L]
    share = float((diff > 0.17).mean())
    return _rec("C6", "BERT: P@1(mat) - P@1(id) > 0.17 at most layers; P@1(mat) > 0.25 from layer 3 of 24 on",
                "> 0.17 at most layers; > 0.25 from l = 3 (Fig 6)",
                f"difference > 0.17 at {share:.0%} of l < L; min P@1(mat) from l = {start}: {mat1.min():.2f}",
                share > 0.5 and mat1.min() > 0.25, f"share > 50% and P@1(mat) > 0.25 for l >= {start}")


def c7(get):
    shares, early = {}, {}
    for f, d in _available(get, ("fig4", "fig6", "fig26", "fig27", "fig28", "fig29")).items():
        L = d["n_layers"]
        shares[f] = float((_p1_diff(d)[:L] >= 0.15).mean())
        early[f] = float(_arr(d["curves"]["mat"]["p@1"])[:max(1, L // 4)].max())
    ok = min(shares.values()) > 0.5 and min(early.values()) > 0.3
    return _rec("C7", "mat beats id by 15-40% precision at most layers, in every model; > 30% correct from very "
                "early layers", "introduction; Figs 4, 6, 26-29",
                "share of layers with P@1 gain >= 0.15: " + ", ".join(f"{f} {v:.0%}" for f, v in shares.items())
                + "; best P@1(mat) in the first quarter: " + ", ".join(f"{f} {v:.2f}" for f, v in early.items()),
                ok, "gain >= 0.15 at more than half the layers and P@1(mat) > 0.3 within the first quarter, "
                    "in every model")


def _saved(get, fig):
    d = get(fig)
    return {m: d["saved"][m] for m in ("mat", "id")}, d["n_layers"]


# the paper's layers saved at 95% P@1 out of 24, and the shares it states (spec 6)
PAPER_SAVED = {"fig8": {"mat": (3.3, 0.138), "id": (1.4, 0.059)}, "fig9": {"mat": (4.8, 0.20), "id": (3.5, 0.146)}}


def _ee_claim(cid, fig, get):
    s, L = _saved(get, fig)
    (paper_mat, pm), (paper_id, pi) = PAPER_SAVED[fig]["mat"], PAPER_SAVED[fig]["id"]
    sm, si = s["mat"]["share"], s["id"]["share"]
    ok = sm > si and abs(sm - pm) <= 0.05 and abs(si - pi) <= 0.05
    return _rec(cid, f"at 95% P@1, early exit saves {paper_mat} layers with mat vs {paper_id} with id (of 24)",
                f"mat {paper_mat} ({pm:.1%}) vs id {paper_id} ({pi:.1%}) ({fig})",
                f"mat {s['mat']['saved']:.2f} ({sm:.1%}) vs id {s['id']['saved']:.2f} ({si:.1%}) of {L} layers",
                ok, "mat saves more, and each share of layers saved within 5 points of the paper's")


def c8(get):
    return _ee_claim("C8", "fig8", get)


def c9(get):
    return _ee_claim("C9", "fig9", get)


def _interp_early(d, m):
    from .early_exit import curve_points

    x, y = curve_points(_arr(d["early"][m]["x"]), _arr(d["early"][m]["y"]))
    L = d["n_layers"]
    grid = np.arange(1, L)
    grid = grid[(grid >= x.min()) & (grid <= x.max())]
    return grid, np.interp(grid, x, y)


def c10(get):
    parts, ok = [], True
    for f, d in _available(get, ("fig8", "fig9", "fig20", "fig21")).items():
        above_fixed = []
        curves = {}
        for m in ("mat", "id"):
            grid, y = _interp_early(d, m)
            curves[m] = dict(zip(grid.tolist(), y))
            above_fixed.append(float((y >= _arr(d["fixed"][m])[grid] - 1e-12).mean()))
        common = sorted(set(curves["mat"]) & set(curves["id"]))
        mat_above = float(np.mean([curves["mat"][g] >= curves["id"][g] for g in common]))
        ok &= min(above_fixed) >= 0.9 and mat_above >= 0.9
        parts.append(f"{f}: early >= fixed at {min(above_fixed):.0%}, mat >= id at {mat_above:.0%}")
    return _rec("C10", "early exit beats fixed exit for both mappings; the mat curves lie above the id curves",
                "Figs 8, 9, 20, 21", "; ".join(parts) + " of the layer counts", ok,
                "each share >= 90% of the integer layer counts both curves cover")


def c11(get):
    g, _ = _saved(get, "fig8")
    b, _ = _saved(get, "fig9")
    dg = g["mat"]["share"] - g["id"]["share"]
    db = b["mat"]["share"] - b["id"]["share"]
    ok = dg > 0 and db > 0 and abs(dg - 0.079) <= 0.05 and abs(db - 0.054) <= 0.05
    return _rec("C11", "mat saves an additional 7.9% (GPT-2) and 5.4% (BERT) of the layers over id", "abstract",
                f"GPT-style {dg:+.1%}, BERT-style {db:+.1%}", ok, "both positive and within 5 points of the paper's")


def _parts_p1(d):
    return {m: _arr(c["p@1"]) for m, c in d["curves"].items()}


def c12a(get):
    d = get("fig10")
    L = d["n_layers"]
    start = _scaled(7, 24, L)
    p = _parts_p1(d)
    done = np.isfinite(p["mat_attn"])  # the start layers computed (all of them, but on the real model)
    done[:start] = False
    done[L:] = False
    beats = {m: bool(np.all(p[m][done] >= p["mat"][done])) for m in ("mat_attn", "mat_ln1_ln2", "mat_ffn")}
    return _rec("C12a", "from layer ~7 of 24 on, every sub-module map beats mat (P@1)", "Fig 10 (GPT-2 medium)",
                f"from l = {start} of {L}: " + ", ".join(f"{m} >= mat: {v}" for m, v in beats.items()),
                all(beats.values()), f"each sub-module map's P@1 >= mat's at every l in {start}..{L - 1}")


def c12b(get):
    d = get("fig10")
    L = d["n_layers"]
    p = _parts_p1(d)
    means = {m: float(np.nanmean(p[m][:L])) for m in ("mat_attn", "mat_ln1_ln2", "mat_ffn")}
    best = max(means, key=means.get)
    return _rec("C12b", "replacing attention is the least harmful: mat_attn is the best sub-module map",
                "mat_attn above mat_ffn and mat_ln1_ln2 (Figs 10, 11, 34, 35)",
                "mean P@1 over l < L: " + ", ".join(f"{m} {v:.2f}" for m, v in means.items()),
                best == "mat_attn", "mat_attn has the highest mean P@1 of the three")


def c12c(get):
    d = get("fig10")
    L = d["n_layers"]
    a, b = _scaled(5, 24, L), _scaled(8, 24, L)
    p = _parts_p1(d)["mat_ln1_ln2"]
    done = np.flatnonzero(np.isfinite(p[:L]))  # computed start layers: the nearest ones spanning a..b
    a, b = int(done[done <= a].max()), int(done[done >= b].min())
    rise = float(p[b] - p[a])
    return _rec("C12c", "mat_ln1_ln2 rises sharply between layers 5 and 8 of 24", "Fig 10",
                f"P@1 of mat_ln1_ln2 from l = {a} to {b}: {p[a]:.2f} -> {p[b]:.2f} ({rise:+.2f})",
                rise >= 0.2, "a rise of at least 0.2 over those layers")


def c13(get):
    d = get("plausibility")
    if "skipped" in d:
        return _rec("C13", "mat's top-5 tokens are plausible far more often than id's", "85.36% vs 52.8% (human "
                    "annotator)", "not measured: " + d["skipped"], None, "needs word labels")
    tm, ti = d["token_rate"]["mat"], d["token_rate"]["id"]
    ok = tm - ti >= 0.5 * (0.8536 - 0.528) and d["id_better_share"] <= 2 * 0.043
    return _rec("C13", "mat's top-5 tokens are plausible far more often than id's; id is better in < 4.3% of "
                "instances", "85.36% vs 52.8% (human annotator); id better in < 4.3%",
                f"automatic (word class of the slot): mat {tm:.1%} vs id {ti:.1%}; id better in "
                f"{d['id_better_share']:.1%} of {d['n_instances']} instances", ok,
                "gap at least half the paper's (16 points) and id better in at most 8.6% of instances")


def c14(get):
    d = get("table1")
    if "matches_paper" in d:  # the paper profile: the id and final columns must be the paper's, token for token
        same = all(all(v.values()) for v in d["matches_paper"].values())
        return _rec("C14", "Table 1's id and final columns are deterministic (the model's own output)",
                    "token for token as printed (BERT-large)", f"identical to the paper's columns: {same}",
                    same and d["final_matches_model"], "every id and final column equals the paper's")
    return _rec("C14", "Table 1's id and final columns are deterministic (the model's own output)",
                "token for token identical to the paper (BERT-large)",
                f"final column equals BertForMaskedLM's own top-5: {d['final_matches_model']}; id columns "
                f"recomputed identically: {d['id_deterministic']}",
                d["final_matches_model"] and d["id_deterministic"], "both checks true (the paper's tokens need "
                "bert-large-uncased: run the paper profile)")


def c15(get):
    # news against the main domain on the same model: fig27 (GPT-2 medium), or fig4 on a profile with one size
    pairs = {"GPT": ("fig14", ("fig27", "fig4")), "BERT": ("fig16", ("fig6",))}
    diffs, orders = {}, {}
    for fam, (news, mains) in pairs.items():
        try:
            a, b = get(news), next(iter(_available(get, mains).values()))
        except NotComputed:
            continue
        diffs[fam] = float(np.abs(_arr(a["curves"]["mat"]["p@1"]) - _arr(b["curves"]["mat"]["p@1"])).mean())
        orders[fam] = bool((_p1_diff(a)[:a["n_layers"]] > 0).mean() >= 0.9)
    if not diffs:
        raise NotComputed("no news figure on this profile")
    ee = [d["saved"]["mat"]["share"] > d["saved"]["id"]["share"]
          for d in _available(get, ("fig20", "fig21")).values()]
    ok = max(diffs.values()) < 0.1 and all(orders.values()) and all(ee)
    return _rec("C15", "results on news (Leipzig) are similar to Wikipedia", "Figs 12-21 vs 2-9",
                "mean |P@1(mat) news - main domain|: " + ", ".join(f"{k} {v:.2f}" for k, v in diffs.items())
                + f"; mat > id on news at >= 90% of layers: {list(orders.values())}; early exit saves more with "
                f"mat on news: {ee}", ok, "curves within 0.1 on average, and the same orderings on news")


CLAIMS = {"C1a": c1a, "C1b": c1b, "C2": c2, "C3": c3, "C4": c4, "C5": c5, "C6": c6, "C7": c7, "C8": c8, "C9": c9,
          "C10": c10, "C11": c11, "C12a": c12a, "C12b": c12b, "C12c": c12c, "C13": c13, "C14": c14, "C15": c15}


def check(cid: str, get=default_get) -> dict:
    """The record of claim ``cid`` judged on the numbers ``get`` gives; a claim whose figures the profile does not
    have gets no verdict (``holds`` None) and says why."""
    if cid not in CLAIMS:
        raise ValueError(f"unknown claim {cid!r}; known: {', '.join(CLAIMS)}")
    try:
        return CLAIMS[cid](get)
    except NotComputed as e:
        text = CLAIMS[cid](default_get)  # the claim's wording and rule, from the stand-in's numbers
        return {**text, "ours": f"not computed on this profile: {e}", "holds": None}


def getter(results: dict, alias: dict | None = None):
    """A ``get`` that uses numbers just computed (``results[fig]``) and reads the others from ``book/data``.
    ``alias`` judges a claim on another figure's numbers (``{"fig10": "ext_bert_fig10"}`` applies the rules of
    the GPT-2 claim C12 to the BERT-style extension)."""
    alias = alias or {}

    def get(fig):
        fig = alias.get(fig, fig)
        return results[fig] if fig in results else default_get(fig)

    return get


def all_claims(get=default_get) -> list[dict]:
    """Every claim, judged from the stored numbers (a missing figure file is an error: run its chapter first)."""
    return [check(cid, get) for cid in CLAIMS]


VERDICTS = {True: "HOLDS", False: "DOES NOT HOLD", None: "-"}
_COLOURS = {"HOLDS": "color: #1a7f37; font-weight: bold", "DOES NOT HOLD": "color: #cf222e; font-weight: bold"}


def frame(records: list[dict]):
    """Claim records (of this module or of a subpackage's ``claims``) as a table indexed by id, with a ``verdict``
    column in words."""
    import pandas as pd

    table = pd.DataFrame(records).set_index("id")
    table["verdict"] = table["holds"].map(VERDICTS)
    return table


def styled(records: list[dict], uuid: str, columns=("ours", "verdict")):
    """:func:`frame` of ``records`` as an HTML table with coloured verdicts. ``uuid`` fixes the table's HTML id
    (pandas draws a random one), so that a re-executed page is identical."""
    return frame(records)[list(columns)].style.set_uuid(uuid).map(lambda v: _COLOURS.get(v, ""), subset=["verdict"])


def verdict_table(ids=None, get=default_get, show: bool = True):
    """The claims ``ids`` (default: all) as a table with the paper's number, ours and the verdict; printed in
    full (no truncated cells) when ``show``."""
    import pandas as pd

    table = frame([check(c, get) for c in (ids or CLAIMS)])
    if show:
        with pd.option_context("display.max_colwidth", None, "display.width", 250):
            print(table[["paper", "ours", "verdict"]].to_string())
    return table
