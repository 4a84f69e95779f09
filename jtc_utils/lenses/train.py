"""Train the lenses the book loads rather than trains: ``python -m jtc_utils.lenses.train``. Writes
``zoo/lenses/<model>/<lens>.safetensors`` (weights, the key they were trained under, and a card with the training
time and convergence record): the tuned lens of every zoo model; on the stand-in of GPT2-XL the grid's ``tuned-lin``
and ``tuned<-mat`` and NJTC and N-NJTC for every layer pair and to the last layer, seeds 0-4 under the convergence
rule (``lowrank.CONVERGED``, which the book reads for it); on the real model (``--models smollm2-135m``) NJTC and N-NJTC
at rank 5 to the last layer and to the next (the pairs N-NJTC's Figure 2 claims read), seed 0 under the capped recipe
the book reads for it. ``--converged``: the real model's too under the convergence rule, seeds 0-4, stored beside the
book's until every run exists; ``--lowrank-only``: no tuned lens. With
``--real-tuned`` its tuned lens, which needs a GPU (``--device cuda``: about 650 TFLOP per 250 steps). A lens already
stored under the same key is skipped, so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import re
import time

from jtc_utils.core.models import catalogue
from jtc_utils.core.infra import device as devices
from jtc_utils.core.analysis.experiment import Experiment
from jtc_utils.evidence.verdicts import LEAST_SEEDS

from . import artifacts, get, registry
from .registry import all_pairs, trained_pairs

GRID_MODEL = "tiny-gpt2-xl"
RANK = 4  # the zoo's rank (related-systems spec 3.2 item 3: floor(d/100) = 0 on the zoo)
BOOK_SEEDS = (0, 1, 2)  # the stand-in's low-rank lenses' seeds under lowrank.RECIPE (the real model's: its first)
SEEDS = tuple(range(LEAST_SEEDS))  # under lowrank.CONVERGED: as many runs as a verdict on seeds alone needs


def seeds_of(model: str, converged: bool = False) -> tuple:
    """The low-rank lenses' seeds of ``model``: every seed the seed rule needs where they are trained under the
    convergence rule (``--converged``, or a model the book reads under it), else the capped recipe's."""
    if converged or model in registry.BOOK_CONVERGED:
        return SEEDS
    return BOOK_SEEDS if model == GRID_MODEL else BOOK_SEEDS[:1]


TUNED_MODELS = ("tiny-gpt2", "tiny-gpt2-medium", "tiny-gpt2-large", "tiny-gpt2-xl", "tiny-bert-base", "tiny-bert-large")
REAL_MODEL = "smollm2-135m"


def jobs(
    models=TUNED_MODELS,
    real_tuned: bool = False,
    lowrank_only: bool = False,
    converged: bool = False,
    only: re.Pattern | None = None,
):
    """The training runs, in the order they run: the real model's low-rank lenses to the last layer (every seed),
    then its adjacent pairs; the stand-in's tuned lenses, low-rank lenses to the last layer and for all pairs, each
    model's low-rank lenses for the seeds of :func:`seeds_of`. ``only``: the runs whose name it matches in full."""
    for job in _jobs(models, real_tuned, lowrank_only, converged):
        if only is None or only.fullmatch(job[1]):
            yield job


def _jobs(models, real_tuned, lowrank_only, converged):

    for model in models:
        seeds = seeds_of(model, converged)
        if model == REAL_MODEL:
            for seed in seeds:
                for name in ("njtc", "nnjtc"):
                    yield (
                        model,
                        f"{name} seed {seed}",
                        lambda exp, n=name, s=seed: get(n, rank=exp.adapter.d // 100, seed=s).fit(exp),
                    )
            for seed in seeds:
                for name in ("njtc", "nnjtc"):
                    yield (
                        model,
                        f"{name} adjacent pairs seed {seed}",
                        lambda exp, n=name, s=seed: trained_pairs(
                            exp, exp.adapter.d // 100, n == "nnjtc", s, "adjacent"
                        ),
                    )
            if real_tuned:
                yield model, "tuned", lambda exp: get("tuned", seed=0).fit(exp)
            continue
        if model == GRID_MODEL:
            for seed in seeds:
                for name in ("njtc", "nnjtc"):
                    yield model, f"{name} seed {seed}", lambda exp, n=name, s=seed: get(n, rank=RANK, seed=s).fit(exp)
                    yield (
                        model,
                        f"{name} all pairs seed {seed}",
                        lambda exp, n=name, s=seed: all_pairs(exp, RANK, n == "nnjtc", s),
                    )
        if lowrank_only:
            continue
        yield model, "tuned", lambda exp: get("tuned", seed=0).fit(exp)
        if model == GRID_MODEL:
            for name in ("tuned-lin", "tuned<-mat"):
                yield model, name, lambda exp, name=name: get(name, seed=0).fit(exp)


def main(argv=None):

    ap = argparse.ArgumentParser(
        prog="python -m jtc_utils.lenses.train",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--models", nargs="+", default=[*TUNED_MODELS, REAL_MODEL], choices=[*TUNED_MODELS, REAL_MODEL])
    ap.add_argument("--lowrank-only", action="store_true", help="only NJTC and N-NJTC (every seed), no tuned lens")
    ap.add_argument(
        "--converged",
        action="store_true",
        help="train NJTC and N-NJTC under the convergence rule (lowrank.CONVERGED), stored beside the book's",
    )
    ap.add_argument(
        "--unstage",
        action="store_true",
        help="store the staged converged lenses of the models the book reads under the convergence rule "
        "(registry.BOOK_CONVERGED) under their plain names, replacing the capped ones, and stop",
    )
    ap.add_argument(
        "--only",
        default=None,
        metavar="REGEX",
        help="only the runs whose name matches REGEX in full (such as 'njtc seed [2-4]'), so that two single-threaded "
        "processes can train different runs side by side",
    )
    ap.add_argument("--device", default="auto", help="auto (a GPU when there is one), cpu, cuda or cuda:N")
    ap.add_argument(
        "--real-tuned",
        action="store_true",
        help=f"also train {REAL_MODEL}'s tuned lens (about 650 TFLOP per 250 steps: use a GPU)",
    )
    args = ap.parse_args(argv)
    try:
        only = None if args.only is None else re.compile(args.only)
    except re.error as e:
        ap.error(f"--only {args.only!r} is not a regular expression ({e}); write one such as 'nnjtc seed [1-4]'")

    if args.unstage:
        for model in sorted(registry.BOOK_CONVERGED & set(args.models)):
            for f in sorted(artifacts.path(model, "x").parent.glob("*" + catalogue.STAGED_SUFFIX)):
                staged = f.name.removesuffix(".safetensors")
                print("stored", artifacts.unstage(model, staged, staged.removesuffix(registry.CONVERGED_TAG)).name)
        print(f"wrote {catalogue.write_manifest()}")
        return
    devices.use(args.device)
    registry.STORE_ARTIFACTS = True
    if args.converged:
        registry.TRAIN_CONVERGED = True
    exps = {}
    t0 = time.perf_counter()
    for model, what, run in jobs(args.models, args.real_tuned, args.lowrank_only, args.converged, only):
        if model not in exps:
            exps[model] = Experiment(model, profile="real" if model == REAL_MODEL else "tiny")
        exp = exps[model]
        t = time.perf_counter()
        run(exp)
        print(f"{model}: {what} ({time.perf_counter() - t:.0f} s)", flush=True)
    print(f"done in {(time.perf_counter() - t0) / 60:.1f} min; wrote {catalogue.write_manifest()}")


if __name__ == "__main__":
    main()
