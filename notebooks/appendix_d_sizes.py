# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---


# %% [markdown]
# # Appendix D: every model size
#
# **What this chapter finds**, claim by claim, before how it finds it (each claim's id leads to its table, under the
# figure that shows it):
#
# ```{glue} findings
# ```
#
# The paper's appendix D repeats the $r^2$ heatmaps and the prediction curves for the other sizes: GPT-2 small,
# medium and large (12, 24, 36 layers) and BERT-base (12 layers). The heatmaps (the paper's Figs. 22-25) are in
# [section 3](sec3_linear_shortcuts.ipynb); here are Precision@k (the paper's Figs. 26-29) and Surprisal (its Figs.
# 30-33) for
# the stand-ins with 6, 12 and 18 GPT-style layers and 6 BERT-style layers, on the encyclopedia domain.
# The largest models' curves are in [section 4](sec4_predictions.ipynb).
#
# The real profile has **one size only**: SmolLM2-135M is the one real decoder that ships offline. It cannot give
# a size series of its own, so the last section sets it beside the stand-in whose depth is nearest to its own.

# %% tags=["parameters", "hide-cell"]
profile = "tiny"  # "tiny" (the embedded world, offline) or "paper" (the paper's models and data)
device = "auto"  # where the heavy work runs: "auto" (a GPU when there is one), "cpu" or "cuda"
seed = 0  # the seed of the chapter's random draws (the sentences' positions first)
n_train = None  # training sentences per domain (None: the paper's 9,000)
n_val = None  # validation sentences (None: the paper's 3,000 / 1,000)

# %% tags=["hide-cell"]
import pandas as pd

from jtc_utils.book.display.chapter import Chapter
from jtc_utils.evidence import claims

chapter = Chapter(profile, n_train, n_val, seed, device=device)
figure, results = chapter.figure, chapter.results


# %% [markdown]
# ## Precision@k

# %%
chapter.grid(["fig26", "fig27", "fig28", "fig29"])

# %% [markdown]
# ## Surprisal

# %%
chapter.grid(["fig30", "fig31", "fig32", "fig33"])

# %% [markdown]
# ## Across sizes
#
# The paper's introduction sums up: "`mat` beats `id` by 15-40% (precision) at most layers, across models, and
# gives more than 30% correct predictions from very early layers" (claim C7). The table lists, for every model,
# the mean gain in Precision@1 over the layers before the last and the share of layers where it is at least 0.15;
# the last row is the real model (from section 4). The verdict is judged on the stand-ins' sizes, as the paper's
# is on its own; the real model's section-4 claims are judged in section 4.

# %% tags=["nbval-check-output"]
rows = []
for fig_id in ("fig26", "fig27", "fig28", "fig4", "fig29", "fig6", "real_fig4"):
    d = results[fig_id] if fig_id in results else claims.default_get(fig_id)
    L = d["n_layers"]
    gain = [d["curves"]["mat"]["p@1"][i] - d["curves"]["id"]["p@1"][i] for i in range(L)]
    rows.append(
        {
            "model": d["model"],
            "L": L,
            "mean P@1 gain": round(sum(gain) / L, 2),
            "layers with gain >= 0.15": f"{sum(g >= 0.15 for g in gain)}/{L}",
        }
    )
print(pd.DataFrame(rows).to_string(index=False))
chapter.verdicts(["C7"])

# %% [markdown]
# ## The real model beside the stand-in of its depth
#
# The real model's curves (computed in [section 4](sec4_predictions.ipynb) on Wikipedia) next to those of the
# GPT-style stand-in with the nearest number of layers (on the encyclopedia domain). The two differ in depth,
# width, training and text, so the panels compare shapes, not values.

# %%
from jtc_utils.evidence import figdata

SURPRISAL_OF = {"fig26": "fig30", "fig27": "fig31", "fig28": "fig32", "fig4": "fig5"}  # each size's two figures
depth = {f: figdata.load(f)["data"]["n_layers"] for f in [*SURPRISAL_OF, "real_fig4"]}
nearest = min(SURPRISAL_OF, key=lambda f: abs(depth[f] - depth["real_fig4"]))
print(f"the real model has {depth['real_fig4']} layers; the nearest stand-in has {depth[nearest]} ({nearest})")
chapter.grid([nearest, "real_fig4"], stored=True)

# %%
chapter.grid([SURPRISAL_OF[nearest], "real_fig5"], stored=True)


# %% tags=["remove-cell"]
# what the chapter's opening pastes: the verdict of every claim shown above, on each model it was judged on
chapter.findings()

# %% [markdown]
# ## Exercises
#
# Graded from *run and read* to *change the method*. Each solution is hidden under its exercise; where the
# answer is a number or a property, the cell after it checks `answer` (the student edition, `make student`, leaves
# the solution cells blank).

# %%
import numpy as np

from jtc_utils.book.display import exercises
from jtc_utils.evidence import figdata

# %% [markdown]
# ```{exercise-start}
# :label: ex-appd-bert
# ```
# **Run and read.** In the 12-layer BERT-style model (paper Fig. 29, in <a href="#figure-fig26">Figure 1</a>), from
# which layer on is `mat`'s Precision@1 above 0.25 (the paper's "> 25% from layer 3" for BERT-large)? Give the first
# such layer.
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-appd-bert
# :class: dropdown
# ```

# %% tags=["solution"]
p1 = np.asarray(results["fig29"]["curves"]["mat"]["p@1"], dtype=float)
answer = int(np.flatnonzero(p1 > 0.25)[0])
print(f"layer {answer} of {results['fig29']['n_layers']}")

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["nbval-check-output", "remove-output"]
exercises.check("ex-appd-bert", answer)

# %% [markdown]
# The next exercises read a figure's numbers with `get(fig_id)`: from this page's results, or from `book/data` for
# the figures another page drew.

# %%
get = lambda f: results[f] if f in results else figdata.load(f)["data"]  # noqa: E731

# %% [markdown]
# ```{exercise-start}
# :label: ex-appd-gain
# ```
# **Compute.** Does the gain of `mat` over `id` grow with depth? For each GPT-style size (paper Figs 26, 27, 28 and 4:
# <a href="#figure-fig26">Figure 1</a> and <a href="#figure-fig4">Figure 3</a>) compute the mean of
# $P@1(\texttt{mat}) - P@1(\texttt{id})$ over the layers $\ell < L$; `answer` maps the figure id to it.
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-appd-gain
# :class: dropdown
# ```

# %% tags=["solution"]
answer = {}
for f in ("fig26", "fig27", "fig28", "fig4"):
    d = get(f)
    gain = np.asarray(d["curves"]["mat"]["p@1"], dtype=float) - np.asarray(d["curves"]["id"]["p@1"], dtype=float)
    answer[f] = float(gain[: d["n_layers"]].mean())
print(pd.Series(answer, name="mean P@1 gain of mat over id").rename(lambda f: f"Fig. {f[3:]}").round(3).to_string())

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["nbval-check-output", "remove-output"]
exercises.check("ex-appd-gain", answer)

# %% [markdown]
# ```{exercise-start}
# :label: ex-appd-r2
# ```
# **Change the method.** Which GPT-style size has the highest mean $r^2$ of `mat` over its layer pairs $\ell < \ell'$
# (paper Figs 22, 23, 24 and 2, drawn in [section 3](sec3_linear_shortcuts.ipynb))? Give the figure id. Why might deeper
# models be harder or easier to shortcut?
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-appd-r2
# :class: dropdown
# ```

# %% tags=["solution"]
means = {}
for f in ("fig22", "fig23", "fig24", "fig2"):
    r2 = np.asarray(get(f)["r2_mat"], dtype=float)
    means[f] = r2[np.triu_indices(len(r2), k=1)].mean()
answer = max(means, key=means.get)
print(pd.Series(means, name="mean r² of mat").rename(lambda f: f"Fig. {f[3:]}").round(3).to_string())

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["nbval-check-output", "remove-output"]
exercises.check("ex-appd-r2", answer)
