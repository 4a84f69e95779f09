"""Benchmark (issue 36): the custom book on the real model's local folder (the converted SmolLM2-135M) with 2,000
Wikipedia sentences written to a text file, on a cold cache. The issue asks for at most 12 minutes on two cores,
within 30% of the command's own printed estimate, and for ``mat``'s and ``id``'s Precision@1 to match the real
profile's at the same sizes (1,600 training and 400 validation sentences).

    python benchmarks/bench_custom.py [--sentences 2000] [--work /tmp/jtc-bench-custom]

The real profile's numbers are computed after the timed run, in the same cold cache; "match" means that at every
layer the difference lies within twice the standard error of the difference (from each side's 200 bootstrap
resamples: the two runs draw their validation sentences differently, since the custom profile splits its text
itself).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("--sentences", type=int, default=2000)
ap.add_argument("--work", type=Path, default=Path("/tmp/jtc-bench-custom"))
args = ap.parse_args()
shutil.rmtree(args.work, ignore_errors=True)
args.work.mkdir(parents=True)
env = {**os.environ, "JTC_CACHE": str(args.work / "cache")}  # cold: nothing of an earlier run is reused

prep = (
    f"from jtc_utils.core.data import real_text\nfrom jtc_utils.core.models import real_models\n"
    f"n_val = {args.sentences // 5}\n"
    f"s = real_text.sentences('wiki', 'train', n={args.sentences} - n_val)"
    f" + real_text.sentences('wiki', 'validation', n=n_val)\n"
    f"open('{args.work / 'wiki.txt'}', 'w').write('\\n\\n'.join(s) + '\\n')\n"
    f"print(real_models.folder('smollm2-135m'))\n"
)
model = (
    subprocess.run([sys.executable, "-c", prep], env=env, capture_output=True, text=True, check=True)
    .stdout.strip()
    .splitlines()[-1]
)
out = args.work / "book"
t0 = time.time()
subprocess.run(
    [
        sys.executable,
        "-m",
        "jtc_utils.book.custom.command",
        "--model",
        model,
        "--text",
        str(args.work / "wiki.txt"),
        "--sentences",
        str(args.sentences),
        "--out",
        str(out),
    ],
    env=env,
    check=True,
)
wall = time.time() - t0
run = json.loads((out / "run.json").read_text())
print("\n".join(run["plan"]))
print(
    f"custom book: {wall / 60:.1f} min wall (pages {run['pages_total_s'] / 60:.1f} min, {run.get('jobs', 1)} at a "
    f"time; HTML included in the wall time); estimate {run['estimate_s'] / 60:.1f} min: "
    f"{wall / run['estimate_s'] - 1:+.0%}; the pages' peak memory together {run['peak_memory_gb']:.2f} GB "
    f"(estimate {run['memory_estimate_gb']:.1f} GB)"
)
for page, s in run["pages_s"].items():
    print(f"  {page}: {'-' if s is None else f'{s:.0f} s'}")

compare = (
    f"import json\n"
    f"from jtc_utils.core.data.setting import Setting\n"
    f"from jtc_utils.jtc import figures\n"
    f"d, _ = figures.compute('real_fig4', Setting.of('real', {args.sentences - args.sentences // 5}, "
    f"{args.sentences // 5}))\n"
    f"from jtc_utils.evidence.figdata import plain\n"
    f"print(json.dumps(plain(d)))\n"
)
real = json.loads(
    subprocess.run([sys.executable, "-c", compare], env=env, capture_output=True, text=True, check=True)
    .stdout.strip()
    .splitlines()[-1]
)
mine = json.loads((out / "data" / "fig4.json").read_text())["data"]
for m in ("mat", "id"):
    a, b = (np.asarray(x["curves"][m]["p@1"], dtype=float) for x in (mine, real))
    se = np.sqrt(
        np.var(np.asarray(mine["curves"][m]["boot"]["p@1"], dtype=float), axis=0)
        + np.var(np.asarray(real["curves"][m]["boot"]["p@1"], dtype=float), axis=0)
    )
    within = np.abs(a - b) <= 2 * se
    print(
        f"{m} Precision@1, custom vs real profile: largest difference {np.max(np.abs(a - b)):.3f} "
        f"(mean {np.mean(a - b):+.3f}); within twice the standard error at {within.sum()} of {len(a)} layers"
    )
