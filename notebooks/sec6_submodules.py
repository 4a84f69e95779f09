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
# # Linear shortcuts across sub-modules (paper §6)
#
# **What this chapter finds**, claim by claim, before how it finds it (each claim's id leads to its table, under the
# figure that shows it):
#
# ```{glue} findings
# ```
#
# `mat` replaces *all* the blocks after layer $\ell$ by one matrix. Section 6 of the paper asks a finer question:
# which **part** of a block can be replaced by a linear map, in every block from $\ell+1$ to $L$, with everything
# else left as it is? A GPT-2 block computes
#
# $$ r = x + \text{attn}(\text{ln}_1(x)), \qquad h = r + \text{mlp}(\text{ln}_2(r)). $$
#
# For each block and sub-module a matrix is fitted by least squares on the training sentences, in the unmodified
# model, at each sentence's position (appendix C): $\text{ln}_1(x)$ on $x$; $\text{attn}(\cdot)$ on its input
# $\text{ln}_1(x)$; $\text{ln}_2(r)$ on $r$; $\text{mlp}(\cdot)$ on its input $\text{ln}_2(r)$. Three mappings
# then run blocks $\ell+1, \dots, L$ with a sub-module replaced by its matrix, apply `ln_f` and read out:
#
# * `mat_attn`: attention replaced. No position looks at another any more, so this runs on the single vector
#   $h^\ell_{i}$;
# * `mat_ffn`: the feed-forward network replaced;
# * `mat_ln1_ln2`: both layer norms replaced.
#
# For the last two the real attention still runs, and it reads the *modified* states of the whole prefix, so the
# computation starts from the true $h^\ell$ at every prefix position. `jtc_utils.core.models.blocks.GPT2Blocks`
# recomputes a GPT-2 block from the Hugging Face weights step by step (tested to reproduce the model's hidden states
# within $10^{-4}$) and lets any step be swapped; `jtc_utils.core.analysis.submodules` fits the matrices and runs all
# start layers together. Predictions are judged exactly as in [section 4](sec4_predictions.ipynb).
#
# ```{admonition} What runs here
# :class: note
# Profile **{glue:text}`profile`**. The paper runs this on GPT-2 medium (24 layers); with `tiny` its 12-layer
# stand-in runs instead, on the encyclopedia domain (Figs. 10, 11, 34, 35) and on news (Figs. 18, 19). At the end,
# beyond the paper, the same for the BERT-style stand-in of BERT-large.
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
import numpy as np
import pandas as pd
from myst_nb import glue

from jtc_utils.book.display.chapter import Chapter
from jtc_utils.jtc.figures import parts_experiment, real_model_line
from jtc_utils.core.analysis import submodules

glue("profile", profile, display=False)
ORDER = ("mat_attn", "mat_ln1_ln2", "mat_ffn", "mat")  # the paper's order: green, orange, magenta, blue
# on the real model, section 6 reads at most 3,000 of the training sentences and the first 300 validation ones
chapter = Chapter(profile, n_train, n_val, seed, real_n_train, real_n_val, mappings=ORDER, device=device)
figure, results = chapter.figure, chapter.results


# %% [markdown]
# ## The block runner reproduces the model
#
# Before replacing anything, the runner must give the model's own hidden states, so that every difference below
# comes from the replacement and not from a re-implementation. On a few validation prefixes:

# %% tags=["nbval-check-output"]
import torch

exp = chapter.experiment("fig10")
run = submodules.runner(exp)
idx, inp, mask, pos = next(submodules.sample_batches(exp, exp.val, 16))
with torch.inference_mode():
    diff = (run.states(inp) - exp.adapter.forward_states(inp, mask)).abs().max().item()
print(f"largest difference between the runner and the model over all layers: {'< 1e-4' if diff < 1e-4 else diff}")

# %% [markdown]
# ## Precision@1 (paper Fig. 10)

# %%
figure("fig10")

# %% [markdown]
# ## Surprisal (paper Fig. 11)

# %%
figure("fig11")

# %% [markdown]
# ## Precision@5 and @10 (paper Figs. 34, 35)

# %%
figure("fig34")

# %%
figure("fig35")

# %% [markdown]
# ## The paper's claims next to ours
#
# The paper (Figs. 10, 11): from about layer 7 of 24 on, every sub-module map beats `mat`; replacing attention is
# the least harmful, which the paper reads as a sign that context is often exhausted early; `mat_ln1_ln2` rises
# sharply between layers 5 and 8.


# %% tags=["nbval-check-output"]
def p1_table(fig):
    """Precision@1 by start layer of each mapping, as printed under a figure."""
    curves = results[fig]["curves"]
    print(pd.DataFrame({m: curves[m]["p@1"] for m in ORDER}).rename_axis("layer").T.round(2).to_string())


p1_table("fig10")
chapter.verdicts(["C12a", "C12b", "C12c"])

# %% [markdown]
# How to read this on the stand-in. Replacing the feed-forward networks or the layer norms costs little: both
# `mat_ffn` and `mat_ln1_ln2` stay well above `mat` at every layer. Replacing attention costs more: `mat_attn` is
# above `mat` at every layer, so the claim that every sub-module map beats `mat` holds (C12a), but only by a few
# points, and it stays below the other two at every layer. The ranking is the reverse of the paper's (C12b). The
# stand-in's feed-forward layers are small (width 256) and were trained for minutes, so they are close to linear on
# the states they see, and its layer norms rescale states whose norm varies little, which a fixed matrix imitates
# well; its attention, by contrast, still carries context that a position-wise map cannot supply. The paper's
# reading, that context is exhausted early, is a statement about GPT-2's attention, and the stand-in does not
# reproduce it. `mat_ln1_ln2` is high from the first layer on; over the paper's layers 5-8 (scaled by depth) it
# rises no more than the other curves do, so its ascent is not "sharp" in the claims page's reading (a rise
# substantially larger than the other curves' over the same window), and C12c fails on the stand-in.
#
# ## The news domain (paper appendix B, Figs. 18, 19)

# %%
figure("fig18")

# %%
figure("fig19")

# %% [markdown]
# ## The real model: SmolLM2-135M
#
# The same three mappings on the real decoder, whose blocks are LLaMA's: RMSNorm in place of LayerNorm (the two
# norms `ln_1`/`ln_2` are its `input_layernorm` and `post_attention_layernorm`), rotary positions, grouped-query
# attention and a gated feed-forward network. `jtc_utils.core.models.blocks.LlamaBlocks` recomputes them from the
# weights (tested to reproduce the model within $10^{-4}$). With 30 blocks the wavefront over every start layer costs
# many forward passes per mapping, so on this model the maps start from every fifth layer, on the first validation
# sentences, with the sub-module matrices fitted on the first training sentences (the sizes are printed below; the
# figure's `mat` curve is the full section-4 one).

# %%
print(real_model_line())
exp_real = chapter.experiment("real_fig10")
run_real = submodules.runner(exp_real)
_, real_inp, real_mask, _ = next(submodules.sample_batches(exp_real, exp_real.val, 8))
with torch.inference_mode():
    diff = (run_real.states(real_inp) - exp_real.adapter.forward_states(real_inp, real_mask)).abs()
    diff = diff.masked_fill(~real_mask.bool()[None, :, :, None], 0).max().item()
print(f"largest difference between the LLaMA runner and the model over all layers: {'< 1e-4' if diff < 1e-4 else diff}")

# %%
r10 = figure("real_fig10")
figure("real_fig11")
starts = sorted(set(r10["start_layers"]))  # the start layers, and the last layer (the model's own output)
print(
    f"sub-module maps fitted on {r10.params['n_train']} training sentences, evaluated on "
    f"{r10.params['n_val']} validation sentences, from layers {starts[:-1]}"
)
print(pd.DataFrame({m: r10["curves"][m]["p@1"] for m in ORDER}).rename_axis("layer").T.round(2)[starts].to_string())
chapter.real_verdicts(["C12a", "C12b", "C12c"])

# %% [markdown]
# **The norm cast does not read its start state on this model.** Every claim of this section reads `mat_ln1_ln2`,
# and on SmolLM2 its top-1 is one token for every sentence from the early start layers (the check beside each
# verdict above names them): its output there no longer depends on the state it starts from, so the three claims
# are not judged on the real model. Why, block by block: the largest value of the states, as powers of ten, when
# the cast starts at layer 10, beside the model's own states (first position and the others, on a few validation
# sentences). The paper's least-squares map stands in for each RMSNorm, which divides a state by its length; the map
# cannot, so when the model writes its massive first-position activation (tens of thousands, two orders of magnitude
# above the other positions, as in [section 3](sec3_linear_shortcuts.ipynb)) the state reaches the gated
# feed-forward network unnormalised, the network multiplies two projections of it and squares its size, and within
# a few blocks every position exceeds the largest float32 number. This is what the paper's method does on a model
# with massive activations and a gated network, not a defect of the runner (which reproduces the model above). The
# powers of ten on the way to the overflow depend on the arithmetic (a continued product of unnormalised states: on
# NumPy's baseline kernels one block's largest value grew a thousand times further than here), so this table is
# not compared with a re-execution; the collapse it ends in is what the claims' instrument check above reads.

# %%
grow = submodules.growth(parts_experiment(exp_real), "mat_ln1_ln2", 10)  # the fits the claims above read
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def magnitude(v: float) -> str:
    """A largest value as its power of ten (the digits below it move with the arithmetic), or where it overflowed."""
    return (
        "overflow" if not np.isfinite(v) else "10" + str(int(np.floor(np.log10(max(v, 1e-30))))).translate(SUPERSCRIPT)
    )


print(
    pd.DataFrame(
        {
            "cast, first position": map(magnitude, grow["cast_first"]),
            "cast, other positions": map(magnitude, grow["cast_rest"]),
            "model, first position": map(magnitude, grow["model_first"]),
            "model, other positions": map(magnitude, grow["model_rest"]),
        },
        index=pd.Index(grow["block"], name="layer"),
    ).to_string()
)

# %% [markdown]
# Where the casts do read their start states, replacing attention by a linear map stays above `mat` from the early
# layers on, while replacing the feed-forward networks is much worse than `mat` here, unlike in the paper's GPT-2
# medium: the gated feed-forward network multiplies two projections of its input, which a fixed matrix cannot
# imitate. So on the stand-ins it is the feed-forward network and the norms that look linear, while on the real
# model, as in the paper, it is attention.

# %% [markdown]
# ## Beyond the paper: the BERT-style stand-in
#
# The paper ran section 6 on GPT-2 only. The same question can be asked of BERT, whose blocks put the layer norms
# *after* the residual sums (post-norm):
#
# $$ r = \text{LN}_\text{attn}(x + \text{attn}(x)), \qquad h = \text{LN}_\text{out}(r + \text{ffn}(r)). $$
#
# `jtc_utils.core.models.blocks.BertBlocks` recomputes these from the weights (the masked sentence is read whole, with
# the padding masked out; tested to reproduce `BertForMaskedLM` within $10^{-4}$). The matrices are fitted the same
# way: $\text{attn}(x)$ on $x$, $\text{LN}_\text{attn}$ on its input $x+a$, $\text{ffn}(r)$ on $r$,
# $\text{LN}_\text{out}$ on $r+f$. The two layer norms play the roles of `ln_1` and `ln_2`, so the three mappings
# keep their names; the readout is the MLM head, and predictions are judged against BERT's own output at the
# masked position, as in section 4. This is an extension of this book: there is no paper figure to compare with,
# so the verdicts below apply the rules of the GPT-2 claim C12 to the BERT-style numbers, and they are not part of
# the claims page.

# %%
figure("ext_bert_fig10")

# %%
figure("ext_bert_fig11")

# %% tags=["nbval-check-output"]
p1_table("ext_bert_fig10")
chapter.verdicts(["C12a", "C12b", "C12c"], alias={"fig10": "ext_bert_fig10"})

# %% [markdown]
# How to read this. On the BERT-style stand-in replacing the layer norms costs least, as on the GPT-style one, and
# from the third start layer on every sub-module map is above `mat`. Replacing attention is the costliest
# replacement in the first layers: there `mat_attn` is level with `mat` or just below it. For masked-token
# prediction this has a plain reason: the `[MASK]` token says nothing about itself, so everything the model
# predicts there must be brought in by attention from the other positions. Once attention is replaced from an early
# layer on, no context can arrive any more, and `mat_attn` is then no better than `mat`, which also reads the single
# vector at the masked position. In the middle layers, when the context has arrived, replacing attention costs a
# little less than replacing the feed-forward networks; in the last layers the two are level. The layer-norm
# variant is high from the first layers on: BERT's
# post-norm layer norms, like the stand-in GPT's, rescale states whose norm varies little, and a fixed matrix
# imitates that well.

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
from jtc_utils.book.display import exercises

# %% [markdown]
# ```{exercise-start}
# :label: ex-sec6-best
# ```
# **Run and read.** Which of the four mappings of <a href="#figure-fig10">Figure 1</a> (paper Fig. 10) has the highest
# Precision@1 averaged over the start layers?
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-sec6-best
# :class: dropdown
# ```

# %% tags=["solution"]
L = results["fig10"]["n_layers"]
means = {m: np.nanmean(np.asarray(c["p@1"], dtype=float)[:L]) for m, c in results["fig10"]["curves"].items()}
answer = max(means, key=means.get)
print(pd.Series(means, name="mean P@1").round(3).to_string())

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["nbval-check-output", "remove-output"]
exercises.check("ex-sec6-best", answer)

# %% [markdown]
# ```{exercise-start}
# :label: ex-sec6-real
# ```
# **Compute.** On the real model (`results["real_fig10"]`), by how much is `mat_attn`'s Precision@1 above
# `mat_ffn`'s, on average over the computed start layers? (Start layers that were not computed are NaN.)
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-sec6-real
# :class: dropdown
# ```

# %% tags=["solution"]
f = results["real_fig10"]
a, b = (np.asarray(f["curves"][m]["p@1"], dtype=float)[: f["n_layers"]] for m in ("mat_attn", "mat_ffn"))
done = np.isfinite(a)
answer = float((a[done] - b[done]).mean())
print(f"above at {(a[done] > b[done]).sum()} of {done.sum()} start layers")

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["nbval-check-output", "remove-output"]
exercises.check("ex-sec6-real", answer, data={"real_fig10": results["real_fig10"]})

# %% [markdown]
# ```{exercise-start}
# :label: ex-sec6-single
# ```
# **Change the method.** `mat_attn` removes all interaction between positions, so running it on the single vector
# $h^\ell_i$ must give the same result as running the whole prefix with attention replaced. Check this for start layer 2
# on a batch of validation prefixes, with `GPT2Blocks.run` and the fitted matrices `submodules.fit(exp)["attn"]`;
# `answer` is the pair (largest absolute difference, largest absolute value of the single-vector result).
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-sec6-single
# :class: dropdown
# ```

# %% tags=["solution"]
W = torch.from_numpy(submodules.fit(exp)["attn"])
with torch.inference_mode():
    S = exp.adapter.forward_states(inp, mask)
    prefix = run.run(S[2], start=2, replace=lambda j: {"attn": W[j]})[torch.arange(len(idx)), pos]
    single = run.run(S[2][torch.arange(len(idx)), pos], start=2, replace=lambda j: {"attn": W[j]})
answer = ((prefix - single).abs().max().item(), single.abs().max().item())
print(f"largest difference: {answer[0]:.1e} (the result's largest absolute value: {answer[1]:.3g})")

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["nbval-check-output", "remove-output"]
exercises.check("ex-sec6-single", answer)
