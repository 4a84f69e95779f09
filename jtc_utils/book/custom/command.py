"""Your model, your text, the whole book: every chapter that applies to a reader's own model, executed into a folder
of its own, with the paper's claims judged for that model.

    python -m jtc_utils.book.custom.command --model PATH_OR_HUB_ID --text FILE_OR_FOLDER [--text-news FILE]
        [--sentences N] [--device auto|cpu|cuda] [--memory GB] [--jobs N] [--no-html] --out DIR
    make custom MODEL=... TEXT=... OUT=...

This module checks every argument at once, before anything heavy is imported (:func:`check_arguments`), then plans
(:mod:`jtc_utils.book.custom.plan`: what applies, time and memory) and runs the pages, each one transaction that an
interrupted run resumes (:mod:`jtc_utils.book.custom.pages`). The README's "Your model" section says what applies.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from jtc_utils.book.build import runner
from jtc_utils.core.models import models
from jtc_utils.core.data import profiles, user_text
from jtc_utils.core.infra.paths import ROOT

# a fifth of the sentences validate, and the FFN page draws its random whole updates (jtc_utils.ffn.figures.N_RANDOM,
# 10) from the validation sentences without replacement: fewer than 50 and a page fails after minutes
LEAST_SENTENCES = 50


def check_out(out) -> Path:
    """The output folder, refused where it would write into the committed book or the project's sources."""
    out = Path(out).expanduser().resolve()
    for part in ("book", "notebooks", "jtc_utils", "zoo", "tests"):
        inside = ROOT / part
        if out == inside or inside in out.parents:
            raise ValueError(
                f"{out} is inside the committed book's {part}/; the custom book never touches it: "
                f"pass --out a folder of its own (e.g. --out my-model-book)"
            )
    if out == ROOT or out in ROOT.parents:
        raise ValueError(f"{out} would hold the repository itself; pass --out a folder of its own")
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} exists and is not a folder; pass --out a folder of its own")
    if out.is_dir() and any(out.iterdir()) and not (out / profiles.CUSTOM_SPEC).exists():
        raise ValueError(
            f"{out} is not empty and holds no custom book ({profiles.CUSTOM_SPEC}); pass --out an empty or new folder"
        )
    return out


def check_arguments(args) -> list[str]:
    """Every problem with the command's arguments, each as one line naming the option, the value and the fix; the
    model first (the cheapest to check), then the texts (read whole: an empty, binary or wrongly encoded text is
    refused here, before the model loads), the sizes and the output folder. Nothing is imported that loads torch."""
    problems = []

    def check(option, fn, *a):
        try:
            return fn(*a)
        except (models.ModelUnavailableError, ValueError, TypeError, OSError) as e:
            problems.append(f"{option}: {e}")

    check("--model", models.locate, args.model)
    check("--text", user_text.documents, args.text)
    if args.text_news is not None:
        check("--text-news", user_text.documents, args.text_news)
    if args.sentences < LEAST_SENTENCES:
        problems.append(
            f"--sentences: must be at least {LEAST_SENTENCES} (a fifth of them validate, and the FFN "
            f"page draws 10 of those), got {args.sentences}"
        )
    if args.jobs is not None and args.jobs < 1:
        problems.append(f"--jobs: must be at least 1, got {args.jobs}")
    if args.memory is not None and not args.memory > 0:
        problems.append(f"--memory: must be a positive number of GB, got {args.memory}")
    if args.timeout < 1:
        problems.append(f"--timeout: must be at least 1 second per cell, got {args.timeout}")
    check("--out", check_out, args.out)
    return problems


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m jtc_utils.book.custom.command",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--model", required=True, help="a folder written by save_pretrained, or a hub id")
    ap.add_argument("--text", required=True, help=f"the main text: {user_text.FORMS}")
    ap.add_argument("--text-news", default=None, help="a second text, the paper's news domain (appendix B)")
    ap.add_argument(
        "--sentences",
        type=int,
        default=sum(profiles.CUSTOM_SIZES),
        help="sentences per domain, a fifth of them for validation (default: the paper's 12,000)",
    )
    ap.add_argument("--device", default="auto", help="auto (a GPU when there is one), cpu, cuda, cuda:N")
    ap.add_argument("--memory", type=float, default=None, help="GB the run may use (default: what is available)")
    ap.add_argument("--timeout", type=int, default=runner.CELL_TIMEOUT, help="seconds per cell")
    ap.add_argument("--no-html", action="store_true", help="execute the pages only")
    ap.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="pages executed side by side, each single-threaded (default: 2 on a CPU with two cores or "
        "more, else 1; fewer where their memory would not fit)",
    )
    ap.add_argument("--plan-only", action="store_true", help="print the plan and stop")
    ap.add_argument("--out", required=True, help="the folder the custom book is written to (never book/)")
    return ap


def main(argv=None) -> None:
    args = parser().parse_args(argv)
    problems = check_arguments(args)
    if problems:
        raise SystemExit(
            f"ERROR: {len(problems)} problem(s) with the arguments; nothing was written:\n  " + "\n  ".join(problems)
        )
    from jtc_utils.book.custom import pages as custom_pages, plan as custom_plan  # the heavy part, after the arguments

    out = check_out(args.out)
    try:
        with runner.exit_on_interrupt("interrupted while planning: nothing was written"):
            p = custom_plan.plan(
                args.model, args.text, args.text_news, args.sentences, args.device, args.memory, args.jobs
            )
    except ValueError as e:
        raise SystemExit(f"ERROR: {e}") from None
    print("\n".join(p.lines()), flush=True)
    if p.memory_gb > p.available_gb:
        raise SystemExit(
            f"ERROR: the run would need about {p.memory_gb:.1f} GB and {p.available_gb:.1f} GB are "
            f"available; ask for fewer sentences (--sentences), use a smaller model, or run where there "
            f"is more memory (--memory states what may be used). Nothing was written."
        )
    if args.plan_only:
        return
    try:
        with runner.exit_on_interrupt(
            f"interrupted: the pages that finished are kept in {out}; the same command resumes with the rest"
        ):
            r = custom_pages.run(out, p, args.timeout, None if args.device == "auto" else args.device, not args.no_html)
    except runner.NotebookFailed as e:
        raise SystemExit(f"ERROR: {e}") from None
    print(
        f"done in {r['total_s'] / 60:.1f} min (estimate {p.estimate_s / 60:.1f} min); the pages' peak memory "
        f"{r['peak_memory_gb']:.2f} GB (estimate {p.memory_gb:.1f} GB)"
        + (f"; the book is at {r['html']}" if "html" in r else "")
    )


if __name__ == "__main__":
    main()
