"""The one training loop of the book: the zoo's language models (:func:`jtc_utils.training.zoo.train_model`), the
linearity
chapter's regularised runs (:func:`jtc_utils.linearity.train.pretrain`) and the tuned lens
(:mod:`jtc_utils.lenses.tuned`) each give it a step and a checkpoint writer.

What it owns: the step counter and the progress bar (quiet in saved notebooks), when a checkpoint is written (every
``every`` steps, at an interruption, and, where asked, at the end), the checkpoint file itself (written whole or
not at all, and read back with ``weights_only=True``: plain tensors and numbers, never pickled code), and the
optimiser and schedule the language models share (AdamW, linear warm-up over the first 5% of the steps, then a
cosine decay)."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Callable

from tqdm.auto import tqdm


def adamw_warmup_cosine(params, lr: float, steps: int):
    """``(optimiser, schedule)`` of the zoo's language models: AdamW (betas 0.9, 0.98; weight decay 0.01) with a
    linear warm-up over the first 5% of ``steps`` and a cosine decay to zero at ``steps``."""
    import torch

    opt = torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.98), weight_decay=0.01)
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps))
    )
    return opt, sched


def optimiser_step(loss, params, opt, sched=None, clip: float | None = 1.0) -> None:
    """Back-propagate ``loss``, clip the gradients' global norm to ``clip`` (None: no clipping), step the optimiser
    and the schedule (None: none)."""
    import torch

    loss.backward()
    if clip is not None:
        torch.nn.utils.clip_grad_norm_(params, clip)
    opt.step()
    if sched is not None:
        sched.step()
    opt.zero_grad(set_to_none=True)


def save_checkpoint(ckpt: Path, state: dict) -> None:
    """Write ``state`` (tensors, numbers, strings, lists and dicts of them) to ``ckpt`` whole or not at all."""
    import torch

    ckpt = Path(ckpt)
    ckpt.parent.mkdir(parents=True, exist_ok=True)
    tmp = ckpt.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, ckpt)


def load_checkpoint(ckpt: Path | None) -> dict | None:
    """The state a :func:`save_checkpoint` wrote to ``ckpt`` (None where there is none), loaded with
    ``weights_only=True``; a file that is not one (or is damaged) is an error that says how to start over."""
    import torch

    if ckpt is None or not Path(ckpt).exists():
        return None
    try:  # plain tensors and numbers only: a checkpoint cannot run pickled code
        return torch.load(ckpt, weights_only=True, map_location="cpu")
    except Exception as e:  # noqa: BLE001 - unpickling errors, a damaged file
        first = (str(e).strip().splitlines() or [""])[0][:200]
        raise RuntimeError(
            f"the training checkpoint {ckpt} cannot be loaded safely ({type(e).__name__}: {first}). "
            f"It is not one this code wrote, or it is damaged: delete it (`rm {ckpt}`) and training "
            "restarts from step 0."
        ) from None


def loop(
    steps: int,
    start: int,
    step: Callable[[int], None],
    *,
    desc: str,
    progress: bool,
    checkpoint: Callable[[int], None] | None = None,
    every: int = 100,
    stop_after: int | None = None,
    at_end: bool = False,
    postfix: Callable[[], dict] | None = None,
) -> bool:
    """Run ``step(i)`` for ``i`` = ``start`` .. ``steps - 1`` under a progress bar. After a step, with ``done`` steps
    done, ``checkpoint(done)`` is called when ``done`` is a multiple of ``every`` (before the last step, or at it too
    with ``at_end``), at the last step with ``at_end``, and at ``stop_after``. Returns False when it stopped at
    ``stop_after`` before the end (as an interruption would: a later call resumes from the checkpoint), else True."""
    bar = tqdm(total=steps, initial=start, desc=desc, disable=not progress)
    try:
        for i in range(start, steps):
            step(i)
            done = i + 1
            bar.update(1)
            if postfix is not None:
                bar.set_postfix(postfix())
            stop = stop_after is not None and done == stop_after and done < steps
            due = done % every == 0 and (done < steps or at_end)
            if checkpoint is not None and (due or stop or (at_end and done == steps)):
                checkpoint(done)
            if stop:
                return False
    finally:
        bar.close()
    return True
