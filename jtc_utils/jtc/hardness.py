"""The hardness report of the embedded world: how much of the stand-ins' task can be copied from the training text or
read from the earliest layers. Reported, never tuned: no generator setting is chosen by it. Corpus measures come
from :mod:`jtc_utils.embedded.leaks`; model measures (:func:`model_measures`) are, on each GPT-style stand-in at the
validation positions: ``confident`` (final predictions above probability 0.9), ``mat_layer0`` (``mat`` from the
embeddings alone gives the final top-1) and ``bigram`` (the final top-1 is the training text's most frequent next
token). :func:`report` computes the current world's; the first world's is stored in ``hardness_v1.json``
(``python -m jtc_utils.jtc.hardness --save ... --world ...`` at that world's commit), and :func:`table` sets the
two side by side.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from jtc_utils.core.analysis import experiment, readout
from jtc_utils.core.data import profiles
from jtc_utils.core.infra.paths import atomic_write_text
from jtc_utils.core.data.profiles import Profile
from jtc_utils.core.data.setting import Setting
from jtc_utils.embedded import corpus as world_corpus
from jtc_utils.embedded import leaks
from jtc_utils.embedded.world import PRESENT


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

    final = readout.final_stats(exp, ks=(1,))
    p1 = torch.exp(final["logits"].max(-1).values.double() - final["lse"]).cpu().numpy()
    top1 = final["topk"][:, 0]
    before = [ids[p] for ids, p in zip(exp.val.input_ids, exp.val.positions)]
    guess = np.array([bigram.get(t, -1) for t in before])
    return {
        "n": len(top1),
        "confident": float(np.mean(p1 > CONFIDENT)),
        "mat_layer0": float(exp.predictions["precision"]["mat"][1][0].mean()),
        "bigram": float(np.mean(guess == top1)),
    }


def report(corpus=world_corpus, profile: Profile | str = "tiny", seed: int = 0) -> dict:
    """The whole report for the corpus module ``corpus`` and the profile's GPT-style stand-ins."""
    train = corpus.training_sentences(seed=seed)
    out = {
        "corpus": leaks.report({d: corpus.pool(d, "validation", seed=seed) for d in corpus.DOMAINS}, train, PRESENT),
        "present_year": PRESENT,
        "models": {},
    }
    p = profiles.get(profile)
    bigrams = {}  # per tokenizer: the GPT-style stand-ins share one
    for model in p.gpt:
        for which in ("main", "second"):
            exp = experiment.shared(model, p.domain(which), p, None, None, seed)
            tok = exp.adapter.tokenizer
            key = (tok.name_or_path, len(tok))
            if key not in bigrams:
                bigrams[key] = bigram_table(tok, train)
            out["models"].setdefault(model, {})[exp.domain] = model_measures(exp, bigrams[key])
    return out


V1_FILE = Path(__file__).resolve().parents[1] / "embedded" / "hardness_v1.json"
CORPUS_ROWS = (
    ("prefix_leak", "pool sentences that are a prefix of a training sentence"),
    ("skeleton_share", "pool sentences whose template skeleton is in the training text"),
    ("ngram4_share", "pool word 4-grams that are in the training text"),
    ("repeated_clause", "sentences that say the same six words twice"),
    ("late_past", "past-tense events dated after the present year"),
)
MODEL_ROWS = (
    ("confident", f"final predictions with probability above {CONFIDENT}"),
    ("mat_layer0", "mat from layer 0 gives the final top-1"),
    ("bigram", "a bigram model of the training text gives the final top-1"),
)


def record(fig: str, s: Setting) -> tuple[dict, dict]:
    """The current world's report (:func:`report`) with the commit the first world's was computed at: the
    ``hardness`` record of the embedded world's page."""
    return report(profile=s.profile, seed=s.seed), {"first_world_commit": stored_v1()["commit"]}


RECORDS = {"hardness": record}


def stored_v1() -> dict:
    """The first world's report and the commit it was computed at."""
    return json.loads(V1_FILE.read_text())


def table(v1: dict, v2: dict):
    """The two reports side by side: one row per measure and domain (the training-text duplicates once), the model
    measures as the range over the GPT-style stand-ins; shares in percent."""
    import pandas as pd

    def pct(x):
        return f"{100 * x:.1f}%"

    def span(r, key, dom):
        vals = [m[dom][key] for m in r["models"].values()]
        return pct(min(vals)) if min(vals) == max(vals) else f"{pct(min(vals))}-{pct(max(vals))}"

    rows = []
    for dom in ("encyclopedia", "news"):
        rows += [(what, dom, pct(v1["corpus"][dom][key]), pct(v2["corpus"][dom][key])) for key, what in CORPUS_ROWS]
    rows.append(
        (
            "training sentences that repeat an earlier one",
            "both",
            pct(v1["corpus"]["training_duplicates"]),
            pct(v2["corpus"]["training_duplicates"]),
        )
    )
    for dom in ("encyclopedia", "news"):
        rows += [(what, dom, span(v1, key, dom), span(v2, key, dom)) for key, what in MODEL_ROWS]
    return pd.DataFrame(rows, columns=["share of", "domain", "first world", "second world"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--save", help="write the report as JSON here, with the commit it was computed at")
    ap.add_argument(
        "--world",
        default="v2 (jtc_utils.embedded, zoo trained on it)",
        help="what the stored report says it was computed on",
    )
    args = ap.parse_args(argv)
    r = report()
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = bool(
        subprocess.run(
            ["git", "status", "--porcelain", "--", "jtc_utils", "zoo"], capture_output=True, text=True
        ).stdout.strip()
    )
    doc = {"world": args.world, "commit": commit, "uncommitted_changes": dirty, "report": r}
    text = json.dumps(doc, indent=1, sort_keys=True)
    if args.save:
        atomic_write_text(Path(args.save), text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
