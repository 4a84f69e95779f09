"""Train the second world's zoo, lenses and linearity runs into a side folder while the book still reads the first
world (issue 13). The book's pages depend on every file of ``zoo/`` and on the modules they import, so the new
models are trained where no page looks, with the training code the book already has::

    python -m jtc_utils.embedded.train --out zoo-v2 zoo                 # tokenizers and the six stand-ins
    python -m jtc_utils.embedded.train --out zoo-v2 lenses --models tiny-gpt2 ...
    python -m jtc_utils.embedded.train --out zoo-v2 linearity pretrain distil

Each command is the first world's command (``python -m jtc_utils.zoo train``, ``python -m jtc_utils.lenses.train``,
``python -m jtc_utils.linearity.train``, with their arguments after the subcommand) run with :func:`install` in
force: ``jtc_utils.corpus`` and ``jtc_utils.world`` are the modules of this package, and the zoo folder is
``--out``. Every run resumes from its checkpoints as the first world's does. The cards gain the held-out loss of a
bigram model of the training text beside the unigram one (:func:`bigram_loss`).

Transitional: when the book moves to the second world, this package replaces the first corpus, the bigram
baseline moves into :func:`jtc_utils.zoo.evaluate`, the side folder becomes ``zoo/`` and this module goes.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter, defaultdict
from pathlib import Path

WORLD_MODULES = ("corpus", "world")


def install(out: Path) -> None:
    """Point the package at the second world and the zoo folder ``out``. Must run before any module that imports
    ``jtc_utils.corpus`` at its top (sources, lexicon, the lens and linearity packages) is imported."""
    import jtc_utils

    from . import corpus as corpus_v2
    from . import world as world_v2

    late = [m for m in ("jtc_utils.sources", "jtc_utils.lexicon", "jtc_utils.experiment", "jtc_utils.linearity.tasks",
                        "jtc_utils.ffn.steering") if m in sys.modules]
    if late:
        raise RuntimeError(f"install() came after {', '.join(late)} bound the first corpus; call it first")
    for name, module in zip(WORLD_MODULES, (corpus_v2, world_v2)):
        sys.modules[f"jtc_utils.{name}"] = module
        setattr(jtc_utils, name, module)

    from .. import paths, zoo
    from ..lenses import artifacts as lens_artifacts
    from ..linearity import artifacts as lin_artifacts
    from ..linearity import train as lin_train

    out = Path(out).resolve()
    paths.ZOO_DIR = zoo.ZOO_DIR = lens_artifacts.ZOO_DIR = lin_artifacts.ZOO_DIR = lin_train.ZOO_DIR = out
    zoo.GPT_TOKENIZER_DIR = out / "tokenizer-gpt"
    zoo.BERT_TOKENIZER_DIR = out / "tokenizer-bert"
    lin_artifacts.OUT_DIR = lin_train.OUT_DIR = out / "secretly-linear"
    lin_artifacts.CARD = lin_train.CARD = out / "secretly-linear" / "card.json"
    zoo.corpus = corpus_v2
    first_evaluate, first_card = zoo.evaluate, zoo.card_markdown

    def evaluate(model, tok, spec, train_texts, seed, n=1000):
        out = first_evaluate(model, tok, spec, train_texts, seed, n)
        val = [s.text for d in corpus_v2.DOMAINS for s in corpus_v2.pool(d, "validation", n=n, seed=seed)]
        out["bigram_loss"] = round(bigram_loss(spec, tok, train_texts[:40000], val), 4)
        return out

    def card_markdown(card):
        text = first_card(card).replace("the generated corpus of this book", "the second generated corpus "
                                        "(`jtc_utils.embedded`)")
        h = card["heldout"]
        row = f"| unigram baseline | {h['unigram_loss']:.3f} nats |"
        return text.replace(row, row + f"\n| bigram baseline (Witten-Bell) | {h['bigram_loss']:.3f} nats |")

    zoo.evaluate, zoo.card_markdown = evaluate, card_markdown


def bigram_loss(spec, tok, train_texts: list[str], val_texts: list[str]) -> float:
    """Held-out loss (nats per predicted token) of a bigram model of the training text, at the tokens and with the
    left context the zoo's evaluation uses (:func:`jtc_utils.zoo.evaluate`: the same batches and masks). The bigram
    conditions on the input token just left of the predicted one, as the model sees it (for masked models this
    may be ``[MASK]``); it is Witten-Bell interpolated with the add-one unigram of the evaluation, so it needs no
    tuned constant: p(b | a) = (c(a, b) + T(a) p(b)) / (c(a) + T(a)), T(a) the number of distinct tokens seen
    after a, and p(b) alone where a was never seen."""
    from .. import zoo

    train_ids = zoo._encode(spec, tok, train_texts)
    uni = Counter(t for x in train_ids for t in x)
    total = sum(uni.values()) + len(tok)
    follow: dict[int, Counter] = defaultdict(Counter)
    for x in train_ids:
        for a, b in zip(x, x[1:]):
            follow[a][b] += 1
    ctx = {a: (sum(c.values()), len(c)) for a, c in follow.items()}
    special = set(tok.all_special_ids)
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
    ids = zoo._encode(spec, tok, val_texts)
    nll, count = 0.0, 0
    for i in range(0, len(ids), 64):
        inp, _, labels = zoo._collate(spec, ids[i:i + 64], pad_id, 10_000 + i, tok.mask_token_id or 0, len(tok),
                                      special, mask_prob=0.15)
        # the token at j+1 follows the input token at j (for masked models position 0 is [CLS], never predicted)
        left, target = inp[:, :-1], labels[:, 1:]
        for a, b in zip(left[target != -100].tolist(), target[target != -100].tolist()):
            p_uni = (uni[b] + 1) / total
            n, types = ctx.get(a, (0, 0))
            p = (follow[a][b] + types * p_uni) / (n + types) if n else p_uni
            nll -= math.log(p)
            count += 1
    return nll / count


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m jtc_utils.embedded.train", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="the side zoo folder (for example zoo-v2)")
    ap.add_argument("what", choices=["zoo", "lenses", "linearity"])
    ap.add_argument("rest", nargs=argparse.REMAINDER, help="arguments of the first world's command")
    args = ap.parse_args(argv)
    if args.out.resolve() == (Path(__file__).resolve().parents[2] / "zoo"):
        raise SystemExit("--out must not be zoo/: the book reads the first world's zoo there until the switch")
    install(args.out)
    if args.what == "zoo":
        from .. import zoo

        zoo.main(["train", *args.rest])
    elif args.what == "lenses":
        from ..lenses import train

        train.main(args.rest)
    else:
        from ..linearity import train

        train.main(args.rest)


if __name__ == "__main__":
    main()
