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
# # The embedded world
#
# The paper studies GPT-2 (12, 24, 36 and 48 layers) and BERT (12 and 24 layers) on Wikipedia sentences and on
# news sentences from the Leipzig corpus. Those weights and data are gigabytes of downloads, and the paper's
# experiments want a GPU. So that this book can be rebuilt on a laptop with no network, its default profile,
# `tiny`, runs on a small world that the book makes itself:
#
# * a **generated corpus** with two domains about one shared world of invented people, cities and organisations:
#   *encyclopedia* sentences (standing in for Wikipedia) and *news* sentences (standing in for Leipzig);
# * a **zoo** of small GPT-2- and BERT-architecture models trained from scratch on it, committed to the
#   repository and loaded through the same `from_pretrained` path as the real models.
#
# This page shows what the stand-in is, so that every later result can be read with its limits in mind.

# %% tags=["parameters"]
profile = "tiny"  # this page describes the embedded profile whatever the book's profile is

# %%
import collections

import pandas as pd
from IPython.display import Image, display

from jtc_utils import corpus, zoo
from jtc_utils.paths import ZOO_DIR

# %% [markdown]
# ## The corpus
#
# Every sentence is generated from templates over a world of entities with fixed facts: a person has one
# birthplace, one birth date, one occupation and one employer, and every sentence that mentions them states those
# facts the same way. Popular entities appear often (their facts can be learned); most appear rarely. Every word
# carries a label saying what kind of prediction it is, so that later chapters can ask *which* predictions are
# settled early.

# %%
for domain in corpus.DOMAINS:
    print(f"--- {domain}")
    for s in corpus.pool(domain, "validation", n=3):
        print(repr(s.text))

# %% [markdown]
# The labels of one sentence, word by word:

# %%
s = corpus.pool("encyclopedia", "validation", n=1)[0]
print(" ".join(f"{w}/{lab}" for w, lab in s.words()))

# %% [markdown]
# How the words of the models' training text divide among the labels, per domain (the `fact` row is the share of
# words that can only be predicted by recalling a fact about an entity named earlier in the sentence):

# %% tags=["nbval-check-output"]
train = corpus.training_sentences(n=20_000)
counts = {d: collections.Counter(lab for s in train if s.domain == d for _, lab in s.words()) for d in corpus.DOMAINS}
shares = pd.DataFrame(counts).fillna(0)
print((shares / shares.sum()).round(2).loc[list(corpus.LABELS)].to_string())

# %%
words = [[w for w, lab in s.words() if lab != "punct"] for s in train]
lengths = pd.Series([len(w) for w in words])
print(f"{len(train):,} sentences shown here (the training text has {corpus.TRAINING_SENTENCES:,}); "
      f"mean length {lengths.mean():.1f} words, {100 * (lengths > 35).mean():.0f}% over 35 words; "
      f"{len({w for ws in words for w in ws}):,} distinct words")
print("experiment pools:", {d: corpus.POOL_SIZES[d] for d in corpus.DOMAINS})

# %% [markdown]
# ## The zoo
#
# Six models, mirroring the paper's set at half the depth. They were trained with
# `python -m jtc_utils.zoo train` on two CPU cores; the table is read from each model's card. The "unigram" column
# is the loss of always predicting the training frequency of each token: a model that has learned anything is far
# below it.

# %%
cards = [zoo.load_card(name) for name in zoo.ZOO]
table = pd.DataFrame([{
    "model": c["name"], "stands for": c["stands_for"], "layers": c["config"]["n_layer"],
    "width": c["config"]["d_model"], "parameters": f"{c['parameters']:,}", "tokens seen": f"{c['tokens_seen']:,}",
    "train min": round(c["train_time_s"] / 60, 1), "held-out loss": c["heldout"]["loss"],
    "unigram loss": c["heldout"]["unigram_loss"],
    "accuracy": c["heldout"].get("next_token_accuracy", c["heldout"].get("masked_token_accuracy")),
} for c in cards]).set_index("model")
display(table)
print(f"zoo size on disk: {zoo.zoo_size_bytes() / 2**20:.1f} MiB")

# %% [markdown]
# "accuracy" is next-token accuracy for the GPT-style models and masked-token accuracy (15% of tokens masked) for
# the BERT-style ones, on held-out sentences of both domains. The training curves:

# %%
for name in zoo.ZOO:
    display(Image(filename=str(ZOO_DIR / name / "loss.png")))

# %% [markdown]
# ```{admonition} How this differs from the paper's models
# :class: warning
# The stand-ins are about a thousand times smaller than GPT-2 XL, saw about a million tokens instead of billions,
# and their world is far more regular than Wikipedia. Results that depend on scale may not carry over: each
# chapter says where a claim of the paper holds on the stand-in and where it does not.
# ```

# %% [markdown]
# ## Is the world rich enough for the paper's question?
#
# A quick check before the chapters: for the deepest GPT-style model, map each layer's hidden state to the last
# layer with a least-squares matrix (`mat`, fitted on the 9,000 training sentences) or read it as is (`id`), and
# count how often the top-1 token agrees with the model's own final prediction on the 3,000 validation
# sentences. Section 4 of the paper (a later chapter) studies this in full; here we only want to see that the
# stand-in leaves room for `mat` to beat `id`.

# %% tags=["nbval-check-output"]
from jtc_utils import figdata, figures, predictions, profiles

P = profiles.get("tiny")
exp = figures.experiment(P.role("gpt48"), P.main_domain)
curves = predictions.layer_curves(exp, ks=(1,))
check = pd.DataFrame({"mat": curves["mat"]["p@1"], "id": curves["id"]["p@1"]}).rename_axis("layer")
figdata.save("world_check", {"layer": list(range(exp.n_layers + 1)), "p@1_mat": check["mat"].values,
                             "p@1_id": check["id"].values}, {"model": exp.model_name, "domain": exp.domain})
print(check.T.round(2).to_string())
print(f"mat beats id at {(check['mat'] > check['id']).iloc[:-1].sum()} of {exp.n_layers} layers")
