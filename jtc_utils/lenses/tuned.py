"""The tuned lens (Belrose et al. 2023) with the published parametrisation, loss and optimiser (related-systems spec
5.1-5.2): one affine translator per layer in residual form, ``T_l(h) = h + h W_l + b_l``, zero at the start (exactly
the logit lens), trained on KL(p_final ‖ q_l) to the model's own final distribution. :data:`RECIPE`: SGD with
Nesterov momentum 0.9, lr 0.1, weight decay 1e-3 on W and b, linear decay to 0, gradient norm clipped to 1.0 over all
translators, float32, 250 steps of minibatch 512 on the book's train vectors; if the last 10% of the steps still
lower the train KL by more than 1%, it trains again with twice the steps (at most 2,000). Variants
(:data:`VARIANTS`): ``tuned``, ``tuned-lin`` (no bias), ``tuned<-mat`` (W starts at ``mat``'s map minus I).
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import numpy as np

from jtc_utils.base.state import Setting
from jtc_utils.core.infra import device as devices
from jtc_utils.core.infra.progress import show_progress
from jtc_utils.training import loop

from .base import DivergedError, LensError

RECIPE = {
    "steps": 250,
    "batch": 512,
    "lr": 1.0 * (1 - 0.9),
    "momentum": 0.9,
    "weight_decay": 1e-3,
    "clip": 1.0,
    "max_steps": 2000,
    "log_every": 10,
    "converged_below": 0.01,
}
VARIANTS = ("tuned", "tuned-lin", "tuned<-mat")
CHECKPOINT_EVERY = 25  # steps between two saved training states when a checkpoint folder is set

# set (through :func:`checkpoints`) by the lens training command: where a training run keeps its state, so that
# an interrupted run resumes at its last saved step and a finished pass of the convergence check is not redone
CHECKPOINT_DIR = Setting()


@contextmanager
def checkpoints(folder):
    """Within the block, :func:`train` saves its state to ``folder`` (one folder per lens: a file per pass of the
    convergence check, ``pass-<steps>.pt``) every :data:`CHECKPOINT_EVERY` steps and
    resumes from what it finds there. Resuming gives the weights an uninterrupted run gives (same steps, batches
    and optimiser state), up to the thread count's float rounding."""
    with CHECKPOINT_DIR.within(None if folder is None else Path(folder)):
        yield


def final_logprobs(readout, H_final, chunk: int = 2048):
    """log p_final [n, V] of the last-layer vectors, without gradients."""
    import torch

    with torch.no_grad():
        return torch.cat(
            [
                torch.log_softmax(readout(torch.as_tensor(H_final[a : a + chunk])), -1)
                for a in range(0, len(H_final), chunk)
            ]
        )


def kl_to_final(logp_f, logq):
    """KL(p_f ‖ q) per row, natural log: Σ_v p_f,v (ln p_f,v - ln q_v)."""
    return (logp_f.exp() * (logp_f - logq)).sum(-1)


def train(
    X: np.ndarray,
    readout,
    variant: str = "tuned",
    init_maps: np.ndarray | None = None,
    seed: int = 0,
    recipe: dict | None = None,
    progress: bool | None = None,
) -> dict:
    """Train every layer's translator at once. ``X``: [L+1, n, d] train hidden states; ``readout``: torch function
    from [..., d] vectors to logits. Returns ``M`` = I + W [L, d, d], ``c`` = b [L, d] (None for ``tuned-lin``),
    ``steps``, ``doublings``, ``log`` (mean train KL per layer over each window of ``log_every`` steps, [windows, L])
    and ``improvement`` (relative drop of the train KL over the last 10% of the steps)."""
    if variant not in VARIANTS:
        raise LensError(f"unknown tuned-lens variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    rec = {**RECIPE, **(recipe or {})}
    steps, doublings, earlier = rec["steps"], 0, 0.0
    while True:
        ckpt = None if CHECKPOINT_DIR.value is None else CHECKPOINT_DIR.value / f"pass-{steps}.pt"
        out = _train(X, readout, variant, init_maps, seed, rec, steps, progress, ckpt)
        earlier += out.pop("earlier_seconds", 0.0)
        if out["improvement"] <= rec["converged_below"] or steps * 2 > rec["max_steps"]:
            break
        steps, doublings = steps * 2, doublings + 1
    out.update(steps=np.array(steps), doublings=np.array(doublings))
    if earlier:
        out["earlier_seconds"] = earlier  # training time spent by interrupted processes (the caller's card adds it)
    return out


def _tensors(obj):
    """numpy arrays as torch tensors, recursively, so that a checkpoint loads with ``weights_only=True``."""
    import torch

    if isinstance(obj, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(obj))
    if isinstance(obj, dict):
        return {k: _tensors(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_tensors(v) for v in obj]
    return obj


def _save(ckpt: Path, state: dict) -> None:
    loop.save_checkpoint(ckpt, _tensors(state))


def _load(ckpt: Path | None) -> dict | None:
    """A checkpoint of :func:`_train` (tensors only: loaded with ``weights_only=True``), its numpy parts restored: the
    KL log and its window, and a finished pass's result."""
    import torch

    state = loop.load_checkpoint(ckpt)
    if state is None:
        return None
    if state.get("done") is not None:
        state["done"] = {k: v.numpy() if isinstance(v, torch.Tensor) else v for k, v in state["done"].items()}
    for key in ("window", "log"):
        if key in state:
            state[key] = [v.numpy() for v in state[key]]
    return state


def _train(X, readout, variant, init_maps, seed, rec, steps, progress, ckpt: Path | None = None) -> dict:
    import time

    import torch

    saved = _load(ckpt)
    if saved is not None and saved.get("done") is not None:
        return {**saved["done"], "earlier_seconds": saved["seconds"]}  # this pass finished in an earlier process
    dev = devices.current()
    L, n, d = X.shape[0] - 1, X.shape[1], X.shape[2]
    H = torch.as_tensor(np.asarray(X[:L], dtype=np.float32)).to(dev)
    logp_f = final_logprobs(readout, np.asarray(X[L], dtype=np.float32)).to(dev)
    W = torch.zeros(L, d, d, device=dev)
    if variant == "tuned<-mat":
        if init_maps is None:
            raise ValueError("tuned<-mat needs mat's maps (init_maps) to start from")
        W = (torch.as_tensor(np.asarray(init_maps, dtype=np.float32)) - torch.eye(d)).to(dev)
    W.requires_grad_(True)
    params = [W]
    b = None
    if variant != "tuned-lin":
        b = torch.zeros(L, d, device=dev, requires_grad=True)
        params.append(b)
    opt = torch.optim.SGD(
        params, lr=rec["lr"], momentum=rec["momentum"], nesterov=True, weight_decay=rec["weight_decay"]
    )
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: max(0.0, 1 - s / steps))
    gen = torch.Generator().manual_seed(seed)
    order = torch.randperm(n, generator=gen)
    pos, window, log, start, earlier = 0, [], [], 0, 0.0
    if saved is not None:  # resume: weights, optimiser, schedule, batch order and the KL log as they were saved
        with torch.no_grad():
            W.copy_(saved["W"].to(dev))
            if b is not None:
                b.copy_(saved["b"].to(dev))
        opt.load_state_dict(saved["opt"])
        sched.load_state_dict(saved["sched"])
        gen.set_state(saved["gen"])
        order, pos, window, log = saved["order"], saved["pos"], saved["window"], saved["log"]
        start, earlier = saved["step"], saved["seconds"]
    t0 = time.perf_counter()

    def state(step):
        return {
            "W": W.detach().cpu(),
            "b": None if b is None else b.detach().cpu(),
            "opt": opt.state_dict(),
            "sched": sched.state_dict(),
            "gen": gen.get_state(),
            "order": order,
            "pos": pos,
            "window": list(window),
            "log": list(log),
            "step": step,
            "seconds": earlier + time.perf_counter() - t0,
            "done": None,
        }

    def step(i: int) -> None:
        nonlocal order, pos, window
        if pos + rec["batch"] > n:
            order, pos = torch.randperm(n, generator=gen), 0
        idx = order[pos : pos + rec["batch"]].to(dev)  # the order is drawn on the CPU, the same on every device
        pos += rec["batch"]
        h = H[:, idx]
        t = h + torch.bmm(h, W) + (b[:, None] if b is not None else 0)
        kl = kl_to_final(logp_f[idx][None], torch.log_softmax(readout(t), -1)).mean(-1)  # [L]
        if not torch.isfinite(kl).all():
            raise DivergedError(
                f"the {variant} lens diverged (non-finite KL) at step "
                f"{len(log) * rec['log_every'] + len(window)}: lower the learning rate (recipe "
                f"lr={rec['lr']})"
            )
        loop.optimiser_step(kl.sum(), params, opt, sched, rec["clip"])
        window.append(kl.detach().cpu().numpy())
        if len(window) == rec["log_every"]:
            log.append(np.mean(window, 0))
            window = []

    loop.loop(
        steps,
        start,
        step,
        desc=f"{variant} lens, {L} layers",
        progress=show_progress() if progress is None else progress,
        checkpoint=None if ckpt is None else (lambda done: _save(ckpt, state(done))),
        every=CHECKPOINT_EVERY,
    )
    if window:
        log.append(np.mean(window, 0))
    log = np.array(log)
    total = log.sum(1)
    k = max(1, int(round(0.1 * len(total))))
    ref = total[-k - 1] if len(total) > k else total[0]
    improvement = float((ref - total[-1]) / ref) if ref > 0 else 0.0
    M = (torch.eye(d)[None] + W.detach().cpu()).double().numpy()
    out = {
        "M": M,
        "c": None if b is None else b.detach().cpu().double().numpy(),
        "log": log,
        "improvement": np.array(improvement),
    }
    if ckpt is not None:  # the pass's result, so that a resumed run does not redo it
        _save(ckpt, {"done": out, "seconds": earlier + time.perf_counter() - t0})
    if earlier:
        out["earlier_seconds"] = earlier
    return out
