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
# The paper's appendix D repeats the $r^2$ heatmaps and the prediction curves for the other sizes: GPT-2 small,
# medium and large (12, 24, 36 layers) and BERT-base (12 layers). The heatmaps (Figs. 22-25) are in
# [section 3](sec3_linear_shortcuts.ipynb); here are Precision@k (Figs. 26-29) and Surprisal (Figs. 30-33) for
# the stand-ins with 6, 12 and 18 GPT-style layers and 6 BERT-style layers, on the encyclopedia domain.
# The largest models' curves are in [section 4](sec4_predictions.ipynb). The real profile has one real size only,
# SmolLM2-135M (its curves are in sections 3-6), so the size comparison stays with the stand-ins.

# %% tags=["parameters"]
profile = "tiny"
seed = 0
n_train = None
n_val = None

# %%
import pandas as pd

from jtc_utils import book, claims

chapter = book.Chapter(profile, n_train, n_val, seed)
figure, results = chapter.figure, chapter.results


# %% [markdown]
# ## Precision@k

# %%
for fig_id in ("fig26", "fig27", "fig28", "fig29"):
    figure(fig_id)

# %% [markdown]
# ## Surprisal

# %%
for fig_id in ("fig30", "fig31", "fig32", "fig33"):
    figure(fig_id)

# %% [markdown]
# ## Across sizes
#
# The paper's introduction sums up: "`mat` beats `id` by 15-40% (precision) at most layers, across models, and
# gives more than 30% correct predictions from very early layers" (claim C7). The table lists, for every model,
# the mean gain in Precision@1 over the layers before the last and the share of layers where it is at least 0.15.

# %% tags=["nbval-check-output"]
rows = []
for fig_id in ("fig26", "fig27", "fig28", "fig4", "fig29", "fig6"):
    d = results[fig_id] if fig_id in results else claims.default_get(fig_id)
    L = d["n_layers"]
    gain = [d["curves"]["mat"]["p@1"][i] - d["curves"]["id"]["p@1"][i] for i in range(L)]
    rows.append({"model": d["model"], "L": L, "mean P@1 gain": round(sum(gain) / L, 2),
                 "layers with gain >= 0.15": f"{sum(g >= 0.15 for g in gain)}/{L}"})
print(pd.DataFrame(rows).to_string(index=False))
chapter.verdicts(["C7"])
