"""What each layer "says", position by position: the prediction trajectory of a sentence under ``id`` and ``mat``.

For a GPT-style model and one sentence, :func:`trajectory` casts the hidden state at every layer and position to the
last layer with each mapping and reads out the top token and its probability, like the tuned lens's prediction
trajectory plot. :func:`figure` draws trajectories as an interactive plotly figure (one heatmap per mapping,
stacked, a menu to pick the sentence); :func:`html` embeds it in a static page that loads plotly from the built
book (``plotly.min.js`` at its root, copied there from the plotly package at build time), so the view works offline.
In a live notebook call ``.show()`` on the figure instead, for any typed sentence.
"""

from __future__ import annotations

import numpy as np

from . import predictions, top_tokens

MAPPINGS = ("id", "mat")
MAX_TOKENS = 16  # longer sentences are cut: the view is for reading, and a 16-column heatmap still fits


def _ids(ad, sentence: str) -> list[int]:
    if not isinstance(sentence, str) or not sentence.strip():
        raise ValueError(f"sentence must be a non-empty string, got {sentence!r}")
    ids = ad.tokenizer(sentence, add_special_tokens=False)["input_ids"][:MAX_TOKENS]
    if not ids:
        raise ValueError(f"the sentence {sentence!r} has no tokens for {ad.name}")
    return ids


def trajectory(exp, sentence: str | None = None, ids=None, mappings=MAPPINGS) -> dict:
    """Top-1 token and its probability at every layer 0..L and position of one sentence (typed, or given as token
    ids), under each of ``mappings``: ``{"tokens", "model", mapping: {"token": [L+1][T], "p": [L+1][T]}}``.
    Position i shows the prediction of the token after it; the last row (layer L) is the model's own output."""
    import torch

    ad = exp.adapter
    if not ad.causal:
        raise ValueError(f"{exp.model_name} is not a decoder: the trajectory view reads next-token predictions, so "
                         f"use a GPT-style model (a masked model predicts only its [MASK] positions: see Table 1)")
    unknown = set(mappings) - set(predictions.MAPPINGS)
    if unknown:
        raise ValueError(f"unknown mappings {sorted(unknown)}; choose from {', '.join(predictions.MAPPINGS)}")
    ids = _ids(ad, sentence) if ids is None else [int(i) for i in ids][:MAX_TOKENS]
    with torch.inference_mode():
        x = torch.tensor([ids])
        states = ad.forward_states(x, torch.ones_like(x))[:, 0].cpu().numpy()  # [L+1, T, d]
    out = {"model": exp.model_name, "tokens": top_tokens.token_strings(ad, ids)}
    for m in mappings:
        tok, prob = [], []
        for layer in range(exp.n_layers + 1):
            logits = predictions._logits(ad, predictions.cast(exp, m, layer, states[layer]))
            p = torch.softmax(logits.double(), -1)
            best = p.max(-1)
            tok.append(top_tokens.token_strings(ad, best.indices.tolist()))
            prob.append(best.values.cpu().numpy().round(6).tolist())
        out[m] = {"token": tok, "p": prob}
    return out


def sentences(exp, n: int) -> list[list[int]]:
    """Token ids of the first ``n`` validation sentences (cut at :data:`MAX_TOKENS`)."""
    return [list(ids)[:MAX_TOKENS] for ids in exp.val.input_ids[:n]]


def figure(trajectories: list[dict], mappings=MAPPINGS, title: str | None = None):
    """An interactive figure: for each trajectory one heatmap per mapping, stacked (rows: layers, columns:
    positions, colour: the top token's probability, text: the token), and a menu to switch between
    trajectories."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    n = len(mappings)
    fig = make_subplots(rows=n, cols=1, subplot_titles=[f"<b>{m}</b>" for m in mappings], shared_xaxes=True,
                        vertical_spacing=0.05)
    for t, traj in enumerate(trajectories):
        x = [f"{i}: {tok}" for i, tok in enumerate(traj["tokens"])]
        for r, m in enumerate(mappings):
            fig.add_trace(go.Heatmap(
                z=traj[m]["p"], text=traj[m]["token"], x=x, y=list(range(len(traj[m]["p"]))), zmin=0, zmax=1,
                colorscale="Blues", texttemplate="%{text}", textfont={"size": 9}, showscale=r == 0,
                colorbar={"title": "p(top)", "len": 0.5, "y": 1, "yanchor": "top"}, visible=t == 0, name=m,
                hovertemplate="layer %{y}, after %{x}<br>top token %{text} (p = %{z:.2f})<extra>" + m + "</extra>"),
                row=r + 1, col=1)
    buttons = [{"label": f"{traj['model']}: {''.join(traj['tokens']).replace('␣', ' ')[:60]}", "method": "update",
                "args": [{"visible": [k // n == t for k in range(n * len(trajectories))]}]}
               for t, traj in enumerate(trajectories)]
    rows = max(len(traj[m]["p"]) for traj in trajectories for m in mappings)
    fig.update_layout(height=140 + n * rows * 13, margin={"l": 50, "r": 20, "t": 80, "b": 100},
                      title={"text": title, "x": 0, "y": 0.995} if title else None,
                      updatemenus=[{"buttons": buttons, "x": 0, "xanchor": "left", "y": 1.0, "yanchor": "bottom",
                                    "pad": {"b": 30}}])
    for r in range(n):
        fig.update_yaxes(title_text="layer", row=r + 1, col=1)
    fig.update_xaxes(tickangle=-60, tickfont={"size": 9})
    return fig


def html(fig, div_id: str) -> str:
    """The figure as HTML for a static page of the book: plotly's script from the root of the built book
    (no network), a fixed div id (so that a re-executed page is identical)."""
    return fig.to_html(full_html=False, include_plotlyjs="../plotly.min.js", div_id=div_id,
                       config={"responsive": True, "displaylogo": False})


def data(trajectories: list[dict]) -> dict:
    """The numbers behind the view, for ``book/data``."""
    return {"trajectories": trajectories}
