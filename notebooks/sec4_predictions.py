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
# # Predictions from early layers (paper §4)
#
# **What this chapter finds**, claim by claim, before how it finds it (each claim's id leads to its table, under the
# figure that shows it):
#
# ```{glue} findings
# ```
#
# Section 3 showed that `mat` approximates later hidden states better than `id`. Does that matter for what the
# model *says*? The paper casts the layer-$\ell$ state to the last layer and reads it out with the model's own
# output head $R$:
#
# * `id`: $R(h^\ell)$, reading the state as if it were final (for GPT-2, $R$ includes the final layer norm
#   `ln_f`, so this is the *logit lens*);
# * `mat`: $R(h^\ell A_\ell)$ with the least-squares map $A_\ell$ from layer $\ell$ to the last layer $L$.
#
# There are no gold labels: a prediction is judged against **the model's own final output** $p_\text{final} =
# R(h^L)$. For each validation sentence $s$ (one random position per sentence, as in §3):
#
# * **Precision@k** $= 1$ if the top-1 token of the mapping is among the top-$k$ tokens of $p_\text{final}$;
# * **Surprisal** $= -\ln p_\text{final}(\text{top-1 of the mapping})$: how unlikely the final model finds the
#   early guess. At $\ell = L$ it is $-\ln \max p_\text{final}$, not 0.
#
# GPT-style models predict the next token, BERT-style models the masked token.
#
# ```{admonition} What runs here
# :class: note
# Profile **{glue:text}`profile`**. With the default `tiny` profile the models are the book's small stand-ins
# (half the paper's depth, widths 48-96) on the generated corpus: see [the embedded world](embedded_world.ipynb).
# The paper's numbers are quoted next to ours; they come from GPT-2 and BERT on Wikipedia.
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
from IPython.display import display
from myst_nb import glue

from jtc_utils.book.display.chapter import Chapter, drawn
from jtc_utils.jtc.figures import real_model_line
from jtc_utils.jtc import top_tokens
from jtc_utils.core.analysis import readout

glue("profile", profile, display=False)
chapter = Chapter(profile, n_train, n_val, seed, real_n_train, real_n_val, device=device)
figure, results = chapter.figure, chapter.results


# %% [markdown]
# ## Next-token prediction (paper Figs. 4 and 5)
#
# The deepest GPT-style model (the stand-in of 48-layer GPT-2 XL) on the encyclopedia domain. The three line
# widths are $k = 1, 5, 10$ (widest: $k=1$); `mat` is blue and solid, `id` red and dashed.
# The numbers come from `jtc_utils.core.analysis.readout.per_sample` (cast, read out one layer at a time, compare with
# the final output) and `readout.curves` (means, and for surprisal a seeded 95% bootstrap band).

# %%
figure("fig4")

# %%
figure("fig5")

# %% [markdown]
# The paper (Fig. 4): until layer 44 of 48, `mat`'s Precision@1 exceeds `id`'s by more than 0.2, and in the early
# layers `mat` reaches P@10 of 0.62-0.82, P@5 of 0.52-0.74 and P@1 of 0.28-0.45. Surprisal (paper Fig. 5) is
# substantially lower with `mat` at every layer. The verdicts below are computed by `jtc_utils.jtc.claims` with the
# rule printed next to each (layers are compared at the same relative depth: layer 44 of 48 is layer 22 of 24).
# Each claim gets two verdicts: its shape (which curve lies above which), judged here, and its magnitude (the
# paper's numbers), shown beside ours but judged only on the paper's models.

# %% tags=["nbval-check-output"]
chapter.verdicts(["C2", "C3", "C4"])

# %% [markdown]
# ### The real model: SmolLM2-135M on Wikipedia
#
# The same two figures for the real decoder of [the real profile](real_model.ipynb), 30 layers, on Wikipedia lead
# sentences, and the same claims judged by the same rules (its 30 layers are compared at the same relative depth).

# %%
print(real_model_line())
figure("real_fig4")

# %%
figure("real_fig5")

# %%
chapter.real_verdicts(["C2", "C3", "C4"])

# %% [markdown]
# On the real model the paper's curves come back: `mat`'s early-layer precision falls inside the paper's ranges for
# GPT-2 (C3's numbers), and its surprisal is below `id`'s at every layer with the bootstrap bands apart (C4), where
# the stand-ins are too easy to read early and their bands meet near the end. C2's number, "more than 0.2 at every
# layer", is not met: the gain dips below 0.2 at some layers, though `mat` is above `id` at every one. Precision@1
# of both mappings at a few layers, side by side:

# %%
real4 = results["real_fig4"]
layers = [1, 8, 15, 22, 29]
print(
    pd.DataFrame(
        {m: [round(real4["curves"][m]["p@1"][layer], 3) for layer in layers] for m in ("mat", "id")},
        index=pd.Index(layers, name="layer"),
    ).T.to_string()
)

# %% [markdown]
# ## Masked-token prediction (paper Figs. 6 and 7)
#
# The deeper BERT-style model (stand-in of BERT-large) predicts the token under `[MASK]`.

# %%
figure("fig6")

# %%
figure("fig7")

# %% [markdown]
# The paper (Fig. 6): over the first ten layers `mat` reaches precisions of 0.2-0.6 for every $k$ while `id` stays
# close to 0; `mat`'s P@1 exceeds `id`'s by more than 0.17 at most layers and is above 0.25 from layer 3 on.

# %% tags=["nbval-check-output"]
chapter.verdicts(["C5", "C6"])

# %% [markdown]
# ## Table 1: what the early layers "say"
#
# The paper's Table 1 lists, for BERT-large on two Leipzig news sentences, the top-5 tokens of `id` and `mat` at
# layers 4 and 12 of 24, and of the final model. Here are the corresponding columns for our 12-layer stand-in on
# the news domain (layers 2 and 6, about one sixth and one half of the depth), for two sentences the notebook picks
# from the validation set: the shortest whose masked slot is a number or date word, and the shortest whose slot is
# a function word, mirroring the paper's "surgery in [MASK]" and "asked to [MASK] continue". `##` marks a word
# piece that continues a word.

# %% tags=["nbval-check-output"]
t1 = figure("table1")

# %% [markdown]
# Any sentence can be put through the same function, `top_tokens.top_tokens`, with `[MASK]` where the word to
# predict goes (for a GPT-style model, the text before `[MASK]` is the prefix whose next token is predicted):

# %%
exp_news = chapter.experiment("table1")
top_tokens.top_tokens(exp_news, "the government said on [MASK] that it would build a new bridge.")

# %% [markdown]
# For the real model the same lists come from two validation sentences of Wikipedia (the first two whose prefix has
# at least eight tokens); the text up to `[MASK]` is what the model reads, and the columns are its guesses for the
# next token. Tokens starting with `Ġ` in the tokenizer's vocabulary are shown with `␣` (a leading space).

# %%
tl = figure("real_toplists")

# %% [markdown]
# In the paper the `id` columns and the final column depend only on the input, so they can be checked token for
# token; the `mat` columns depend on the fitted matrices. With the stand-in we check the same determinism against
# the Hugging Face model itself (claim C14): the final column is `BertForMaskedLM`'s own top-5, and the `id` columns
# come out the same from a fresh single-sentence forward pass as from the cached batched one.
#
# ### Plausibility, measured automatically
#
# The paper's annotator marked a top-5 token as *plausible* when it could grammatically fill the slot, over 50
# sentences × 25 layers: **85.36% for `mat` against 52.8% for `id`**, with `id` better in fewer than 4.3% of the
# 1,250 instances. Our generated corpus knows the word class of every slot (function word, content word, entity
# name, fact, number, agreement word, punctuation), so the study can run without an annotator:
# `top_tokens.plausibility` counts a token as plausible when it fills a slot of the same class somewhere in the
# domain's training sentences. That is coarser than a human judgement (any number fits a number slot) and it is
# the same rule for both mappings. It needs the word classes of the generated corpus, so it runs on the stand-in
# only: real text carries no such labels, and a human annotator is what the paper used there.

# %% tags=["nbval-check-output"]
pl = figure("plausibility")
if "skipped" not in pl:
    print(f"{pl['n_sentences']} sentences x {pl['n_layers'] + 1} layers = {pl['n_instances']} instances, top-{pl['k']}")
    print(
        f"plausible tokens: mat {pl['token_rate']['mat']:.1%}, id {pl['token_rate']['id']:.1%} (paper: 85.36% vs 52.8%)"
    )
    print(
        f"instances where id has more plausible tokens than mat: {pl['id_better_share']:.1%} (paper: < 4.3%); "
        f"where mat has more: {pl['mat_better_share']:.1%}"
    )
chapter.verdicts(["C13", "C14"])

# %%
if "skipped" not in pl:
    display(pd.DataFrame(pl["per_layer"]).rename_axis("layer").T.round(2))

# %% [markdown]
# ## Beyond the paper: which predictions are settled early?
#
# Every position of our corpus carries the label of the word there, so Precision@1 can be broken down by the kind
# of token the model predicts (for GPT-style models: the *next* token; "end" means the position is the last one).
# Function words and punctuation are largely decided by the local syntax; facts (a city's river, a person's
# birth year) and entity names need recall.

# %%
for fig_id in ("labels_gpt48", "labels_bert24"):
    figure(fig_id, labels=["function", "punct", "number", "fact", "entity"])

# %% tags=["nbval-check-output"]
rows = []
for fig_id in ("labels_gpt48", "labels_bert24"):
    d = results[fig_id]
    if "skipped" in d:
        continue
    half = d["n_layers"] // 2
    for lab in ("function", "punct", "agree", "content", "number", "entity", "fact"):
        if lab in d["by_label"]:
            b = d["by_label"][lab]
            rows.append(
                {
                    "model": d["model"],
                    "label": lab,
                    "n": b["n"],
                    "P@1 mat at L/2": round(b["mat"][half], 2),
                    "P@1 id at L/2": round(b["id"][half], 2),
                    "gain": round(b["mat"][half] - b["id"][half], 2),
                }
            )
print(pd.DataFrame(rows).to_string(index=False))

# %% [markdown]
# How to read it. In the GPT-style stand-in, function words, punctuation and agreement words are predicted
# correctly from mid-depth on by both mappings, so there is little for `mat` to add; numbers, entity names and
# content words are settled later, and this is where `mat`'s gain over `id` is concentrated. In the BERT-style
# stand-in `mat` gains about as much for every kind of token at mid-depth: `id` misses part of even the function
# words and punctuation, which the model has in effect already decided but not yet written in the output basis.
# For facts and entities `mat` stays lower than for function words in both models: a linear map can re-express
# information the state carries, but it cannot recall a fact the model has not retrieved yet.

# %% [markdown]
# ## Reading a sentence layer by layer (interactive)
#
# Table 1 reads one position at a few layers. The view below reads every position at every layer, like the tuned lens's
# prediction trajectories: for validation sentences of the stand-in of <a href="#figure-fig4">Figure 1</a> (paper Fig.
# 4) and of SmolLM2 on Wikipedia, the top token and its probability under `id` (top), `mat` (middle) and the tuned lens
# (bottom; see [every lens on one bench](lenses.ipynb)). Pick a sentence in the menu and hover for details. The column
# of a token shows the prediction of the token *after* it; the top row is the model's own output. In a live notebook,
# `layer_view.figure([trajectory.trajectory(exp, "any sentence")]).show()` (`trajectory` is
# `jtc_utils.lenses.trajectory`) draws the same view for a sentence of your own. The numbers are saved to
# `book/data/layer_view.json`.

# %%
from IPython.display import HTML

from jtc_utils.book.display import layer_view

view = figure("layer_view")  # the first four validation sentences of each model, read by id, mat and the tuned lens
HTML(layer_view.html(layer_view.figure(view["trajectories"], layer_view.BOOK_MAPPINGS), "layer-view"))


# %% [markdown]
# ## Beyond the paper: predictions in the paper's statistical regime
#
# [Section 3](sec3_linear_shortcuts.ipynb) refits `mat` on fewer training vectors, down to below one per dimension,
# to bring the stand-ins into the paper's regime (its table gives the paper's vectors per dimension for GPT-2 and
# GPT-2 XL). The same fits, read out: Precision@1 of `mat` against the training vectors per dimension, with `id`
# dashed.

# %% tags=["nbval-check-output"]
from jtc_utils.jtc import regime

size_curves = [regime.sample_size_curve(chapter.experiment(f)) for f in ("fig26", "fig4")]
drawn("sample_size_gpt12", size_curves[0], {}, view="p1", also=size_curves[1:])
print(pd.DataFrame([r for c in size_curves for r in regime.summary(c)]).round(3).to_string(index=False))

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
# :label: ex-sec4-half
# ```
# **Run and read.** From which layer on does `mat` agree with the model's final top-1 token at least half of the time in
# <a href="#figure-fig4">Figure 1</a> (paper Fig. 4)? Give the first layer where its Precision@1 reaches 0.5.
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-sec4-half
# :class: dropdown
# ```

# %% tags=["solution"]
p1 = np.asarray(results["fig4"]["curves"]["mat"]["p@1"], dtype=float)
answer = int(np.flatnonzero(p1 >= 0.5)[0])
print(f"layer {answer} of {results['fig4']['n_layers']}")

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["nbval-check-output", "remove-output"]
exercises.check("ex-sec4-half", answer)

# %% [markdown]
# The next exercises work on the model of <a href="#figure-fig4">Figure 1</a>: its experiment (`exp`, the hidden
# states and the final predictions) and its middle layer (`mid`).

# %%
exp = chapter.experiment("fig4")
mid = exp.n_layers // 2

# %% [markdown]
# ```{exercise-start}
# :label: ex-sec4-precision
# ```
# **Compute.** Compute Precision@1 of `id` at the middle layer of the model of <a href="#figure-fig4">Figure 1</a>
# (paper Fig. 4) by hand: cast the validation states with `readout.cast`, read them out with `readout.readout_stats`,
# and compare the top-1 ids with the final model's top-1 (`exp.predictions["final_topk"][:, 0]`). It should equal the
# figure's curve.
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-sec4-precision
# :class: dropdown
# ```

# %% tags=["solution"]
ids, _ = readout.readout_stats(exp.adapter, readout.cast(exp, "id", mid))
answer = float((ids[:, 0] == exp.predictions["final_topk"][:, 0]).mean())
print(f"by hand {answer:.4f}, curve {results['fig4']['curves']['id']['p@1'][mid]:.4f}")

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["nbval-check-output", "remove-output"]
exercises.check("ex-sec4-precision", answer)

# %% [markdown]
# ```{exercise-start}
# :label: ex-sec4-sentence
# ```
# **Change the method.** Write a sentence of your own in the style of the news domain, mask a date word, and look at the
# layer where `mat` starts to propose day names. Does `id` ever get there before the last layers? (No automatic check:
# read the table.)
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-sec4-sentence
# :class: dropdown
# ```

# %% tags=["solution"]
top_tokens.top_tokens(
    exp_news,
    "shares in the company rose 3 percent on [MASK], after the bank reported results.",
    layers=range(0, exp_news.n_layers, 2),
)

# %% [markdown]
# ```{solution-end}
# ```
