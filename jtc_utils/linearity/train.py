"""The extra training runs of the linearity chapter: ``python -m jtc_utils.linearity.train`` (``make zoo-extras``),
all with ``tiny-gpt2``'s architecture, text, budget and optimiser: ``pretrain`` (the plain model, seed 0 retracing
``zoo/tiny-gpt2`` with weights kept at log-spaced steps, seeds 1-2, and the cosine-regularised model of the paper's
section 4 at lambda 0.5 and 2.0, seeds 0-2: :func:`cosine_penalty`); ``distil`` (the pruning figure's replace +
distil maps on the deepest GPT-style stand-in); ``finetune`` (``zoo/tiny-gpt2`` fine-tuned on two classification
tasks, :mod:`.tasks`, seeds 0-2, recording the linearity of every layer pair before and after). Weights are stored
in half precision under ``zoo/secretly-linear/``; fine-tuned models only as their record. A recorded run is
skipped; a run in progress resumes from its checkpoint in ``zoo/_work``.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from jtc_utils.core.models import catalogue
from jtc_utils.core.infra import device as devices
from jtc_utils.core.models import models
from jtc_utils.core.infra.paths import ZOO_DIR, atomic_write_bytes, atomic_write_text, file_fingerprint
from jtc_utils.embedded import corpus
from jtc_utils.training import loop, zoo

from . import prune, states, tasks
from .artifacts import BASE, CARD, OUT_DIR
from .artifacts import card as load_card
from .artifacts import distil_file
from .figures import DISTIL_K, DISTIL_SENTENCES, DISTIL_STRATEGIES, PRUNE_MODEL, block_scores

SEEDS = (0, 1, 2)
LAMBDAS = (0.0, 0.5, 2.0)  # 0.0 = plain training
TASK_NAMES = ("fact", "domain")
FT_STEPS, FT_BATCH, FT_LR = 300, 32, 3e-4


def run_name(lam: float, seed: int) -> str:
    return f"cos-{lam:g}-seed-{seed}"


def snapshot_steps(steps: int) -> list[int]:
    """Log-spaced steps at which the plain seed-0 run keeps its weights: 0 and steps / 2^k, k = 0..6."""
    return sorted({0} | {max(1, round(steps / 2**k)) for k in range(7)})


def check_lambda(lam) -> float:
    if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not math.isfinite(lam) or lam < 0:
        raise ValueError(f"the regulariser weight must be a finite number >= 0 (0 = plain training), got {lam!r}")
    return float(lam)


# ---------------------------------------------------------------------------------------------------------
# the regulariser
def raw_states(model, input_ids, attention_mask):
    """(output, [h^0 .. h^L]) of a GPT-2 LM: Hugging Face's hidden states with the last replaced by the raw output
    of the last block (the library's last state is already through the final norm, which the core's adapter names)."""
    captured = {}
    final_norm = models.Adapter(model, None, "a training run").final_norm
    handle = final_norm.register_forward_pre_hook(lambda mod, args: captured.__setitem__("h", args[0]))
    try:
        out = model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
    finally:
        handle.remove()
    return out, list(out.hidden_states[:-1]) + [captured["h"]]


def cosine_penalty(states, attention_mask):
    """``sum_l (1 - cos(h^l, h^(l-1)))`` averaged over the real (non-padding) tokens."""
    import torch

    keep = attention_mask.bool()
    total = 0.0
    for a, b in zip(states[:-1], states[1:]):
        total = total + (1 - torch.nn.functional.cosine_similarity(b[keep], a[keep], dim=-1)).mean()
    return total


# ---------------------------------------------------------------------------------------------------------
# pretraining
def pretrain(
    lam: float | None,
    seed: int,
    texts: list[str] | None = None,
    steps: int | None = None,
    snapshots=(),
    progress: bool = True,
    work: Path | None = None,
    ckpt_every: int = 100,
    stop_after: int | None = None,
):
    """Train ``tiny-gpt2``'s architecture from scratch with the cosine regulariser at weight ``lam`` (None: the
    term is not computed at all). Returns ``(model, record, {step: state_dict})`` for the steps in ``snapshots`` (a
    collection of steps, or a function of the run's step count that returns one, as :func:`snapshot_steps`).
    With ``work`` set, a checkpoint there lets an interrupted run resume; ``stop_after`` stops there (after writing
    the checkpoint) as an interruption would, and returns None."""
    import torch
    from transformers import GPT2LMHeadModel

    if lam is not None:
        lam = check_lambda(lam)
    spec = catalogue.ZOO[BASE]
    torch.manual_seed(seed)
    tok = _tokenizer()
    model = GPT2LMHeadModel(zoo.make_config(spec, tok))  # initialised on the CPU, seeded
    dev = devices.of(devices.on(model))
    texts = texts if texts is not None else zoo.training_texts(0)
    ids = zoo.encode_texts(spec, tok, texts)
    batches = zoo.token_batches([len(x) for x in ids], spec.batch, seed)
    if steps is None:
        steps = min(len(batches), math.ceil(spec.tokens / (sum(len(x) for x in ids) / len(ids) * spec.batch)))
    if callable(snapshots):
        snapshots = snapshots(steps)
    opt, sched = loop.adamw_warmup_cosine(model.parameters(), spec.lr, steps)
    rec = {
        "lambda": lam,
        "seed": seed,
        "steps": steps,
        "loss_curve": [],
        "penalty_curve": [],
        "tokens_seen": 0,
        "elapsed": 0.0,
    }
    snaps = {}
    ckpt = None if work is None else work / "ckpt.pt"
    start = 0
    state = loop.load_checkpoint(ckpt)
    if state is not None:
        if state.get("key") != [lam, seed, steps, asdict(spec)]:
            import warnings

            warnings.warn(
                f"the checkpoint {ckpt} belongs to another run or model ({state.get('key', '?')!r:.120}); "
                f"ignoring it and training from step 0 (delete it to silence this warning)",
                stacklevel=2,
            )
        else:
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["opt"])
            sched.load_state_dict(state["sched"])
            rec, start = state["rec"], state["rec"]["step"]
            snaps = {int(k): v for k, v in state["snaps"].items()}
    if 0 in snapshots and start == 0:
        snaps[0] = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    special = set(tok.all_special_ids)
    model.train()
    t0 = time.time() - rec["elapsed"]

    def step(i: int) -> None:
        inp, att, labels = (
            t.to(dev)
            for t in zoo.collate(spec, [ids[j] for j in batches[i]], 0, seed * 1_000_003 + i, 0, len(tok), special)
        )
        if lam is None:
            loss = model(input_ids=inp, attention_mask=att, labels=labels).loss
            total, pen = loss, None
        else:
            out, states = raw_states(model, inp, att)
            loss = model.loss_function(out.logits, labels, vocab_size=model.config.vocab_size)  # as the plain branch
            pen = cosine_penalty(states, att)
            total = loss + lam * pen
        loop.optimiser_step(total, model.parameters(), opt, sched)
        rec["tokens_seen"] += int(att.sum())
        rec["loss_curve"].append(round(loss.item(), 4))
        if pen is not None:
            rec["penalty_curve"].append(round(pen.item(), 4))
        if i + 1 in snapshots:
            snaps[i + 1] = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}

    def checkpoint(done: int) -> None:
        rec["step"], rec["elapsed"] = done, time.time() - t0
        loop.save_checkpoint(
            ckpt,
            {
                "key": [lam, seed, steps, asdict(spec)],
                "model": model.state_dict(),
                "opt": opt.state_dict(),
                "sched": sched.state_dict(),
                "rec": rec,
                "snaps": {str(k): v for k, v in snaps.items()},
            },
        )

    if not loop.loop(
        steps,
        start,
        step,
        desc=run_name(lam or 0.0, seed),
        progress=progress,
        checkpoint=None if ckpt is None else checkpoint,
        every=ckpt_every,
        stop_after=stop_after,
    ):
        return None
    rec["step"] = steps
    rec["train_time_s"] = round(time.time() - t0, 1)
    rec.pop("elapsed", None)
    model.eval()
    return model, rec, snaps


# ---------------------------------------------------------------------------------------------------------
# storage
def _half(state: dict) -> dict:
    """The state dict in half precision, without the output matrix (tied to the token embeddings)."""
    return {k: v.detach().to("cpu").half().contiguous() for k, v in state.items() if k != "lm_head.weight"}


def save_weights(state: dict, path: Path) -> str:
    """Write half-precision weights atomically; returns the file's SHA-256."""
    from safetensors.torch import save

    atomic_write_bytes(path, save(_half(state)))
    return file_fingerprint(path)


def save_card(card: dict) -> None:
    atomic_write_text(CARD, json.dumps(card, indent=1))
    atomic_write_text(OUT_DIR / "README.md", card_markdown(card))


def card_markdown(card: dict) -> str:
    lines = [
        f"# Extra training runs of the linearity chapter (`{card['base']}` architecture)",
        "",
        "Written by `python -m jtc_utils.linearity.train`. Weights are stored in half precision (the chapter "
        "checks that this changes the linearity scores by float noise only); fine-tuned models are not stored, "
        "only their records.",
        "",
        "| run | lambda | seed | steps | held-out loss | next-token accuracy | training time |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in card["pretrain"].items():
        h = r["heldout"]
        lines.append(
            f"| {name} | {r['lambda']:g} | {r['seed']} | {r['steps']} | {h['loss']:.3f} | "
            f"{h['next_token_accuracy']:.3f} | {r['train_time_s'] / 60:.1f} min |"
        )
    if card["snapshots"]:
        lines += [
            "",
            "Snapshots of `cos-0-seed-0` at steps " + ", ".join(str(s["step"]) for s in card["snapshots"]) + ".",
        ]
    if card["finetune"]:
        lines += [
            "",
            "| fine-tuning | seed | validation accuracy | mean change of LS without residual | time |",
            "|---|---|---|---|---|",
        ]
        for name, r in card["finetune"].items():
            lines.append(
                f"| {r['task']} | {r['seed']} | {r['val_accuracy']:.3f} | {r['delta_nores_mean']:+.4f} | "
                f"{r['train_time_s']:.0f} s |"
            )
    return "\n".join(lines) + "\n"


def run_pretraining(card: dict, progress: bool = True) -> None:

    texts = zoo.training_texts(0)
    spec = catalogue.ZOO[BASE]
    for lam in LAMBDAS:
        for seed in SEEDS:
            name = run_name(lam, seed)
            if name in card["pretrain"] and (OUT_DIR / card["pretrain"][name]["file"]).exists():
                print(f"{name}: already trained, skipping", flush=True)
                continue
            keep = lam == 0.0 and seed == 0
            model, rec, snaps = pretrain(
                lam if lam > 0 else None,
                seed,
                texts,
                snapshots=snapshot_steps if keep else (),
                progress=progress,
                work=ZOO_DIR / "_work" / "secretly-linear" / name,
            )
            rec["lambda"] = lam  # 0.0 for plain training (the term was not computed at all)
            tok = _tokenizer()
            rec["heldout"] = zoo.evaluate(model, tok, spec, texts, 0)
            if keep:
                card["snapshots"] = []
                for step, state in sorted(snaps.items()):
                    f = f"trajectory/step-{step:04d}.safetensors"
                    card["snapshots"].append(
                        {
                            "step": step,
                            "tokens": round(rec["tokens_seen"] * step / rec["steps"]),
                            "file": f,
                            "sha256": save_weights(state, OUT_DIR / f),
                        }
                    )
                rec["file"] = card["snapshots"][-1]["file"]
                rec["sha256"] = card["snapshots"][-1]["sha256"]
            else:
                rec["file"] = f"pretrain/{name}.safetensors"
                rec["sha256"] = save_weights(model.state_dict(), OUT_DIR / rec["file"])
            card["pretrain"][name] = rec
            save_card(card)
            shutil.rmtree(ZOO_DIR / "_work" / "secretly-linear" / name, ignore_errors=True)  # its checkpoint
            print(f"{name}: held-out {rec['heldout']}, {rec['train_time_s']:.0f} s", flush=True)


def _tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(catalogue.GPT_TOKENIZER_DIR)


def run_finetuning(card: dict, progress: bool = True) -> None:

    for task in TASK_NAMES:
        for seed in SEEDS:
            name = f"{task}-seed-{seed}"
            if name in card["finetune"]:
                print(f"{name}: already done, skipping", flush=True)
                continue
            rec = tasks.finetune(task, seed, steps=FT_STEPS, batch=FT_BATCH, lr=FT_LR, progress=progress)
            card["finetune"][name] = rec
            save_card(card)
            print(
                f"{name}: validation accuracy {rec['val_accuracy']:.3f}, mean change of LS_nores "
                f"{rec['delta_nores_mean']:+.4f}, {rec['train_time_s']:.0f} s",
                flush=True,
            )


def run_distillation(card: dict, progress: bool = True) -> None:
    """Replace + distil on the deepest GPT-style stand-in (the chapter's pruning figure): for each strategy and
    k in DISTIL_K, the least-squares replacements distilled layer-wise; the maps are stored in float32."""
    from safetensors.numpy import save

    ad = models.adapter(PRUNE_MODEL)
    scores = block_scores(PRUNE_MODEL)
    train_states = states.all_positions(ad, "train")["X"]
    seqs = [
        ad.tokenizer(x.text, add_special_tokens=False)["input_ids"]
        for x in corpus.pool("encyclopedia", "train", DISTIL_SENTENCES)
    ]
    for strategy in DISTIL_STRATEGIES:
        for k in DISTIL_K:
            f = distil_file(strategy, k)
            if f in card["distil"] and (OUT_DIR / f).exists():
                print(f"{f}: already distilled, skipping", flush=True)
                continue
            blocks = prune.choose(scores, k, strategy)
            t0 = time.time()
            maps, curve = prune.distil(ad, prune.replacements(train_states, blocks), seqs)
            arrays = {
                **{f"M{b}": m.astype(np.float32) for b, (m, _) in maps.items()},
                **{f"c{b}": c.astype(np.float32) for b, (_, c) in maps.items()},
            }
            atomic_write_bytes(OUT_DIR / f, save(arrays))
            card["distil"][f] = {
                "model": PRUNE_MODEL,
                "strategy": strategy,
                "k": k,
                "blocks": blocks,
                "steps": len(curve),
                "loss_first": curve[0],
                "loss_last_50": float(np.mean(curve[-50:])),
                "train_time_s": round(time.time() - t0, 1),
                "sha256": file_fingerprint(OUT_DIR / f),
            }
            save_card(card)
            print(f"{f}: blocks {blocks}, {card['distil'][f]['train_time_s']:.0f} s", flush=True)


def main(argv=None):
    import torch

    ap = argparse.ArgumentParser(
        prog="python -m jtc_utils.linearity.train",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "what", nargs="*", choices=["pretrain", "finetune", "distil"], default=["pretrain", "finetune", "distil"]
    )
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--device", default="auto", help="auto (a GPU when there is one), cpu, cuda or cuda:N")
    args = ap.parse_args(argv)

    if args.threads:
        torch.set_num_threads(args.threads)
    devices.use(args.device)
    card = load_card()
    t0 = time.time()
    if "pretrain" in args.what:
        run_pretraining(card)
    if "finetune" in args.what:
        run_finetuning(card)
    if "distil" in args.what:
        run_distillation(card)
    print(f"done in {(time.time() - t0) / 60:.1f} min; wrote {catalogue.write_manifest()}", flush=True)


if __name__ == "__main__":
    main()
