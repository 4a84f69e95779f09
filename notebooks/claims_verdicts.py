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
# # Claims: the papers' sentences, two verdicts each
#
# **One paper's verdicts:** [Jump to Conclusions](#claims-jtc) · [low-rank shortcuts and the tuned
# lens](#claims-lenses) · [FFN sub-updates](#claims-ffn) · [Secretly Linear](#claims-linearity) · [which verdict to
# believe](#claims-which) · [why a shape fails](#claims-why).
#
# Every claim of the four papers that can be checked from computed numbers, with the paper's own sentence and two
# verdicts, because a claim usually says two things:
#
# * its **shape**: which curve lies above which, where a curve rises, what fails. This is what a stand-in model can
#   test, and it is judged on every profile;
# * its **magnitude**: the paper's numbers ("saves ~3.3 layers", "0.28-0.45"). These belong to the paper's models:
#   ours are shown next to the paper's on every profile, but judged only on the `paper` profile. On the stand-in the
#   magnitude verdict reads "not judged: the paper's models".
#
# A shape verdict is one of three. Each rule gives a **margin**, positive on the claim's side and zero on its
# threshold, and the margin is recomputed on 200 resamples of what its statistic is computed over, which each record
# names beside its margin: the validation samples for precisions, surprisals, $r^2$, exit rules and sub-update
# scores, the value vectors for concept coverage, the prompts for steering, the sentences for the linearity scores
# and the pruning's perplexities, and the training seeds where a chapter has several. The claim **holds** where at
# least 95% of the resamples are on its side, **fails** where at least 95% are on the other, and is **undecided**
# otherwise; the interval beside the margin is the one that verdict reads (the 5% and 95% points of the resampled
# margins: a 90% interval), so it excludes 0 exactly when the verdict holds or fails. A statistic that does not move
# under its resamples says so instead of printing an interval of zero width. Before any verdict is drawn, each claim's
# **instrument** must pass the checks its record states (a baseline that works, a labelling that reaches the tokens,
# as many training runs of every trained component it compares as the seed rule needs, a cast through replaced
# sub-modules whose output depends on its start state, no single layer deciding a rule over layers); a claim
# whose instrument fails is **not judged** and counted apart. Three training seeds alone are no such evidence
# (all three agree by chance one time in eight): a verdict whose only resamples are the seeds is shown as "k of n
# seeds" and is undecided below five seeds. A statistic without resamples, or one that would need a selection redone
# per resample (the clusters of extreme scores), and a rule that reads one, get no interval: the verdict is the point
# estimate's, marked "no interval" with the reason in its record, and is not counted either way. The linearity
# scores and the pruning's perplexities are resampled by sentence, each resample a refit from per-sentence sums.
# The stand-in of GPT2-XL was also trained on two more seeds: a JTC shape verdict that differs between its
# three seeds is undecided on the stand-in ({ref}`below <claims-seeds>`).
#
# Each rule reads the sentence through one **lexicon** of the papers' vague words ("every", "most", "often", "close
# to zero", "substantially", "sharp", ...), shown below: one reading per word, the same for every claim of every
# paper; the note under it says when it was written and what a second review changed. Claims that test the same
# statistic on the same data are
# one **finding**, and the headline counts findings; checks that cannot fail on data (arithmetic, self-consistency)
# are shown, not counted.
#
# Each verdict comes from one function (`jtc_utils.jtc.claims` for the JTC paper, the `claims` module of each chapter's
# subpackage for the others), with its rule in the table; the lexicon and the resampling are in
# `jtc_utils.evidence.verdicts`. The numbers are read from `book/data/`, which the chapters write; every table is saved
# there too. The claim's id links to the chapter section that shows it, and a verdict that fails, is undecided or has
# no interval folds out its reason under *why* (one click); the reasons are also listed together at the end of the
# page.

# %% tags=["parameters", "hide-cell"]
profile = "tiny"  # "tiny" (the embedded world, offline) or "paper" (the paper's models and data)

# %% tags=["hide-cell"]
import pandas as pd
from IPython.display import HTML, Markdown, display
from markdown_it import MarkdownIt
from myst_nb import glue

from jtc_utils.jtc import regime, rejudge, seeds
from jtc_utils.evidence import claims, figure_registry, findings
from jtc_utils.jtc import claims as jtc_claims
from jtc_utils.book.display import claim_tables
from jtc_utils.book.display import claims_page
from jtc_utils.book.display.chapter import figure
from jtc_utils.core.data.setting import Setting
from jtc_utils.evidence import figdata

# the JTC claims again: on figures recomputed with the paper's training vectors per dimension (saved as
# regime_<fig>), and on the stand-in of GPT2-XL's other training seeds, every figure of its role that a claim reads
# recomputed on each (saved as seed<k>_<fig>); a shape that differs between the seeds is undecided
again = rejudge.rejudge(profile)  # computed by the figures' registered functions (ahead of this page, by `make book`)
for name, (data, params) in again.figures().items():
    figure_registry.save(name, data, params)
regime_params = again.regime_params

# what each paper's full table holds: folded under the grid above it, opened where a reader needs the details
FULL = "each claim's rule, our numbers, margin and 90% interval on the stand-in and on the real model"

# every claim of the four papers, each group a claims file of the figure registry, judged on the stored figures
FILES = {  # title -> (the claims file, the profile it is read on)
    "Jump to Conclusions, on the stand-in": ("claims", profile),
    "Jump to Conclusions, on the real model": ("claims_real", "real"),
    "Jump to Conclusions, in the paper's regime": ("claims_regime", profile),
    "Low-rank shortcuts and the tuned lens, on the stand-in": ("claims_lenses", profile),
    "Low-rank shortcuts and the tuned lens, on the real model": ("claims_lenses_real", "real"),
    "FFN sub-updates in the vocabulary space, on the stand-in": ("claims_ffn", profile),
    "FFN sub-updates in the vocabulary space, on the real model": ("claims_ffn_real", "real"),
    "Your Transformer is Secretly Linear, on the stand-in": ("claims_linearity", profile),
    "Your Transformer is Secretly Linear, on the real model": ("claims_linearity_real", "real"),
}
setting = Setting.of(profile)  # the page's profile, resolved once
groups = {title: (figure(name, setting), prof, name) for title, (name, prof) in FILES.items()}
regime_records = groups["Jump to Conclusions, in the paper's regime"][0]
stand_in = groups["Jump to Conclusions, on the stand-in"][0]

# %% [markdown]
# (claims-at-a-glance)=
# ## Every claim at a glance
#
# Each claim of the four papers with its status on each profile: the rule, the margin and the reason of every
# verdict are in the tables further down. A claim's id leads to the chapter that shows it; searching for an id
# lands on its row here.

# %% tags=["hide-input"]
PAPERS = {  # each paper's claims: the group read on this page's profile and the group read on the real model
    title.removesuffix(", on the stand-in"): (title, title.replace("on the stand-in", "on the real model"))
    for title in FILES
    if title.endswith(", on the stand-in")
}
here, real_name = "on " + claims_page.PROFILE_NAMES[setting.profile.name], "on the real model"
sections = []
for paper, (mine, real) in PAPERS.items():
    rows = {}
    for column, title in ((here, mine), (real_name, real)):
        for r in groups[title][0]:
            rows.setdefault(r["id"], {})[column] = r
    sections.append((paper, list(rows.values())))
HTML(
    claims_page.verdict_grid(
        sections,
        [here, real_name],
        "claims-grid",
        "Every claim's status on each profile",
        lambda cid: f"{claim_tables.page_of(cid)}.html#claim-{cid.lower()}",
        row_ids=True,
    )
)

# %% tags=["remove-cell"]
# what the introduction's first screen pastes: per paper, whether its headline holds on each profile, what holds and
# fails, and the one figure to look at (the headline claims and the figure were chosen from the papers' abstracts,
# before reading any verdict)
HEADLINES = {
    "Jump to Conclusions": (
        "a linear map fitted by least squares (mat) reads an early layer better than the logit lens (id)",
        ("C1a", "C2"),
        ("sec4_predictions.html#figure-real_fig4", "section 4's Precision@1 on SmolLM2"),
    ),
    "Low-rank shortcuts and the tuned lens": (
        "a rank-r shortcut with a norm (N-NJTC) beats the logit lens over the first half of the layers",
        ("N1",),
        ("lenses.html#figure-real_nnjtc_fig2", "the lens chapter's Precision@1 on SmolLM2"),
    ),
    "FFN sub-updates in the vocabulary space": (
        "the feed-forward blocks' sub-updates promote concepts, more than random vectors do",
        ("F1", "F3"),
        ("ffn_subupdates.html#figure-real_geva", "the FFN chapter's figures on SmolLM2"),
    ),
    "Your Transformer is Secretly Linear": (
        "consecutive blocks are close to linear maps, markedly less so without the residual",
        ("S2",),
        ("secretly_linear.html#figure-sl_fig1", "the linearity chapter's first figure"),
    ),
}
PROFILE_TITLES = {**claims_page.PROFILE_NAMES, "real": "the real model (SmolLM2-135M)"}
items = [
    claims_page.headline(
        paper,
        says,
        key,
        [
            (PROFILE_TITLES["real"], groups[PAPERS[paper][1]][0]),
            (PROFILE_TITLES[setting.profile.name], groups[PAPERS[paper][0]][0]),
        ],
        look,
    )
    for paper, (says, key, look) in HEADLINES.items()
]
glue("headline", HTML(f'<ul class="jtc-headline">{"".join(items)}</ul>'), display=False)

# %% [markdown]
# ## Summary
#
# Findings per group of claims, on the profile each group is read on. "Without an interval" counts findings whose
# statistic has no resamples (each record says why): their point verdict is in the tables, not in the counts of holds
# and fails. The last two columns count claims, not findings: those **not judged**, because the instrument that
# would measure them fails its check (below), and those **not computed**, because the profile lacks their figures;
# neither is counted as holds or fails.

# %% tags=["nbval-check-output", "hide-input"]
counts = pd.DataFrame({title: findings.count_findings(r) for title, (r, _, _) in groups.items()}).T
display(HTML(claims_page.summary_table(counts, "claims-summary")))

# %% [markdown]
# The same groups counted by claim, every claim in exactly one column:

# %% tags=["nbval-check-output", "hide-input"]
by_status = pd.DataFrame({title: claims_page.counts_by_status(r) for title, (r, _, _) in groups.items()}).T
display(HTML(claims_page.summary_table(by_status, "claims-by-status")))

# %% tags=["remove-cell"]
# what the introduction pastes (book/intro.md): one sentence per group, from the counts above, and the findings that
# fail or are undecided on the real model, by name
for key, title in (
    ("tiny", "Jump to Conclusions, on the stand-in"),
    ("real", "Jump to Conclusions, on the real model"),
    ("lenses", "Low-rank shortcuts and the tuned lens, on the stand-in"),
    ("lenses_real", "Low-rank shortcuts and the tuned lens, on the real model"),
    ("ffn", "FFN sub-updates in the vocabulary space, on the stand-in"),
    ("ffn_real", "FFN sub-updates in the vocabulary space, on the real model"),
    ("linearity", "Your Transformer is Secretly Linear, on the stand-in"),
    ("linearity_real", "Your Transformer is Secretly Linear, on the real model"),
):
    glue(f"summary_{key}", findings.summary(groups[title][0], groups[title][1]), display=False)
for key, title in (
    ("tiny", "Jump to Conclusions, on the stand-in"),
    ("real", "Jump to Conclusions, on the real model"),
):
    for verdict in ("fails", "undecided"):
        names = [
            f"{', '.join(f['claims'])} ({f['title']})"
            for f in findings.findings(groups[title][0])
            if f["verdict"] == verdict
        ]
        glue(f"{verdict}_{key}", "; ".join(names) or "none", display=False)

# %% [markdown]
# ## The lexicon
#
# How every rule reads the papers' words, and how a verdict is decided:

# %% tags=["hide-input"]
display(Markdown(claims.RULES_NOTE + "\n\n" + claims.INSTRUMENTS_NOTE + "\n\n" + claims_page.COVERAGE_NOTE))
claim_tables.Folded("The lexicon: every vague word and its one reading", claim_tables.lexicon_table())

# %% [markdown]
# (claims-which)=
# ## Which verdict to believe

# %% tags=["hide-input"]
display(Markdown(claims_page.WHICH_TO_BELIEVE))

# %% [markdown]
# Every claim judged on both profiles whose verdicts differ, with one sentence on why, written beside its rule
# from the records' numbers:

# %% tags=["nbval-check-output", "hide-input"]
from jtc_utils.ffn import claims as ffn_claims
from jtc_utils.lenses import claims as lens_claims
from jtc_utils.linearity import claims as sl_claims

DIFFERS = {**jtc_claims.DIFFERS, **lens_claims.DIFFERS, **ffn_claims.DIFFERS, **sl_claims.DIFFERS}
BELIEVE = {**jtc_claims.BELIEVE, **lens_claims.BELIEVE, **ffn_claims.BELIEVE, **sl_claims.BELIEVE}
pairs = [
    p
    for stand, real in (
        ("Jump to Conclusions, on the stand-in", "Jump to Conclusions, on the real model"),
        (
            "Low-rank shortcuts and the tuned lens, on the stand-in",
            "Low-rank shortcuts and the tuned lens, on the real model",
        ),
        (
            "FFN sub-updates in the vocabulary space, on the stand-in",
            "FFN sub-updates in the vocabulary space, on the real model",
        ),
        (
            "Your Transformer is Secretly Linear, on the stand-in",
            "Your Transformer is Secretly Linear, on the real model",
        ),
    )
    for p in claims_page.differing(groups[stand][0], groups[real][0])
]
HTML(claims_page.disagreement_table(pairs, DIFFERS, "claims-differ", BELIEVE))

# %% [markdown]
# ## Findings
#
# The claims that test one statistic on the same data, grouped; a finding's verdict is its claims' when they agree,
# "mixed" when they do not.

# %% tags=["nbval-check-output", "hide-input"]
shown = [(title, f) for title, (recs, _, _) in groups.items() for f in findings.findings(recs) if len(f["claims"]) > 1]
rows = [
    {"group": title, "finding": f["title"], "claims": ", ".join(f["claims"]), "verdict": f["verdict"]}
    for title, f in shown
]
statuses = {"verdict": [f["status"] for _, f in shown]}
display(
    claim_tables.Scrolled(claim_tables.style(pd.DataFrame(rows), "claims-findings", widths=False, statuses=statuses))
)

# %% [markdown]
# (claims-jtc)=
# ## Jump to Conclusions, on the stand-in and on a real model
#
# Every claim of the paper with one rule, judged twice: on the default profile's small stand-in models (6-24
# layers, widths 48-96, trained for minutes on a generated corpus) and on the real profile's models (SmolLM2-135M
# in the GPT-2 roles, the headless encoder MiniLM in BERT's $r^2$ role; see [the real model](real_model.ipynb)).
# A shape that does not hold on the stand-in is a statement about those models, not a refutation of the paper.
# Claims whose figures need a masked-LM head or several model sizes cannot be computed on the real model and say
# why. Each verdict that fails, is undecided or has no interval folds its reason under *why*; they are also listed
# together at the end of the page.


# %% tags=["nbval-check-output", "hide-input"]
def table(title, uuid):
    """One group's claims, the profile it is read on named in its verdict column and its caption."""
    recs, prof, _ = groups[title]
    return HTML(claims_page.group_table(recs, prof, uuid, f"{title} (profile {prof})"))


def full_table(paper, uuid, caption):
    """One paper's claims on the stand-in and on the real model side by side, folded under the line saying what
    they hold (the grid above gives every verdict; this table, each claim's rule, numbers and interval)."""
    pair = (groups[f"{paper}, on the stand-in"][0], groups[f"{paper}, on the real model"][0])
    return claim_tables.Folded(f"The full table: {FULL}", HTML(claims_page.side_by_side(*pair, uuid, caption)))


full_table(
    "Jump to Conclusions",
    "claims-jtc",
    "Jump to Conclusions: the stand-in (profile tiny) and the real model (profile real)",
)

# %% [markdown]
# (claims-seeds)=
# ## Jump to Conclusions, on three training seeds
#
# Each stand-in is one trained model, and training randomness alone can move a shape. The stand-in of GPT2-XL was
# trained twice more (`python -m jtc_utils.training.zoo train --only tiny-gpt2-xl-seed1 tiny-gpt2-xl-seed2`: the same
# texts, architecture and budget, another initialisation and batch order); every figure of its role that a claim reads
# is recomputed on each and judged by the same rules (`jtc_utils.jtc.seeds`). A shape verdict that differs between
# the seeds is **undecided** on the stand-in, in the tables above and in the counts; the other roles have one seed
# each, so the claims that read only their figures are not in this table.

# %% tags=["nbval-check-output", "hide-input"]
claim_tables.Folded(
    "The verdicts on each training seed", claim_tables.style(seeds.table(stand_in), "claims-seeds", widths=False)
)

# %% [markdown]
# ## Jump to Conclusions, in the paper's statistical regime
#
# The paper fits every map on 9,000 training vectors, which is few for its wide models (see the table below); the
# stand-ins are narrower, so the same 9,000 vectors are many per dimension and a least-squares map barely
# overfits. Here every figure a claim reads is recomputed with the training vectors cut to the paper's count per
# dimension for the model each stand-in plays ($n = 9000 \cdot d_\text{stand-in} / d_\text{paper}$, the first $n$
# of the 9,000), and the same rules judge them. [Section 3](sec3_linear_shortcuts.ipynb) and
# [section 4](sec4_predictions.ipynb) show how $r^2$ and Precision@1 move with the number of vectors.

# %% tags=["nbval-check-output", "hide-input"]
sizes = (
    pd.DataFrame(
        [
            {"figure": f, "model": p["model"], "plays": p["paper_model"], "n_train": p["n_train"]}
            for f, p in sorted(regime_params.items())
        ]
    )
    .groupby(["model", "plays", "n_train"])
    .size()
    .rename("figures recomputed")
    .reset_index()
    .rename(columns={"model": "stand-in", "plays": "plays the paper's", "n_train": "training vectors"})
)
claim_tables.Folded(
    "The training vectors of each figure, and the verdicts in the paper's regime",
    sizes.style.hide(axis="index").set_uuid("claims-regime-sizes").set_table_attributes('class="jtc-claims"'),
    table("Jump to Conclusions, in the paper's regime", "claims-jtc-regime"),
)

# %% [markdown]
# The two regimes side by side (shape verdicts and our numbers):

# %% tags=["nbval-check-output", "hide-input"]
compared = regime.compare(groups["Jump to Conclusions, on the stand-in"][0], regime_records)
claim_tables.Folded("The two regimes side by side", claim_tables.style(compared, "claims-regime-compare", widths=False))

# %% [markdown]
# ## The papers around it
#
# The claims of N-NJTC (N0-N8) and of the tuned lens (T1-T3, with the book's hypothesis H1) from
# [the lens chapter](lenses.ipynb), on the stand-in of GPT2-XL; of Geva et al. (2022), F1-F11, from
# [the FFN chapter](ffn_subupdates.ipynb), where human annotation is replaced by the generator's word classes and
# toxicity by concept steering; and of Razzhigaev et al. (2024), S1-S12, from
# [the linearity chapter](secretly_linear.ipynb), where S11 and S12 are descriptive in the paper and carry no
# verdict. Their rules were written from those papers' words; the paper's numbers are shown for each.
#
# (claims-lenses)=
# ### Low-rank shortcuts and the tuned lens
#
# The lens claims are also judged on the real model (SmolLM2-135M, rank 5), by the same rules on its own N-NJTC
# Figure 3, lens grid at every layer (both on its first validation samples, resampled) and lens table; its N-NJTC
# Figure 2 (N6-N8) has NJTC and N-NJTC on the pairs those claims read (each layer to the next and to the last), not
# on every pair. A claim that compares trained components is judged only when each component has the training runs
# its check asks for (the check and its count are in the claim's record): the real model's NJTC, N-NJTC and tuned
# lens were trained once, so those claims are not judged there; the stand-in's NJTC and N-NJTC were trained on
# several seeds, its tuned lens once.

# %% tags=["nbval-check-output", "hide-input"]
full_table(
    "Low-rank shortcuts and the tuned lens",
    "claims-lenses",
    "Low-rank shortcuts and the tuned lens: the stand-in of GPT2-XL (profile tiny) and the real model (profile real)",
)

# %% [markdown]
# (claims-ffn)=
# ### FFN sub-updates in the vocabulary space
#
# The FFN claims are judged on the real model too (the FFN chapter's real-model figure: the dominant ten, the
# scores, the events, saturation and the exit rules on its first validation samples, resampled). Its concept claims
# (F1-F4) read the concept classes of the model's whole vocabulary that the book makes with a sentence encoder (the
# chapter says how they hold hand-checked categories and what they can and cannot see), their resamples the value
# vectors; F1-F3 need a labelling that reaches at least half of the top tokens they count, which these classes do
# (each record's instrument check gives the share). F10 compares the sub-update rule with classifiers that must work
# as a baseline (within reach of the paper's accuracy, and saving more layers than the same classifiers trained on
# shuffled labels) before its verdict is drawn. F8's clusters are formed block
# by block (one clustering of every value does not fit), a deviation its record states; steering (F9) needs classes
# with a sign, which the concept classes are not, and says so.

# %% tags=["nbval-check-output", "hide-input"]
full_table(
    "FFN sub-updates in the vocabulary space",
    "claims-ffn",
    "FFN sub-updates in the vocabulary space: the stand-ins (profile tiny) and the real model (profile real)",
)

# %% [markdown]
# (claims-linearity)=
# ### Your Transformer is Secretly Linear
#
# The linearity claims are also judged on the real model (SmolLM2-135M on held-out Wikipedia sentences, the real-model
# figure of its chapter), by the same rules: "every GPT-style model" reads every causal decoder, which there is
# SmolLM2 alone, and the scores are resampled by sentence with a refit per resample, as on the stand-in. A refit on
# a resample fits its own sentences more closely, so the resampled scores sit above the in-sample score; their
# margins are recentred on the margin before the verdict is read (the shift is shown beside the interval). The claims
# about pretraining, the regulariser and fine-tuning (S5-S9) need the real model trained again and say so; S10's
# sentence compares a distilled replacement, which the real model's blocks did not get.

# %% tags=["nbval-check-output", "hide-input"]
full_table(
    "Your Transformer is Secretly Linear",
    "claims-linearity",
    "Your Transformer is Secretly Linear: the stand-ins (profile tiny) and the real model (profile real)",
)

# %% [markdown]
# (claims-why)=
# ## Why a shape fails, is undecided or is not judged
#
# The reason of every claim whose shape verdict fails, is undecided or has no interval on some profile, read from the
# claim's record
# (a field of the claim, written in its module beside the rule), with a link to the chapter that shows it. A claim
# that fails without a reason stops this cell, so a verdict that changes cannot go unexplained.

# %% tags=["hide-input"]
why = {}
for title, (recs, prof, _) in groups.items():
    for r in recs:
        if r.get("not_judged"):  # an instrument that fails its check: why, from the record's checks
            why.setdefault(r["id"], {}).setdefault(r["reason"], []).append(f"{title}, {findings.shape_verdict(r)}")
            continue
        if r.get("kind", "claim") != "claim" or r["verdict"] is None:
            continue
        if r["verdict"] in ("fails", "undecided") or not r["resampled"]:  # a point verdict says why it has no interval
            assert r["reason"], f"claim {r['id']} {r['verdict']} on {title} without a reason; add it to REASONS"
            # one reason once, with every group it is given for (the stand-in and the paper's regime often share it)
            why.setdefault(r["id"], {}).setdefault(r["reason"], []).append(f"{title}, {findings.shape_verdict(r)}")
lines = [
    f"* <span id=\"why-{cid.lower()}\"></span>**[{cid}]({claim_tables.page_of(cid)}.html#claim-{cid.lower()})** "
    + " ".join(f"*{'; '.join(where)}*: {reason}" for reason, where in texts.items())
    for cid, texts in why.items()
]
if lines:  # folded: a reader opens it, or a link to one claim's reason opens it at that claim
    display(
        claim_tables.Folded(
            f"The reasons, claim by claim ({len(why)} claims)", HTML(MarkdownIt().render("\n".join(lines)))
        )
    )
else:
    display(Markdown("Every judged shape holds."))


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
# :label: ex-claims-real
# ```
# **Run and read.** Which JTC claims fail in shape on the stand-in but hold on the real model? Give the set of ids.
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-claims-real
# :class: dropdown
# ```

# %% tags=["solution"]
stand = {r["id"] for r in groups["Jump to Conclusions, on the stand-in"][0] if r["holds"] is False}
real = {r["id"] for r in groups["Jump to Conclusions, on the real model"][0] if r["holds"] is True}
answer = stand & real
print(", ".join(sorted(answer)) or "none")

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["nbval-check-output", "remove-output"]
exercises.check("ex-claims-real", answer)

# %% [markdown]
# ```{exercise-start}
# :label: ex-claims-almost
# ```
# **Compute.** C1a reads the paper's "consistently ... across the network" as *every* layer pair. A looser reading,
# "(almost) every pair", would accept 95%. Compute the smallest share of pairs with $r^2(\texttt{mat}) >
# r^2(\texttt{id})$ over the stand-in's eight $r^2$ figures (`linear.r2_summary`): would the looser rule
# change the verdict?
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-claims-almost
# :class: dropdown
# ```

# %% tags=["solution"]
from jtc_utils.core.analysis import linear

figs = ("fig2", "fig3", "fig12", "fig13", "fig22", "fig23", "fig24", "fig25")
shares = {
    f: linear.r2_summary(
        np.asarray(figdata.load(f)["data"]["r2_mat"], dtype=float),
        np.asarray(figdata.load(f)["data"]["r2_id"], dtype=float),
    )["share_mat_above_id"]
    for f in figs
}
answer = min(shares.values())
print(f"smallest share {answer:.3f}: the looser rule {'agrees' if answer >= 0.95 else 'differs'}")

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["nbval-check-output", "remove-output"]
exercises.check("ex-claims-almost", answer)

# %% [markdown]
# ```{exercise-start}
# :label: ex-claims-magnitudes
# ```
# **Change the method.** Change the verdict: judge the paper's magnitudes on the stand-in anyway. The claim functions of
# `jtc_utils.jtc.claims.CLAIMS` return the magnitude verdict before `jtc_claims.check` masks it; count how many of
# them hold. Why is that number not evidence for or against the paper?
# ```{exercise-end}
# ```
#
# ```{solution-start} ex-claims-magnitudes
# :class: dropdown
# ```

# %% tags=["solution"]
raw = [f(claims.default_get) for f in jtc_claims.CLAIMS.values()]
answer = sum(bool(r["magnitude"]["holds"]) for r in raw if r["magnitude"])
print(
    f"{answer} of {sum(r['magnitude'] is not None for r in raw)} magnitude rules would pass on the stand-in "
    "(a different model: its numbers are not the paper's to match)"
)

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["nbval-check-output", "remove-output"]
exercises.check("ex-claims-magnitudes", answer)
