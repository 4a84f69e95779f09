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
# # Appendix B: the second domain
#
# **What this chapter finds**, claim by claim, before how it finds it (each claim's id leads to its table, under the
# figure that shows it):
#
# ```{glue} findings
# ```
#
# The paper repeats its experiments for the 24-layer GPT-2 and BERT on news sentences from the Leipzig corpus,
# with every map fitted on news (Figs. 12-21), and finds the results "similar" to Wikipedia. Our stand-in of the
# news domain is the generated news text (see [the embedded world](embedded_world.ipynb)); the 24-layer models are
# played by the 12-layer stand-ins. The $r^2$ heatmaps (Figs. 12 and 13) are in [section 3](sec3_linear_shortcuts.ipynb)
# and the sub-module figures (18 and 19) in [section 6](sec6_submodules.ipynb); here are the prediction and
# early-exit figures, each drawn by the same function as its Wikipedia counterpart.

# %% tags=["parameters", "hide-cell"]
profile = "tiny"  # "tiny" (the embedded world, offline) or "paper" (the paper's models and data)
device = "auto"  # where the heavy work runs: "auto" (a GPU when there is one), "cpu" or "cuda"
seed = 0  # the seed of the chapter's random draws (the sentences' positions first)
n_train = None  # training sentences per domain (None: the paper's 9,000)
n_val = None  # validation sentences (None: the paper's 3,000 / 1,000)
real_n_train = None  # the real model's training sentences (None: 9,000)
real_n_val = None  # the real model's validation sentences (None: 3,000 on Wikipedia, 1,000 on BBC News)

# %% tags=["hide-cell"]
from jtc_utils.book.display.chapter import Chapter
from jtc_utils.jtc.figures import real_model_line

chapter = Chapter(profile, n_train, n_val, seed, real_n_train, real_n_val, device=device)
figure, results = chapter.figure, chapter.results


# %% [markdown]
# ## GPT-style, next token (Figs. 14, 15; compare Figs. 27, 31)

# %%
figure("fig14")

# %%
figure("fig15")

# %% [markdown]
# ## BERT-style, masked token (Figs. 16, 17; compare Figs. 6, 7)

# %%
figure("fig16")

# %%
figure("fig17")

# %% [markdown]
# ## Early exit (Figs. 20, 21; compare Figs. 8, 9)

# %%
figure("fig20")

# %%
figure("fig21")

# %% [markdown]
# ## Is news like the encyclopedia? (claim C15)
#
# The comparison uses the mean absolute difference of the `mat` Precision@1 curves between the domains, whether
# `mat` still beats `id` at (nearly) every layer on news, and whether early exit still saves more with `mat`.

# %% tags=["nbval-check-output"]
figure("fig27", plot=False)  # the encyclopedia counterpart of Fig. 14 (drawn in appendix D)
chapter.verdicts(["C15"])

# %% [markdown]
# ## The real model on BBC News
#
# The real profile's second domain is BBC News of 2004-05 (see [the real model](real_model.ipynb)), with every map
# fitted on news. Here are its $r^2$ heatmaps (SmolLM2 and MiniLM), the prediction curves and early exit of
# SmolLM2, $r^2$ with and without the first position, and claim C15 with the same rule (SmolLM2's news curves
# against its Wikipedia curves of [section 4](sec4_predictions.ipynb)).

# %%
print(real_model_line())
for fig_id in ("real_fig12", "real_fig13", "real_fig14", "real_fig15", "real_fig20"):
    figure(fig_id)

# %%
first = figure("real_r2_first_bbc")
print(
    f"samples at position 0: {first['n_first_train']} of {first['n_train']} training, "
    f"{first['n_first_val']} of {first['n_val']} validation"
)
print(
    f"mean r2 of mat / id: every position {first['mean_r2_mat_all']:.3f} / {first['mean_r2_id_all']:.3f}; "
    f"without position 0 {first['mean_r2_mat_without_first']:.3f} / {first['mean_r2_id_without_first']:.3f}"
)

# %%
figure("real_fig4", plot=False)  # SmolLM2 on Wikipedia, drawn in section 4
chapter.real_verdicts(["C15"])


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
import pandas as pd

from jtc_utils.book.display import exercises
from jtc_utils.evidence import figdata

# %% [markdown]
# ```{exercise-start}
# :label: ex-appb-saved
# ```
# **Run and read.** How many layers does `mat` save at the 95% target on news (<a href="#figure-fig20">Figure 5</a>,
# paper Fig. 20)?
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-appb-saved
# :class: dropdown
# ```

# %% tags=["solution"]
answer = results["fig20"]["saved"]["mat"]["saved"]
print(f"{answer:.2f} of {results['fig20']['n_layers']} layers")

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["nbval-check-output", "remove-output"]
exercises.check("ex-appb-saved", answer)

# %% [markdown]
# ```{exercise-start}
# :label: ex-appb-gap
# ```
# **Compute.** How far apart are the news and encyclopedia curves of `mat`'s Precision@1 on the same model? Give the
# largest absolute difference over the layers between <a href="#figure-fig14">Figure 1</a> (paper Fig. 14) and its
# encyclopedia counterpart, paper Fig. 27 (drawn in [appendix D](appendix_d_sizes.ipynb)).
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-appb-gap
# :class: dropdown
# ```

# %% tags=["solution"]
news, main = (np.asarray(results[f]["curves"]["mat"]["p@1"], dtype=float) for f in ("fig14", "fig27"))
answer = float(np.abs(news - main).max())
print(f"largest difference {answer:.3f} at layer {np.abs(news - main).argmax()}")

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["nbval-check-output", "remove-output"]
exercises.check("ex-appb-gap", answer)

# %% [markdown]
# The next exercises read a figure's numbers with `get(fig_id)`: from this page's results, or from `book/data` for
# the figures another page drew.

# %%
get = lambda f: results[f] if f in results else figdata.load(f)["data"]  # noqa: E731

# %% [markdown]
# ```{exercise-start}
# :label: ex-appb-r2
# ```
# **Compute.** Which domain is easier to map linearly? Compute the mean $r^2$ of `mat` over the pairs $\ell < \ell'$ of
# paper Figs 12 (news) and 23 (encyclopedia), both drawn in [section 3](sec3_linear_shortcuts.ipynb), and give
# `answer = "news"` or `"encyclopedia"`.
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-appb-r2
# :class: dropdown
# ```

# %% tags=["solution"]
mean = {}
for domain, f in (("news", "fig12"), ("encyclopedia", "fig23")):
    r2 = np.asarray(get(f)["r2_mat"], dtype=float)
    mean[domain] = r2[np.triu_indices(len(r2), k=1)].mean()
answer = max(mean, key=mean.get)
print(pd.Series(mean, name="mean r² of mat").round(3).to_string())

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["nbval-check-output", "remove-output"]
exercises.check("ex-appb-r2", answer)
