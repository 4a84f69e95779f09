"""The model zoo of the embedded profile: small GPT-2- and BERT-architecture models trained from scratch on the
generated corpus, saved with ``save_pretrained`` so that ``from_pretrained(<dir>)`` loads them as it loads ``gpt2``.
The depths mirror the paper's at half scale (GPT-2 12/24/36/48 -> 6/12/18/24 layers, BERT 12/24 -> 6/12), widths
growing with depth as in GPT-2. Rebuild (tokenizers, then every model; resumes from checkpoints)::

    python -m jtc_utils.training.zoo train            # whole zoo
    python -m jtc_utils.training.zoo train --only tiny-gpt2-medium
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from collections import Counter, defaultdict
from dataclasses import asdict
from pathlib import Path

from jtc_utils.core.models import batching, catalogue
from jtc_utils.core.infra import device as devices
from jtc_utils.core.models.batching import right_pad
from jtc_utils.core.infra.paths import ZOO_DIR, replace_dir
from jtc_utils.embedded import corpus

from . import loop


def training_texts(seed: int) -> list[str]:
    return [s.text for s in corpus.training_sentences(seed=seed)]


# ---------------------------------------------------------------------------------------------------------
# tokenizers
def train_tokenizers(seed: int = 0, texts: list[str] | None = None) -> None:
    """Train a byte-level BPE (GPT-style) and an uncased WordPiece (BERT-style) tokenizer on the training text
    and save them in Hugging Face format."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import BertTokenizer, GPT2Tokenizer

    texts = texts if texts is not None else training_texts(seed)

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=catalogue.VOCAB_SIZE,
            special_tokens=["<|endoftext|>"],
            show_progress=False,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    state = json.loads(bpe.to_str())["model"]
    gpt_tok = GPT2Tokenizer(
        vocab=state["vocab"], merges=[tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in state["merges"]]
    )
    gpt_tok.model_max_length = catalogue.MAX_LEN
    _save_atomically(gpt_tok, catalogue.GPT_TOKENIZER_DIR)

    wp = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    wp.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True)
    wp.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    wp.train_from_iterator(
        texts,
        trainers.WordPieceTrainer(
            vocab_size=catalogue.VOCAB_SIZE,
            special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
            show_progress=False,
        ),
    )
    vocab = json.loads(wp.to_str())["model"]["vocab"]
    bert_tok = BertTokenizer(vocab=vocab, do_lower_case=True)
    bert_tok.model_max_length = catalogue.MAX_LEN
    _save_atomically(bert_tok, catalogue.BERT_TOKENIZER_DIR)


def _save_atomically(obj, target: Path) -> None:
    """save_pretrained into a temporary sibling folder, then rename it into place."""
    import shutil

    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    obj.save_pretrained(tmp)
    replace_dir(tmp, target)


# ---------------------------------------------------------------------------------------------------------
# models
def make_config(spec: catalogue.Spec, tokenizer):
    from transformers import BertConfig, GPT2Config

    if spec.causal:
        return GPT2Config(
            vocab_size=len(tokenizer),
            n_positions=catalogue.MAX_LEN,
            n_embd=spec.d,
            n_layer=spec.n_layer,
            n_head=spec.n_head,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=None,
        )
    return BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=spec.d,
        num_hidden_layers=spec.n_layer,
        num_attention_heads=spec.n_head,
        intermediate_size=4 * spec.d,
        max_position_embeddings=catalogue.MAX_LEN,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        pad_token_id=tokenizer.pad_token_id,
    )


def encode_texts(spec: catalogue.Spec, tokenizer, texts: list[str]) -> list[list[int]]:
    return tokenizer(texts, add_special_tokens=spec.special_tokens)["input_ids"]  # BERT: [CLS] ... [SEP]


def token_batches(lengths: list[int], batch: int, seed: int) -> list[list[int]]:
    """Length-bucketed batches in a seeded order: shuffle, sort within chunks of 50 batches, shuffle batches."""
    rng = random.Random(seed)
    idx = list(range(len(lengths)))
    rng.shuffle(idx)
    out = []
    chunk = 50 * batch
    for i in range(0, len(idx), chunk):
        part = sorted(idx[i : i + chunk], key=lambda j: lengths[j])
        out += [part[k : k + batch] for k in range(0, len(part), batch)]
    rng.shuffle(out)
    return out


def collate(
    spec: catalogue.Spec,
    ids: list[list[int]],
    pad_id: int,
    step_seed: int,
    mask_id: int,
    vocab: int,
    special: set[int],
    mask_prob: float | None = None,
):
    import torch

    inp, att = right_pad(ids, pad_id)
    if spec.causal:
        labels = inp.masked_fill(att == 0, -100)
        return inp, att, labels
    # BERT: mask_prob of the real, non-special tokens; of those 80% [MASK], 10% random, 10% unchanged
    g = torch.Generator().manual_seed(step_seed)
    can = att.bool() & ~torch.isin(inp, torch.tensor(sorted(special)))
    chosen = (torch.rand(inp.shape, generator=g) < (spec.mask_prob if mask_prob is None else mask_prob)) & can
    labels = inp.masked_fill(~chosen, -100)
    r = torch.rand(inp.shape, generator=g)
    inp = inp.clone()
    inp[chosen & (r < 0.8)] = mask_id
    rand_pos = chosen & (r >= 0.8) & (r < 0.9)
    inp[rand_pos] = torch.randint(len(special), vocab, inp.shape, generator=g)[rand_pos]
    return inp, att, labels


def train_model(
    spec: catalogue.Spec,
    seed: int = 0,
    texts: list[str] | None = None,
    progress: bool = True,
    ckpt_every: int = 100,
    stop_after: int | None = None,
) -> dict | None:
    """Train one model (resuming from its checkpoint if one exists) and write it with its model card.

    ``stop_after`` stops (after writing a checkpoint) once that many steps are done in total, as an interruption
    would; the next call resumes from there and ends with the same weights as an uninterrupted run."""
    import torch
    import transformers
    from transformers import AutoTokenizer

    data_seed, seed = seed, seed + spec.seed  # replicas: the corpus seed's texts, their own training randomness
    torch.manual_seed(seed)
    tok = AutoTokenizer.from_pretrained(spec.tokenizer_dir)
    cfg = make_config(spec, tok)
    model = getattr(transformers, spec.model_class)(cfg)  # initialised on the CPU, seeded
    dev = devices.of(devices.on(model))
    texts = texts if texts is not None else training_texts(data_seed)
    ids = encode_texts(spec, tok, texts)
    batches = token_batches([len(x) for x in ids], spec.batch, seed)
    tokens_per_batch = sum(len(x) for x in ids) / len(ids) * spec.batch
    steps = min(len(batches), math.ceil(spec.tokens / tokens_per_batch))
    opt, sched = loop.adamw_warmup_cosine(model.parameters(), spec.lr, steps)

    ckpt = ZOO_DIR / "_work" / spec.name / "ckpt.pt"
    start, curve, seen, elapsed = 0, [], 0, 0.0
    state = loop.load_checkpoint(ckpt)
    if state is not None and state["spec"] == asdict(spec) and state["seed"] == seed:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        start, curve, seen, elapsed = state["step"], state["curve"], state["seen"], state["elapsed"]
    special = set(tok.all_special_ids)
    pad_id = batching.pad_id(tok)
    model.train()
    t0 = time.time() - elapsed

    def step(i: int) -> None:
        nonlocal seen
        batch = [ids[j] for j in batches[i]]
        inp, att, labels = (
            t.to(dev)
            for t in collate(spec, batch, pad_id, seed * 1_000_003 + i, tok.mask_token_id or 0, len(tok), special)
        )
        loss = model(input_ids=inp, attention_mask=att, labels=labels).loss
        loop.optimiser_step(loss, model.parameters(), opt, sched)
        seen += int(att.sum())
        curve.append(round(loss.item(), 4))

    def checkpoint(done: int) -> None:
        loop.save_checkpoint(
            ckpt,
            {
                "spec": asdict(spec),
                "seed": seed,
                "model": model.state_dict(),
                "opt": opt.state_dict(),
                "sched": sched.state_dict(),
                "step": done,
                "curve": curve,
                "seen": seen,
                "elapsed": time.time() - t0,
            },
        )

    if not loop.loop(
        steps,
        start,
        step,
        desc=spec.name,
        progress=progress,
        checkpoint=checkpoint,
        every=ckpt_every,
        stop_after=stop_after,
        at_end=True,
        postfix=lambda: {"loss": f"{curve[-1]:.3f}"},
    ):
        return None
    train_time = time.time() - t0
    model.eval()
    out_dir = ZOO_DIR / spec.name
    tmp_dir = out_dir.with_name(spec.name + ".tmp")
    import shutil

    shutil.rmtree(tmp_dir, ignore_errors=True)
    model.save_pretrained(tmp_dir)
    tok.save_pretrained(tmp_dir)
    metrics = evaluate(model, tok, spec, texts, data_seed)
    card = {
        "name": spec.name,
        "stands_for": spec.stands_for,
        "family": spec.family,
        "config": {"n_layer": spec.n_layer, "d_model": spec.d, "n_head": spec.n_head, "vocab": len(tok)},
        "parameters": sum(p.numel() for p in model.parameters()),
        "tokens_seen": seen,
        "steps": steps,
        "batch_size": spec.batch,
        "lr": spec.lr,
        "seed": seed,
        **({"data_seed": data_seed} if data_seed != seed else {}),
        "train_time_s": round(train_time, 1),
        "torch_threads": torch.get_num_threads(),
        "heldout": metrics,
        "loss_curve": curve,
    }
    (tmp_dir / "card.json").write_text(json.dumps(card, indent=1))
    _plot_curve(curve, spec.name, tmp_dir / "loss.png")
    (tmp_dir / "README.md").write_text(card_markdown(card))
    replace_dir(tmp_dir, out_dir)
    return card


def evaluate(model, tok, spec: catalogue.Spec, train_texts: list[str], seed: int, n: int = 1000) -> dict:
    """Held-out loss of the model and of two baselines fitted on the training text, a unigram and a bigram model
    (:func:`bigram_loss`), on validation sentences of both domains; for BERT-style models also masked-token
    accuracy (15% masking, seeded)."""
    import torch

    val = [s.text for d in corpus.DOMAINS for s in corpus.pool(d, "validation", n=n, seed=seed)]
    ids = encode_texts(spec, tok, val)
    counts = Counter(t for x in encode_texts(spec, tok, train_texts[:40000]) for t in x)
    total = sum(counts.values()) + len(tok)
    special = set(tok.all_special_ids)
    pad_id = batching.pad_id(tok)
    nll, uni, correct, count = 0.0, 0.0, 0, 0
    with torch.no_grad():
        for i in range(0, len(ids), 64):
            inp, att, labels = (
                t.to(devices.of(model))
                for t in collate(
                    spec, ids[i : i + 64], pad_id, 10_000 + i, tok.mask_token_id or 0, len(tok), special, mask_prob=0.15
                )
            )
            logits = model(input_ids=inp, attention_mask=att).logits
            if spec.causal:
                logits, labels = logits[:, :-1], labels[:, 1:]
            keep = labels != -100
            lp = torch.log_softmax(logits[keep].double(), -1)
            tgt = labels[keep]
            nll += float(-lp.gather(1, tgt[:, None]).sum())
            uni += sum(-math.log((counts[int(t)] + 1) / total) for t in tgt.tolist())
            correct += int((lp.argmax(-1) == tgt).sum())
            count += int(keep.sum())
    out = {
        "sentences": len(val),
        "predicted_tokens": count,
        "loss": round(nll / count, 4),
        "perplexity": round(math.exp(nll / count), 2),
        "unigram_loss": round(uni / count, 4),
        "bigram_loss": round(bigram_loss(spec, tok, train_texts[:40000], val), 4),
    }
    out["next_token_accuracy" if spec.causal else "masked_token_accuracy"] = round(correct / count, 4)
    return out


def bigram_loss(spec: catalogue.Spec, tok, train_texts: list[str], val_texts: list[str]) -> float:
    """Held-out loss (nats per predicted token) of a bigram model of the training text, at the tokens and with the
    left context that :func:`evaluate` uses (the same batches and masks). The bigram conditions on the input token
    just left of the predicted one, as the model sees it (for masked models this may be ``[MASK]``); it is
    Witten-Bell interpolated with the add-one unigram of :func:`evaluate`, so it needs no tuned constant:
    p(b | a) = (c(a, b) + T(a) p(b)) / (c(a) + T(a)), T(a) the number of distinct tokens seen after a, and p(b)
    alone where a was never seen."""
    train_ids = encode_texts(spec, tok, train_texts)
    uni = Counter(t for x in train_ids for t in x)
    total = sum(uni.values()) + len(tok)
    follow: dict[int, Counter] = defaultdict(Counter)
    for x in train_ids:
        for a, b in zip(x, x[1:]):
            follow[a][b] += 1
    ctx = {a: (sum(c.values()), len(c)) for a, c in follow.items()}
    special = set(tok.all_special_ids)
    pad_id = batching.pad_id(tok)
    ids = encode_texts(spec, tok, val_texts)
    nll, count = 0.0, 0
    for i in range(0, len(ids), 64):
        inp, _, labels = collate(
            spec, ids[i : i + 64], pad_id, 10_000 + i, tok.mask_token_id or 0, len(tok), special, mask_prob=0.15
        )
        # the token at j+1 follows the input token at j (for masked models position 0 is [CLS], never predicted)
        left, target = inp[:, :-1], labels[:, 1:]
        for a, b in zip(left[target != -100].tolist(), target[target != -100].tolist()):
            p_uni = (uni[b] + 1) / total
            n, types = ctx.get(a, (0, 0))
            p = (follow[a][b] + types * p_uni) / (n + types) if n else p_uni
            nll -= math.log(p)
            count += 1
    return nll / count


def _plot_curve(curve, name, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    c = np.asarray(curve)
    k = max(1, len(c) // 50)
    smooth = np.convolve(c, np.ones(k) / k, mode="valid")
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot(c, alpha=0.3, lw=0.7, label="per step")
    ax.plot(np.arange(len(smooth)) + k - 1, smooth, label=f"mean of {k}")
    ax.set(xlabel="step", ylabel="training loss (nats)", title=name)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def card_markdown(card: dict) -> str:
    h = card["heldout"]
    acc_key = "masked_token_accuracy" if card["family"] == "bert" else "next_token_accuracy"
    return "\n".join(
        [
            f"# {card['name']}",
            "",
            f"A {card['config']['n_layer']}-layer {card['family'].upper()}-architecture model trained from scratch "
            f"on the generated corpus of this book (`jtc_utils.embedded`); it stands in for `{card['stands_for']}`.",
            "",
            "| | |",
            "|---|---|",
            f"| layers / width / heads | {card['config']['n_layer']} / {card['config']['d_model']} / "
            f"{card['config']['n_head']} |",
            f"| vocabulary | {card['config']['vocab']} |",
            f"| parameters | {card['parameters']:,} |",
            f"| tokens seen | {card['tokens_seen']:,} ({card['steps']} steps of {card['batch_size']} sentences) |",
            f"| training time | {card['train_time_s'] / 60:.1f} min on {card['torch_threads']} CPU threads |",
            f"| held-out loss | {h['loss']:.3f} nats (perplexity {h['perplexity']:.1f}) |",
            f"| unigram baseline | {h['unigram_loss']:.3f} nats |",
            f"| bigram baseline (Witten-Bell) | {h['bigram_loss']:.3f} nats |",
            f"| held-out {acc_key.replace('_', ' ')} | {h[acc_key]:.3f} |",
            "",
            "![loss curve](loss.png)",
            "",
        ]
    )


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m jtc_utils.training.zoo",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    tr = sub.add_parser("train", help="train tokenizers and models (resumes from checkpoints)")
    tr.add_argument(
        "--only",
        nargs="*",
        choices=sorted(catalogue.ALL),
        help="train only these models (the seed replicas of tiny-gpt2-xl are trained only when named)",
    )
    tr.add_argument("--seed", type=int, default=0, help="the corpus seed (texts); a replica adds its own seed")
    tr.add_argument("--force", action="store_true", help="retrain models that are already in the zoo")
    tr.add_argument("--threads", type=int, default=None)
    tr.add_argument("--device", default="auto", help="auto (a GPU when there is one), cpu, cuda or cuda:N")
    sub.add_parser("checksums", help=f"rewrite {catalogue.MANIFEST_NAME} from the files in zoo/ (after retraining)")
    args = ap.parse_args(argv)
    if args.cmd == "checksums":
        print(f"wrote {catalogue.write_manifest()}")
        return
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    devices.use(args.device)
    texts = training_texts(args.seed)
    if not (catalogue.GPT_TOKENIZER_DIR.exists() and catalogue.BERT_TOKENIZER_DIR.exists()):
        print("training tokenizers ...", flush=True)
        train_tokenizers(args.seed, texts)
    for name in args.only or list(catalogue.ZOO):
        if (ZOO_DIR / name / "model.safetensors").exists() and not args.force:
            print(f"{name}: already trained, skipping (use --force to retrain)")
            continue
        card = train_model(catalogue.ALL[name], args.seed, texts)
        print(f"{name}: held-out {card['heldout']}, {card['train_time_s']:.0f} s", flush=True)
    print(f"wrote {catalogue.write_manifest()}")


if __name__ == "__main__":
    main()
