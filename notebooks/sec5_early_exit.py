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
# # Early exit (paper §5)
#
# **What this chapter finds**, claim by claim, before how it finds it (each claim's id leads to its table, under the
# figure that shows it):
#
# ```{glue} findings
# ```
#
# If a layer's cast prediction is already the final one, the remaining blocks could be skipped. The paper plugs
# `mat` and `id` into a simple confidence rule (after CALM): at layer $\ell = 1, \dots, L-1$, cast the state, read
# it out, and stop if the gap between the two largest probabilities is large enough,
#
# $$ p_{(1)} - p_{(2)} > 0.9\,\lambda + 0.1\,e^{-4\,\text{pos}/N}, $$
#
# where pos is the token position and $N$ the mean sentence length; layer 0 never exits and a sample that never
# passes runs the whole model. Sweeping $\lambda$ trades layers for accuracy: the x-axis is the mean number of
# blocks run, the y-axis the Precision@1 of the exit prediction against the full model. The *fixed-exit* baseline
# stops every sample at the same layer (the §4 curves).
#
# Two details follow the authors' code rather than the paper's text: for BERT the position in the rule is
# the constant 3 for every sample, and the threshold is not clipped to [0, 1]. The λ lists are the paper's
# (appendix A.3). Because the exit path computes exactly the same cast vectors as the fixed-exit curves,
# `jtc_utils.core.analysis.early_exit.sweep` derives every λ for every sample at once from the per-layer confidence gaps
# and top-1 tokens of §4, instead of re-running the model per sample (the benchmark `benchmarks/bench_early_exit.py`
# checks that it agrees exactly with the per-sample loop).
#
# ```{admonition} What runs here
# :class: note
# Profile **{glue:text}`profile`**. With `tiny`, the 24-layer GPT-2-medium and BERT-large of the paper are played by
# 12-layer stand-ins, so "layers saved" is out of 12; compare the *share* of layers saved with the paper's.
# ```

# %% tags=["parameters", "hide-cell"]
profile = "tiny"  # "tiny" (the embedded world, offline) or "paper" (the paper's models and data)
device = "auto"  # where the heavy work runs: "auto" (a GPU when there is one), "cpu" or "cuda"
seed = 0  # the seed of the chapter's random draws (the sentences' positions first)
n_train = None  # training sentences per domain (None: the paper's 9,000)
n_val = None  # validation sentences (None: the paper's 3,000 / 1,000)
real_n_train = None  # the real model's training sentences (None: 9,000)
real_n_val = None  # the real model's validation sentences (None: 3,000 on Wikipedia, 1,000 on BBC News)

# %% tags=["hide-cell"]
import pandas as pd
from myst_nb import glue

from jtc_utils.book.display.chapter import Chapter
from jtc_utils.jtc.figures import real_model_line
from jtc_utils.core.analysis import early_exit
from jtc_utils.jtc import implication_claims

glue("profile", profile, display=False)
chapter = Chapter(profile, n_train, n_val, seed, real_n_train, real_n_val, device=device)
figure, results = chapter.figure, chapter.results


# %% [markdown]
# ## GPT-style (paper Fig. 8)

# %%
figure("fig8")

# %% [markdown]
# ## BERT-style (paper Fig. 9)

# %%
figure("fig9")

# %% [markdown]
# ## Layers saved at 95% Precision@1
#
# Read off each early-exit curve by joining its points with straight lines and taking the first point where it
# reaches 0.95 (`early_exit.layers_saved`). The paper reports, for its 24-layer models on Wikipedia: GPT-2 saves
# 3.3 layers (13.8%) with `mat` against 1.4 (5.9%) with `id`; BERT 4.8 (20%) against 3.5 (14.6%).

# %% tags=["nbval-check-output"]
rows = []
for fig_id in ("fig8", "fig9"):
    d = results[fig_id]
    for m in ("mat", "id"):
        s = d["saved"][m]
        rows.append(
            {
                "figure": fig_id,
                "model": d["model"],
                "mapping": m,
                "L": d["n_layers"],
                "P@1 reaches 0.95 at": round(s["x"], 2),
                "layers saved": round(s["saved"], 2),
                "share saved": f"{s['share']:.1%}",
                "paper saved (of 24)": implication_claims.PAPER_SAVED[fig_id][m][0],
                "paper share": f"{implication_claims.PAPER_SAVED[fig_id][m][1]:.1%}",
            }
        )
print(pd.DataFrame(rows).to_string(index=False))

# %% tags=["nbval-check-output"]
chapter.verdicts(["C8", "C9", "C10", "C11"])

# %% [markdown]
# On the stand-ins both orderings of the paper hold: `mat` lets samples leave earlier than `id` at the same
# accuracy. The magnitudes differ, and the verdicts above say where: `id` saves about the paper's share of the
# depth, `mat` far more. The stand-in's early states already carry much of the final prediction in a form a linear
# map can read but the output head cannot ([the hardness table](embedded_world.ipynb): `mat` from the embeddings
# alone gives the final top-1 at not far from half the positions), so with `mat` many samples can leave early.
#
# ### The real model
#
# The same rule, λ list and target on SmolLM2-135M (30 layers) on Wikipedia. Its encoder partner has no
# masked-LM head, so there is no BERT side here.

# %%
print(real_model_line())
figure("real_fig8")

# %%
d = results["real_fig8"]
print(
    pd.DataFrame(
        [
            {
                "mapping": m,
                "L": d["n_layers"],
                "P@1 reaches 0.95 at": round(d["saved"][m]["x"], 2),
                "layers saved": round(d["saved"][m]["saved"], 2),
                "share saved": f"{d['saved'][m]['share']:.1%}",
            }
            for m in ("mat", "id")
        ]
    ).to_string(index=False)
)
chapter.real_verdicts(["C8", "C10", "C11"])

# %% [markdown]
# On the real model the table above judges the shape: whether `mat` lets samples leave earlier than `id` at the
# same accuracy (C8, C11) and whether the confidence rule beats fixed exit for both mappings (C10), each with its
# interval over the resampled validation set. The shares of layers saved are printed beside the paper's and not
# judged: SmolLM2 is not GPT-2, so its numbers are not the paper's to match.

# %% [markdown]
# ## The position in BERT's threshold
#
# The authors' code uses the constant position 3 in BERT's threshold (the paper's text suggests the real position).
# With the real position, the term $0.1 e^{-4\,\text{pos}/N}$ varies across samples. How much does it change the
# savings?

# %% tags=["nbval-check-output"]
exp_bert = chapter.experiment("fig9")
alt = early_exit.early_exit_curves(exp_bert, bert_pos="actual")
for m in ("mat", "id"):
    print(
        f"{m}: constant position 3 saves {results['fig9']['saved'][m]['saved']:.2f} layers; the real position "
        f"saves {alt['saved'][m]['saved']:.2f}"
    )

# %% [markdown]
# ## Early exit against fixed exit
#
# The paper also notes that the confidence rule beats stopping every sample at the same layer, for both mappings,
# and that the `mat` curves lie above the `id` curves (claim C10, checked here on both domains: the news figures
# are drawn in [appendix B](appendix_b_news.ipynb)).

# %% tags=["nbval-check-output"]
for fig_id in ("fig20", "fig21"):
    figure(fig_id, plot=False)
chapter.verdicts(["C10"])

# %% [markdown]
# `mat`'s early-exit curve lies above `id`'s everywhere, on both models and both domains. "Early beats fixed" is
# where the stand-in departs from the paper, and the plots show why. The first point of every early-exit curve is
# λ = -1.112 (everyone exits at layer 1) and the next is λ = 0; between them the curve is a straight line, which
# can fall below a concave fixed-exit curve without any sample doing worse. More importantly, on the GPT-style
# stand-in the confidence of `id` is badly calibrated at mid-depth: its top-2 gap is often large for a wrong
# guess, so the rule lets samples out too early, and the early-exit `id` curve lies *below* its fixed-exit curve
# for most budgets. With `mat` the rule beats fixed exit from about mid-depth on, in every figure. The
# rule reads the paper's "early exit obtains better results than fixed layer exit" as an unqualified comparison:
# the early-exit curve strictly above the fixed one at more than half of the integer layer budgets.

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

# %% [markdown]
# ```{exercise-start}
# :label: ex-sec5-bert
# ```
# **Run and read.** How many layers does `mat` save at the 95% target on the BERT-style model of
# <a href="#figure-fig9">Figure 2</a> (paper Fig. 9)?
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-sec5-bert
# :class: dropdown
# ```

# %% tags=["solution"]
answer = results["fig9"]["saved"]["mat"]["saved"]
print(f"{answer:.2f} of {results['fig9']['n_layers']} layers")

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["nbval-check-output", "remove-output"]
exercises.check("ex-sec5-bert", answer)

# %% [markdown]
# The next exercises work on the experiment behind <a href="#figure-fig8">Figure 1</a> (`exp`: its per-layer
# statistics and the final predictions).

# %%
exp = chapter.experiment("fig8")

# %% [markdown]
# ```{exercise-start}
# :label: ex-sec5-one-lambda
# ```
# **Compute.** For the GPT-style model of <a href="#figure-fig8">Figure 1</a> (paper Fig. 8) and λ = 0.75 with `mat`,
# a λ between two of the figure's points, find the exit layer of every sample yourself from the per-layer statistics
# `exp.predictions["gap"]["mat"]`, with the rule written above (use `early_exit.decay` for the position term).
# `answer` is the mean exit layer; it lies between the figure's points at λ = 0.7 and λ = 0.8.
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-sec5-one-lambda
# :class: dropdown
# ```

# %% tags=["solution"]
gap, L = exp.predictions["gap"]["mat"], exp.n_layers
dec = early_exit.decay(exp.val.positions, exp.val.mean_length)
theta = 0.9 * 0.75 + 0.1 * dec
passes = gap[1:L] > theta  # layers 1..L-1
exit_layer = np.where(passes.any(0), passes.argmax(0) + 1, L)
answer = float(exit_layer.mean())
early = results["fig8"]["early"]["mat"]
at = {lam: x for lam, x in zip(early["lambdas"], early["x"])}
print("between the figure's points at λ = 0.7 and 0.8:", at[0.7] <= answer <= at[0.8])

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["nbval-check-output", "remove-output"]
exercises.check("ex-sec5-one-lambda", answer)

# %% [markdown]
# ```{exercise-start}
# :label: ex-sec5-target
# ```
# **Change the method.** 95% is one choice. How many more layers than `id` does `mat` save at a target of 90%
# Precision@1 on the model of <a href="#figure-fig8">Figure 1</a> (paper Fig. 8; `early_exit.layers_saved`)? Try 99%
# too.
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-sec5-target
# :class: dropdown
# ```

# %% tags=["solution"]
saved = {
    t: {
        m: early_exit.layers_saved(
            results["fig8"]["early"][m]["x"], results["fig8"]["early"][m]["y"], results["fig8"]["n_layers"], t
        )["saved"]
        for m in ("mat", "id")
    }
    for t in (0.90, 0.95, 0.99)
}
for t, s in saved.items():
    print(f"target {t:.0%}: mat saves {s['mat']:.2f}, id saves {s['id']:.2f} layers")
answer = saved[0.90]["mat"] - saved[0.90]["id"]

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["nbval-check-output", "remove-output"]
exercises.check("ex-sec5-target", answer)
