"""The hardness report of the embedded world (issue 13): how much of the stand-ins' task can be copied from the
training text or read from the earliest layers. Reported, never tuned: no generator setting is chosen by it.

Corpus measures (:mod:`jtc_utils.embedded.leaks`): prefix leak, skeleton and 4-gram overlap, duplicates, repeated
clauses, past events after the present year. Model measures, on each GPT-style stand-in at the validation
positions of each domain (the paper's protocol, :class:`~jtc_utils.experiment.Experiment`):

* ``confident``: share of final predictions whose probability is above 0.9;
* ``mat_layer0``: share of samples where ``mat`` from layer 0 (the embeddings alone) gives the final top-1;
* ``bigram``: share of samples whose final top-1 is what a bigram model of the training text predicts after the
  token at the position (the most frequent next token, counted over the tokenized training sentences).

The first world's report was computed once at its last commit and is stored with that commit
(``python -m jtc_utils.hardness --save jtc_utils/embedded/hardness_v1.json``), since that world leaves the tree
when the zoo moves to corpus v2.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path
from collections import Counter, defaultdict

import numpy as np

from . import corpus as corpus_v1
from . import figures, predictions, profiles
from .embedded import leaks
from .embedded.world import PRESENT

CONFIDENT = 0.9


def bigram_table(tokenizer, sentences) -> dict:
    """token id -> the most frequent next token id in the training sentences (ties: the smaller id)."""
    follow = defaultdict(Counter)
    for ids in tokenizer([s.text for s in sentences], add_special_tokens=False)["input_ids"]:
        for a, b in zip(ids, ids[1:]):
            follow[a][b] += 1
    return {a: min(c.items(), key=lambda kv: (-kv[1], kv[0]))[0] for a, c in follow.items()}


def model_measures(exp, bigram: dict) -> dict:
    """The three model measures of one experiment (see the module docstring)."""
    import torch

    final = predictions.final_stats(exp, ks=(1,))
    p1 = torch.exp(final["logits"].max(-1).values.double() - final["lse"]).cpu().numpy()
    top1 = final["topk"][:, 0]
    before = [ids[p] for ids, p in zip(exp.val.input_ids, exp.val.positions)]
    guess = np.array([bigram.get(t, -1) for t in before])
    return {"n": len(top1), "confident": float(np.mean(p1 > CONFIDENT)),
            "mat_layer0": float(exp.predictions["precision"]["mat"][1][0].mean()),
            "bigram": float(np.mean(guess == top1))}


def report(corpus=corpus_v1, profile: str = "tiny", seed: int = 0) -> dict:
    """The whole report for the corpus module ``corpus`` and the profile's GPT-style stand-ins."""
    train = corpus.training_sentences(seed=seed)
    out = {"corpus": leaks.report({d: corpus.pool(d, "validation", seed=seed) for d in corpus.DOMAINS}, train,
                                  PRESENT),
           "present_year": PRESENT, "models": {}}
    p = profiles.get(profile)
    bigrams = {}  # per tokenizer: the GPT-style stand-ins share one
    for model in p.gpt:
        for which in ("main", "second"):
            exp = figures.experiment(model, p.domain(which), profile, None, None, seed)
            tok = exp.adapter.tokenizer
            key = (tok.name_or_path, len(tok))
            if key not in bigrams:
                bigrams[key] = bigram_table(tok, train)
            out["models"].setdefault(model, {})[exp.domain] = model_measures(exp, bigrams[key])
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--save", help="write the report as JSON here, with the commit it was computed at")
    args = ap.parse_args(argv)
    r = report()
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--", "jtc_utils", "zoo"], capture_output=True,
                                text=True).stdout.strip())
    doc = {"world": "v1 (jtc_utils.corpus, zoo trained on it)", "commit": commit, "uncommitted_changes": dirty,
           "report": r}
    text = json.dumps(doc, indent=1, sort_keys=True)
    if args.save:
        from .paths import atomic_write_text

        atomic_write_text(Path(args.save), text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
