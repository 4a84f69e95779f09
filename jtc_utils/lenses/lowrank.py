"""NJTC and N-NJTC (Seshadri 2024): rank-r shortcuts ``h A B`` and ``BN(h) A B`` trained by gradient descent on the
mean squared error (related-systems spec 3.1, recipe 3.2). The paper gives no optimiser; the book's recipe is
:data:`RECIPE` (Adam, minibatch 256, at most 300 epochs, early stopping on 10% of the train split with patience 20,
float32, ``torch.nn.Linear``'s initialisation without bias); :data:`CONVERGED` adds the convergence rule: trained
until its train loss is within 1% of its function class's closed-form optimum (a cap of 300 epochs, doubled while it
is not, up to 4,800; :func:`train`). After
training, the BatchNorm statistics are set to the exact mean and biased variance of its training vectors and the lens
is evaluated in that affine form (:func:`affine_form`). All layer pairs train as one batched model (:func:`train`);
:func:`train_loop` trains them one by one, for the tests and the benchmark.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from jtc_utils.core.infra import device as devices
from jtc_utils.core.infra.progress import show_progress

from jtc_utils.training import loop

from .base import DivergedError
from .closed_form import RankFamily
from .tuned import CHECKPOINT_DIR

RECIPE = {"lr": 1e-3, "batch": 256, "max_epochs": 300, "patience": 20, "early_stop_share": 0.1, "eps": 1e-5}
# the recipe with the convergence rule (:func:`train`): what every low-rank lens is being retrained under, seed by seed
# (``python -m jtc_utils.lenses.train --converged``), committed beside the lenses of :data:`RECIPE` until every run
# the book reads exists (``registry.lowrank_recipe``)
CONVERGED = {**RECIPE, "converge_gap": 0.01, "doublings": 4, "lr_decay": 0.5}
CHECKPOINT_EVERY = 25  # epochs between two saved training states when a checkpoint folder is set


def _init(pairs, d: int, rank: int, seed: int):
    """torch.nn.Linear's default initialisation (kaiming-uniform with a = sqrt(5): U(-1/sqrt(fan_in), ...)), drawn
    for each pair from its own generator (seeded by the seed and the pair), so a pair starts the same in any batch."""
    import torch

    As, Bs = [], []
    for src, tgt in pairs:
        gen = torch.Generator().manual_seed(seed * 1_000_003 + src * 1_009 + tgt)
        As.append((torch.rand(d, rank, generator=gen) * 2 - 1) / math.sqrt(d))
        Bs.append((torch.rand(rank, d, generator=gen) * 2 - 1) / math.sqrt(rank))
    return torch.stack(As), torch.stack(Bs)


def split_indices(n: int, seed: int, share: float = RECIPE["early_stop_share"]):
    """(fit, early-stop) sample indices: a seeded permutation, the last ``share`` held out."""
    perm = np.random.default_rng(seed).permutation(n)
    n_stop = max(1, int(round(share * n)))
    return np.sort(perm[:-n_stop], kind="stable"), np.sort(perm[-n_stop:], kind="stable")


def optimum_losses(X: np.ndarray, pairs, rank: int, norm: bool, fit, stop) -> tuple[np.ndarray, np.ndarray]:
    """Per pair, the closed-form optimum of the lens's own function class fitted on the rows ``fit`` of ``X``
    (``rrr_r`` for NJTC, ``arrr_r`` for N-NJTC: its evaluation form, an affine rank-r map; from
    :class:`jtc_utils.lenses.closed_form.RankFamily`): its loss on those rows (the lowest any lens of the class
    reaches there) and on the early-stopping rows ``stop`` (squared error summed over d, averaged over samples,
    float64). The convergence rule measures a trained lens's gap to each."""
    fit_loss, stop_loss = [], []
    for a, b in pairs:
        family = RankFamily(X[a][fit], X[b][fit], affine=norm)
        fit_loss.append(family.train_sse(rank) / len(fit))
        M, c = family.split(rank)
        pred = np.asarray(X[a][stop], np.float64) @ M + (0.0 if c is None else c)
        stop_loss.append(float(((pred - np.asarray(X[b][stop], np.float64)) ** 2).sum(1).mean()))
    return np.array(fit_loss), np.array(stop_loss)


def _gap(loss, optimum) -> np.ndarray:
    """The relative gap of a train loss to its function class's optimum (0 where the optimum is 0 and so is it)."""
    loss, optimum = np.asarray(loss, np.float64), np.asarray(optimum, np.float64)
    return np.where(
        optimum > 0, (loss - optimum) / np.where(optimum > 0, optimum, 1.0), np.where(loss > 0, np.inf, 0.0)
    )


def _pair_gap(fit_loss, stop_loss, optimum, optimum_stop) -> np.ndarray:
    """A pair's gap to its optimum as the convergence rule reads it: the smaller of its gap on the rows it trains on
    and its gap on the rows it stops on (see :func:`train`)."""
    return np.minimum(_gap(fit_loss, optimum), _gap(stop_loss, optimum_stop))


def train(
    X: np.ndarray, pairs, rank: int, norm: bool, seed: int = 0, recipe: dict | None = None, progress: bool | None = None
) -> dict:
    """Train the lens of every pair (source l, target l') at once. ``X``: [L+1, n, d] train hidden states.

    Returns ``A`` [P, d, r], ``B`` [P, r, d], and for ``norm`` the BatchNorm's ``gamma``, ``beta``, ``mean``,
    ``var`` [P, d] (:func:`affine_form` turns them into ``M``, ``c``); per pair ``best_epoch``,
    ``stop_loss`` (early-stopping MSE), ``train_loss`` (MSE on the whole train split, evaluation form), ``epochs``
    (run by the pair), ``gap`` (:func:`_pair_gap`: the smaller relative gap to :func:`optimum_losses` of its loss on
    the rows it trains on, ``fit_loss``, and on the rows it stops on, ``stop_loss``) and ``converged``
    (1 where the gap is at most the recipe's ``converge_gap``).

    **When a pair stops** (fixed before any verdict was read: related-systems spec 3.2 item 1, with the convergence
    rule of the lens chapter): its best state (the epoch of its lowest early-stopping loss) is judged when its
    early-stopping loss has not improved for ``patience`` epochs (and every ``patience`` epochs after that) and at
    each cap (``max_epochs``, doubled up to ``doublings`` times, the learning rate times ``lr_decay`` at each
    doubling); it stops there once it is within ``converge_gap`` (relative) of its function class's closed-form
    optimum (:func:`optimum_losses`) on the rows it trains on or on the rows it stops on (early stopping can keep a
    state that fits the training rows less where they can be overfitted; it is then at least as good as the optimum
    on the rows it stops on), else trains on. At the last cap every pair stops, converged or not, and says which.
    Each pair stops on its own (a stopped pair's best
    state no longer changes), so a pair comes out as it would trained alone.

    The batch never materialises a [P, batch, d] tensor: pairs are grouped by source and by target layer, so one
    ``bmm`` of each source layer's vectors with all its pairs' ``A`` (side by side) gives every ``z = x A``, one
    ``bmm`` of each target's vectors with all its pairs' ``Bᵀ`` gives ``y Bᵀ``, and the loss is
    ``||z B||² - 2 z·(y Bᵀ) + ||y||²`` with ``||z B||² = z (B Bᵀ) zᵀ`` (rank-r work per pair). The early-stopping and
    final losses are computed directly, in float64.

    The pairs share no parameter and see the same minibatches, and Adam's update is elementwise, so each pair follows
    the trajectory it would follow alone. The epochs are its own loop, not the shared step loop of
    :mod:`jtc_utils.training.loop`: epochs with early stopping per pair have no fixed number of steps; where a
    checkpoint folder is set (:func:`jtc_utils.lenses.tuned.checkpoints`) the state is saved every
    :data:`CHECKPOINT_EVERY` epochs and an interrupted run resumes from it."""
    import time

    import torch
    from tqdm.auto import tqdm

    dev = devices.current()  # initial values and sample orders are drawn on the CPU: the same on every device
    rec = {**RECIPE, **(recipe or {})}
    converging = "converge_gap" in rec  # CONVERGED; else RECIPE's single cap with a common stop
    pairs = [(int(a), int(b)) for a, b in pairs]
    P, n, d = len(pairs), X.shape[1], X.shape[2]
    src = torch.as_tensor(np.asarray(X, dtype=np.float32)).to(dev)
    sources = sorted({a for a, _ in pairs})
    targets = sorted({b for _, b in pairs})
    S_layers, T_layers = torch.tensor(sources, device=dev), torch.tensor(targets, device=dev)
    pi = torch.tensor([sources.index(a) for a, _ in pairs], device=dev)  # pair -> its source's row
    pj = torch.tensor([targets.index(b) for _, b in pairs], device=dev)  # pair -> its target's row
    fit_i, stop_i = split_indices(n, seed, rec["early_stop_share"])
    optimum, optimum_stop = optimum_losses(X, pairs, rank, norm, fit_i, stop_i)
    fit_t, stop_t = torch.as_tensor(fit_i), torch.as_tensor(stop_i).to(dev)
    A, B = (t.to(dev) for t in _init(pairs, d, rank, seed))
    A.requires_grad_(True)
    B.requires_grad_(True)
    params = [A, B]
    eps = rec["eps"]
    s_mean = s_var = None
    if norm:
        gamma = torch.ones(P, d, device=dev, requires_grad=True)
        beta = torch.zeros(P, d, device=dev, requires_grad=True)
        params += [gamma, beta]
        fitX = src[S_layers][:, fit_t].double()  # [nS, n_fit, d]
        # exact statistics of the vectors trained on, for evaluation (per source layer, shared by its pairs)
        s_mean, s_var = fitX.mean(1).float(), fitX.var(1, unbiased=False).float()
        del fitX
        mean, var = s_mean[pi], s_var[pi]
    opt = torch.optim.Adam(params, lr=rec["lr"])

    every_pair = torch.arange(P, device=dev)

    def grouped_loss(part, weights, stats=None, dtype=torch.float32, sel=every_pair):
        """Per-pair mean of ||BN(x) A B - y||² (or ||x A B - y||²) over the samples ``part`` under ``weights``
        (A, B[, gamma, beta]), for the pairs ``sel`` (indices; default all, in their order): BatchNorm with the
        batch's statistics, or with ``stats`` (mean, var per source layer: evaluation form). Only the source and
        target layers of ``sel`` are read, so a batch of the few pairs still training costs what they need."""
        us, si = torch.unique(pi[sel], return_inverse=True)  # the sources ``sel`` reads; each pair's row among them
        ut, ti = torch.unique(pj[sel], return_inverse=True)
        xs = src[:, part]
        x, y = xs[S_layers[us]].to(dtype), xs[T_layers[ut]].to(dtype)  # [nS', b, d], [nT', b, d]
        A_, B_ = weights[0][sel].to(dtype), weights[1][sel].to(dtype)
        if norm:
            mu, v = (
                (x.mean(1, keepdim=True), x.var(1, unbiased=False, keepdim=True))
                if stats is None
                else (stats[0][us].to(dtype)[:, None], stats[1][us].to(dtype)[:, None])
            )
            x = (x - mu) / torch.sqrt(v + eps)
            A_eff = weights[2][sel].to(dtype)[:, :, None] * A_  # BN(x) A = x_hat diag(gamma) A + beta A
        else:
            A_eff = A_
        nS_, nT_ = len(us), len(ut)
        A_full = torch.zeros(nS_, nT_, d, rank, dtype=dtype, device=dev).index_put((si, ti), A_eff)
        Z = torch.bmm(x, A_full.permute(0, 2, 1, 3).reshape(nS_, d, nT_ * rank)).view(nS_, -1, nT_, rank)
        z = Z[si, :, ti]  # [P', b, r]
        if norm:
            z = z + (weights[3][sel].to(dtype)[:, None, :] @ A_)  # [P', 1, r]
        Bt_full = torch.zeros(nT_, nS_, d, rank, dtype=dtype, device=dev).index_put((ti, si), B_.transpose(1, 2))
        Wy = torch.bmm(y, Bt_full.permute(0, 2, 1, 3).reshape(nT_, d, nS_ * rank)).view(nT_, -1, nS_, rank)
        w = Wy[ti, :, si]  # [P', b, r] = y B^T
        G = torch.bmm(B_, B_.transpose(1, 2))  # [P', r, r]
        sq = (torch.bmm(z, G) * z).sum(-1)
        ynorm = (y**2).sum(-1)[ti]  # [P', b]
        return (sq - 2 * (z * w).sum(-1) + ynorm).mean(1)

    def mse(idx, weights, chunk=4096):
        """Per-pair mean squared error (summed over d, averaged over samples) in evaluation form, in float64."""
        total = torch.zeros(P, dtype=torch.float64, device=dev)
        with torch.no_grad():
            for a in range(0, len(idx), chunk):
                part = idx[a : a + chunk]
                total += grouped_loss(part, weights, (s_mean, s_var) if norm else None, torch.float64) * len(part)
        return total / len(idx)

    everything = torch.arange(n, device=dev)
    best = mse(stop_t, params)
    best_state = [p.detach().clone() for p in params]
    best_epoch = torch.zeros(P, dtype=torch.long, device=dev)
    waited = torch.zeros(P, dtype=torch.long, device=dev)
    active = torch.ones(P, dtype=torch.bool, device=dev)
    ran = torch.zeros(P, dtype=torch.long, device=dev)  # epochs each pair trained before it stopped
    order_gen = torch.Generator().manual_seed(seed + 1)
    epochs, cap, caps_left, earlier = 0, int(rec["max_epochs"]), int(rec.get("doublings", 0)), 0.0
    ckpt = None if CHECKPOINT_DIR.value is None else Path(CHECKPOINT_DIR.value) / "lowrank.pt"
    saved = loop.load_checkpoint(ckpt)
    if saved is not None:  # resume: parameters, optimiser, best states, counters and the order's generator
        with torch.no_grad():
            for p, v in zip(params, saved["params"]):
                p.copy_(v.to(dev))
        best_state = [v.to(dev) for v in saved["best_state"]]
        best, best_epoch, waited = saved["best"].to(dev), saved["best_epoch"].to(dev), saved["waited"].to(dev)
        active, ran = saved["active"].to(dev), saved["ran"].to(dev)
        opt.load_state_dict(saved["opt"])
        order_gen.set_state(saved["gen"])
        epochs, cap, caps_left, earlier = saved["epochs"], saved["cap"], saved["caps_left"], saved["seconds"]
    t0 = time.perf_counter()
    name = "N-NJTC" if norm else "NJTC"
    bar = tqdm(
        total=cap,
        initial=epochs,
        desc=f"{name} r={rank}, {P} pairs",
        disable=not (show_progress() if progress is None else progress),
    )
    while bool(active.any()):
        perm = fit_t[torch.randperm(len(fit_t), generator=order_gen)].to(dev)
        # the pairs still training: a stopped pair's best state no longer changes, so it is left out of the batches
        # (Adam is elementwise, so the others' steps are the ones they take with it)
        sel = torch.nonzero(active).flatten()
        for a in range(0, len(perm), rec["batch"]):
            part = perm[a : a + rec["batch"]]
            if norm and len(part) < 2:  # BatchNorm cannot normalise a batch of one
                continue
            loss = grouped_loss(part, params, sel=sel)
            if not torch.isfinite(loss).all():
                bad = [pairs[i] for i in sel[~torch.isfinite(loss)].tolist()][:5]
                raise DivergedError(
                    f"{name} training diverged (non-finite loss) at epoch {epochs} for pairs {bad}: lower the "
                    f"learning rate (recipe lr={rec['lr']})"
                )
            opt.zero_grad()
            loss.sum().backward()
            opt.step()
        epochs += 1
        bar.update()
        cur = mse(stop_t, params)
        if not torch.isfinite(cur).all():
            raise DivergedError(
                f"{name} training diverged (non-finite early-stopping loss) at epoch {epochs - 1}: lower the "
                f"learning rate (recipe lr={rec['lr']})"
            )
        better = (cur < best) & active if converging else cur < best
        best = torch.where(better, cur, best)
        best_epoch = torch.where(better, torch.full_like(best_epoch, epochs), best_epoch)
        waited = torch.where(better, torch.zeros_like(waited), waited + 1)
        for p, s in zip(params, best_state):
            s[better] = p.detach()[better]
        ran = torch.where(active, torch.full_like(ran, epochs), ran)
        if not converging:  # RECIPE: every pair trains until all have waited out their patience, or the cap
            if bool((waited >= rec["patience"]).all()) or epochs >= cap:
                active[:] = False
        # a pair is judged when its patience runs out (and every ``patience`` epochs after) and at each cap: it
        # stops there if its best state is within its gap of the optimum; at the last cap every pair stops
        late = waited - rec["patience"]
        due = active & ((late >= 0) & (late % rec["patience"] == 0) | (epochs >= cap)) & converging
        if bool(due.any()):
            gap = _pair_gap(mse(fit_t.to(dev), best_state).cpu().numpy(), best.cpu().numpy(), optimum, optimum_stop)
            active &= ~(due & torch.as_tensor(gap <= rec["converge_gap"], device=dev))
        if epochs >= cap:
            if caps_left > 0:
                cap, caps_left = cap * 2, caps_left - 1
                for group in opt.param_groups:  # a step decay: the pairs still training take smaller steps
                    group["lr"] *= rec.get("lr_decay", 1.0)
                bar.total = cap
                bar.refresh()
            else:
                active[:] = False
        if ckpt is not None and (epochs % CHECKPOINT_EVERY == 0 or not bool(active.any())):
            loop.save_checkpoint(
                ckpt,
                {
                    "params": [p.detach().cpu() for p in params],
                    "best_state": [s.cpu() for s in best_state],
                    "best": best.cpu(),
                    "best_epoch": best_epoch.cpu(),
                    "waited": waited.cpu(),
                    "active": active.cpu(),
                    "ran": ran.cpu(),
                    "opt": opt.state_dict(),
                    "gen": order_gen.get_state(),
                    "epochs": epochs,
                    "cap": cap,
                    "caps_left": caps_left,
                    "seconds": earlier + time.perf_counter() - t0,
                },
            )
    bar.close()
    with torch.no_grad():
        for p, s in zip(params, best_state):
            p.copy_(s)
        host = lambda t: t.detach().cpu().numpy().copy()  # noqa: E731
        out = {"A": host(A), "B": host(B), "best_epoch": host(best_epoch), "epochs": host(ran), "stop_loss": host(best)}
        if norm:
            out.update(gamma=host(gamma), beta=host(beta), mean=host(mean), var=host(var))
        out["train_loss"] = host(mse(everything, params))
    out["fit_loss"] = host(mse(fit_t.to(dev), params))
    out["optimum_loss"], out["optimum_stop_loss"] = optimum, optimum_stop
    out["gap"] = _pair_gap(out["fit_loss"], out["stop_loss"], optimum, optimum_stop)
    out["converged"] = (out["gap"] <= rec.get("converge_gap", CONVERGED["converge_gap"])).astype(np.int8)
    if not converging:
        out["epochs"] = np.array(epochs)  # RECIPE: one count for all pairs, as its lenses were trained
    if earlier:
        out["earlier_seconds"] = earlier  # training time spent by interrupted processes (the caller's card adds it)
    return out


def affine_form(r: dict, eps: float = RECIPE["eps"]) -> tuple[np.ndarray, np.ndarray | None]:
    """The evaluation-mode lens of every pair as ``h M + c``: ``M`` [P, d, d] = diag(gamma/sqrt(var + eps)) A B and
    ``c`` [P, d] = (beta - mean·gamma/sqrt(var + eps)) A B for N-NJTC; ``A B`` and None for NJTC (float64)."""
    AB = np.asarray(r["A"], np.float64) @ np.asarray(r["B"], np.float64)
    if "gamma" not in r:
        return AB, None
    scale = np.asarray(r["gamma"], np.float64) / np.sqrt(np.asarray(r["var"], np.float64) + eps)
    shift = np.asarray(r["beta"], np.float64) - np.asarray(r["mean"], np.float64) * scale
    return scale[:, :, None] * AB, np.einsum("pd,pde->pe", shift, AB)


def train_loop(X: np.ndarray, pairs, rank: int, norm: bool, seed: int = 0, recipe: dict | None = None) -> dict:
    """The same as :func:`train`, one pair at a time (the reference for the tests and the benchmark)."""
    parts = [train(X, [p], rank, norm, seed, recipe, progress=False) for p in pairs]
    out = {}
    for k, v in parts[0].items():
        if k == "epochs":
            out[k] = np.array(max(int(p["epochs"]) for p in parts))
        else:
            out[k] = np.concatenate([p[k] for p in parts])
    return out


def params(d: int, rank: int, norm: bool) -> int:
    """NJTC 2dr; N-NJTC 2dr + 4d (BatchNorm's weight, bias, running mean and variance, as the paper counts)."""
    return 2 * d * rank + (4 * d if norm else 0)
