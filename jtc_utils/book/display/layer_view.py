"""What each layer "says", position by position, drawn: the prediction trajectories of sentences under ``id`` and
``mat`` (and the tuned lens, ``mappings=("id", "mat", "tuned")``), computed by
:func:`jtc_utils.lenses.trajectory.trajectory`.

:func:`figure` draws trajectories as an interactive plotly figure (one heatmap per mapping,
stacked, a menu to pick the sentence); :func:`html` embeds it in a static page that loads plotly from the built
book (``plotly.min.js`` at its root, copied there from the plotly package at build time), so the view works offline.
In a live notebook call ``.show()`` on the figure instead, for any typed sentence.
"""

from __future__ import annotations

MAPPINGS = ("id", "mat")  # the paper's two mappings, which the view draws by default
BOOK_MAPPINGS = ("id", "mat", "tuned")  # the book's view (its numbers: jtc_utils.lenses.trajectory.record)


LABEL_CHARS = 26  # the sentence menu's labels are cut here, so that the menu fits a phone's screen (its first 342 px)


def _ticks(traj: dict) -> dict:
    """The x axis of one sentence: its positions, labelled with their tokens."""
    T = len(traj["tokens"])
    return {
        "tickvals": list(range(T)),
        "ticktext": [f"{i}: {tok}" for i, tok in enumerate(traj["tokens"])],
        "range": [-0.5, T - 0.5],
    }


CELL_CHARS = 5  # a cell shows at most this many characters of its token (a longer one ends in "…"; hover shows it)


def short(token: str, chars: int = CELL_CHARS) -> str:
    """A token as its heatmap cell shows it: cut to ``chars`` characters, so that it never spills into the cells
    beside it."""
    return token if len(token) <= chars else token[: chars - 1] + "…"


def figure(trajectories: list[dict], mappings=MAPPINGS, title: str | None = None):
    """An interactive figure: for each trajectory one heatmap per mapping, stacked (rows: layers, columns:
    positions, colour: the top token's probability, text: the token), and a menu to switch between
    trajectories. The x axis is the position (0, 1, ...), labelled with the chosen sentence's tokens: choosing a
    sentence swaps the heatmaps and the axis labels together, so every cell sits under its own token."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    n = len(mappings)
    rows = max(len(traj[m]["p"]) for traj in trajectories for m in mappings)
    height = 140 + n * (rows * 13 + TICKS_PX)
    # every panel names its tokens under it (on a phone the panels are a screen apart)
    fig = make_subplots(
        rows=n,
        cols=1,
        subplot_titles=[f"<b>{m}</b>" for m in mappings],
        shared_xaxes=True,
        vertical_spacing=(TICKS_PX + 30) / height,
    )
    for t, traj in enumerate(trajectories):
        x = list(range(len(traj["tokens"])))
        for r, m in enumerate(mappings):
            fig.add_trace(
                go.Heatmap(
                    z=traj[m]["p"],
                    text=[[short(tok) for tok in row] for row in traj[m]["token"]],
                    x=x,
                    y=list(range(len(traj[m]["p"]))),
                    zmin=0,
                    zmax=1,
                    customdata=[[[pos, tok] for pos, tok in zip(traj["tokens"], row)] for row in traj[m]["token"]],
                    colorscale="Blues",
                    texttemplate="%{text}",
                    textfont={"size": 10},
                    showscale=r == 0,
                    colorbar={"title": "p(top)", "len": 0.5, "y": 1, "yanchor": "top"},
                    visible=t == 0,
                    name=m,
                    hovertemplate="layer %{y}, after %{x}: %{customdata[0]}<br>top token %{customdata[1]} "
                    "(p = %{z:.2f})<extra>" + m + "</extra>",
                ),
                row=r + 1,
                col=1,
            )
    axes = ["xaxis"] + [f"xaxis{r + 1}" for r in range(1, n)]

    def label(traj):
        s = "".join(traj["tokens"]).replace("␣", " ").strip()
        return f"{traj['model']}: {s[:LABEL_CHARS] + '…' if len(s) > LABEL_CHARS else s}"

    buttons = [
        {
            "label": label(traj),
            "method": "update",
            "args": [
                {"visible": [k // n == t for k in range(n * len(trajectories))]},
                {f"{ax}.{k}": v for ax in axes for k, v in _ticks(traj).items()},
            ],
        }
        for t, traj in enumerate(trajectories)
    ]
    fig.update_layout(
        height=height,
        margin={"l": 50, "r": 20, "t": 80, "b": 20},
        title={"text": title, "x": 0, "y": 0.995} if title else None,
        updatemenus=[
            {
                "buttons": buttons,
                "x": 0,
                "xanchor": "left",
                "y": 1.0,
                "yanchor": "bottom",
                "pad": {"b": 30},
                "font": {"size": 11},
            }
        ],
    )
    for r in range(n):
        fig.update_yaxes(title_text="layer", row=r + 1, col=1)
    fig.update_xaxes(
        tickangle=-60, tickfont={"size": 9}, tickmode="array", showticklabels=True, **_ticks(trajectories[0])
    )
    return fig


TICKS_PX = 80  # the height of a panel's rotated token labels
VIEW_MIN_PX = 640  # the view is never drawn narrower (a phone scrolls it sideways): 16 columns of TEXT_MIN_PX
# copied to the root of the built book from the plotly package (jtc_utils.book.build.runner)
PLOTLY_JS = "../plotly.min.js"
TEXT_MIN_PX = 30  # a cell narrower than this shows no token text: the colours stay, the token is in the axis label
# and on hover

# draws the figure once its div comes within a screen of the viewport, loading plotly first if no view on the page
# has: plotly (4.8 MB, 1.5 MB compressed) is then fetched only by a reader who scrolls to the view
_LAZY = """<script type="text/javascript">
(function () {
  var div = document.getElementById(%(id)s);
  if (!div) { return; }
  var started = false;
  function fit() {  // the cells' token text only where a column is wide enough to hold it
    var xa = div._fullLayout && div._fullLayout.xaxis;
    if (!xa) { return; }
    var want = xa._length / (xa.range[1] - xa.range[0]) >= %(min_px)d ? "%%{text}" : "";
    if (div._jtcText !== want) { div._jtcText = want; Plotly.restyle(div, {texttemplate: want}); }
  }
  function draw() {
%(draw)s
    var tries = 0;
    (function hook() {
      if (div.on) { div.on("plotly_afterplot", fit); fit(); }
      else if (tries++ < 100) { setTimeout(hook, 50); }
    })();
  }
  function load() {
    if (started) { return; }
    started = true;
    if (window.Plotly) { draw(); return; }
    var s = document.getElementById("jtc-plotly-js");
    if (!s) {
      s = document.createElement("script");
      s.id = "jtc-plotly-js";
      s.src = %(src)s;
      document.head.appendChild(s);
    }
    s.addEventListener("load", draw);
  }
  if ("IntersectionObserver" in window) {
    new IntersectionObserver(function (entries, seen) {
      if (entries.some(function (e) { return e.isIntersecting; })) { seen.disconnect(); load(); }
    }, {rootMargin: "100%% 0px"}).observe(div);
  } else {
    load();
  }
})();
</script>"""


def html(fig, div_id: str) -> str:
    """The figure as HTML for a static page of the book: plotly's script from the root of the built book
    (no network), without plotly's toolbar (on a phone it covered the sentence menu; zoom by dragging, double-click
    to reset), loaded when the reader scrolls near the view (not with the page), and a fixed div id (so that a
    re-executed page is identical)."""
    import json
    import re

    out = fig.to_html(
        full_html=False,
        include_plotlyjs=False,
        div_id=div_id,
        config={"responsive": True, "displaylogo": False, "displayModeBar": False},
    )
    scripts = re.findall(r"<script>(.*?)</script>", out, flags=re.S)
    if len(scripts) != 1:
        raise RuntimeError(f"plotly's HTML has {len(scripts)} inline scripts, expected one: update layer_view.html")
    lazy = _LAZY % {"id": json.dumps(div_id), "src": json.dumps(PLOTLY_JS), "draw": scripts[0], "min_px": TEXT_MIN_PX}
    out = out.replace(f"<script>{scripts[0]}</script>", lazy)
    # at least VIEW_MIN_PX wide, in a box that scrolls sideways where the column is narrower (a phone): every cell
    # keeps room for its token
    graph = 'class="plotly-graph-div" style="'
    out = out.replace(graph, f"{graph}min-width:{VIEW_MIN_PX}px; ", 1)
    return f'<div class="jtc-wide-view" style="overflow-x: auto; max-width: 100%">{out}</div>'
