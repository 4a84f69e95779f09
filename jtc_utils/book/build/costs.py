"""The build's cost model: for each page, each figure it computed and each heavy step in it (a cache entry computed,
by kind), the multiply-adds its shapes need (forward passes, vocabulary readouts, least-squares fits:
:mod:`jtc_utils.core.infra.costs`), their floor at this machine's one-thread float32 and float64 matrix-multiply
rates measured in the same run (:func:`rates`), the measured seconds and their ratio. Pages record their figures in
their kernels (one file per page under :data:`FOLDER`); after a build the runner prints :func:`report`. On a warm
cache a figure reads its steps from disk, so the table speaks of a cold build (``make clean-cache``, then
``make book FORCE=1``).

    python -m jtc_utils.book.build.costs            # the table of the last build's pages
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from jtc_utils.core.infra import costs
from jtc_utils.core.infra.paths import CACHE_DIR

FOLDER = CACHE_DIR / "costs"
SIZE = 768  # the square products the rates are measured on (the real model's width is 576)


def path(page: str) -> Path:
    """Where page ``page`` writes the figures it computed in this build."""
    return FOLDER / f"{page}.jsonl"


def rates(size: int = SIZE, repeats: int = 3) -> dict:
    """Multiply-adds per second of one thread's square matrix products, float32 and float64, the best of
    ``repeats`` (the floor a step's arithmetic sets)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        out = {}
        for key, dtype in (("f32", torch.float32), ("f64", torch.float64)):
            a, b = torch.randn(size, size, dtype=dtype), torch.randn(size, size, dtype=dtype)
            a @ b
            best = float("inf")
            for _ in range(repeats):
                t = time.perf_counter()
                a @ b
                best = min(best, time.perf_counter() - t)
            out[key] = size**3 / best
        return out
    finally:
        torch.set_num_threads(threads)


def floor(rec: dict, rate: dict) -> float:
    """Seconds the arithmetic of ``rec`` (a figure's or a step's) takes at ``rate`` (:func:`rates`)."""
    return rec.get("f32", 0.0) / rate["f32"] + rec.get("f64", 0.0) / rate["f64"]


def by_kind(steps: list[dict]) -> list[dict]:
    """A figure's steps summed by kind (``n``: how many cache entries of that kind it computed)."""
    out = {}
    for st in steps:
        k = out.setdefault(st["kind"], {"kind": st["kind"], "seconds": 0.0, "f32": 0.0, "f64": 0.0, "n": 0})
        for key in ("seconds", "f32", "f64"):
            k[key] += st.get(key, 0.0)
        k["n"] += 1
    return list(out.values())


def rows(pages, rate: dict) -> list[dict]:
    """One row per figure each page of ``pages`` computed and one per kind of heavy step inside it (its entries
    summed): page, figure, step (empty on a figure's row), multiply-adds by precision, floor, measured seconds and
    ratio (None where no arithmetic was counted), the figures of a page slowest first, its steps slowest first."""
    out = []
    for page in pages:
        figures = costs.read(path(page))
        for f in sorted(figures, key=lambda f: (-f["seconds"], f["figure"])):
            for step in [None, *sorted(by_kind(f["steps"]), key=lambda s: (-s["seconds"], s["kind"]))]:
                rec = f if step is None else step
                low = floor(rec, rate)
                out.append(
                    {
                        "page": page,
                        "figure": f["figure"],
                        "step": "" if step is None else f"{step['kind']} ×{step['n']}",
                        "f32": rec.get("f32", 0.0),
                        "f64": rec.get("f64", 0.0),
                        "floor": low,
                        "seconds": rec["seconds"],
                        "ratio": rec["seconds"] / low if low > 0 else None,
                    }
                )
    return out


def report(pages, rate: dict | None = None, least_seconds: float = 5.0) -> str:
    """The cost table of ``pages`` as text: figures and steps that took at least ``least_seconds`` (the others
    summed per page), each page's total, and the worst ratio among the rows whose arithmetic sets a floor of at least
    a second."""
    rate = rate or rates()
    lines = [
        f"cost model (one thread: float32 {rate['f32'] / 1e9:.1f}, float64 {rate['f64'] / 1e9:.1f} G multiply-adds/s)",
        f"{'page':<22} {'figure':<24} {'step':<22} {'G MAC f32':>10} {'G MAC f64':>10} {'floor s':>8} "
        f"{'measured s':>10} {'ratio':>7}",
    ]
    table = rows(pages, rate)
    for page in pages:
        mine = [r for r in table if r["page"] == page]
        if not mine:
            continue
        figures = [r for r in mine if not r["step"]]
        for r in mine:
            if r["seconds"] >= least_seconds:
                ratio = "" if r["ratio"] is None else f"{r['ratio']:.1f}"
                lines.append(
                    f"{page:<22} {r['figure']:<24} {r['step']:<22} {r['f32'] / 1e9:>10.1f} {r['f64'] / 1e9:>10.1f} "
                    f"{r['floor']:>8.1f} {r['seconds']:>10.1f} {ratio:>7}"
                )
        small = [r for r in figures if r["seconds"] < least_seconds]
        total = sum(r["seconds"] for r in figures)
        under = f"({len(small)} figure{'s' if len(small) != 1 else ''} under {least_seconds:.0f} s)"
        lines.append(f"{page:<22} {under:<47} {'':>10} {'':>10} {'':>8} {sum(r['seconds'] for r in small):>10.1f}")
        lines.append(f"{page:<22} {'all its figures':<47} {'':>10} {'':>10} {'':>8} {total:>10.1f}")
    # the worst ratio among rows whose floor is at least a second: below it a ratio measures overheads, not arithmetic
    worst = max(
        (r for r in table if r["ratio"] is not None and r["floor"] >= 1), key=lambda r: r["ratio"], default=None
    )
    if worst is not None:
        lines.append(
            f"worst ratio: {worst['page']}, {worst['figure']}"
            + (f", {worst['step']}" if worst["step"] else "")
            + f" ({worst['ratio']:.1f}: {worst['seconds']:.1f} s against a floor of {worst['floor']:.2f} s)"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m jtc_utils.book.build.costs", description=__doc__.split("\n\n")[0])
    ap.add_argument("pages", nargs="*", help="pages (default: every page the last build measured)")
    ap.add_argument("--least", type=float, default=5.0, help="rows of at least this many seconds (default 5)")
    args = ap.parse_args(argv)
    pages = args.pages or sorted(p.stem for p in FOLDER.glob("*.jsonl"))
    if not pages:
        raise SystemExit(f"no page was measured: {FOLDER} is empty; execute pages with the runner first")
    print(report(pages, least_seconds=args.least))


if __name__ == "__main__":
    main()
