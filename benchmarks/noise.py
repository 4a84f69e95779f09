r"""How much every figure-data quantity moves when only the arithmetic changes: the measurement behind the tolerances
of the figure-data regression (``jtc_utils.book.build.regression``), committed in ``tests/noise.json``.

Each *setting* recomputes every figure of :func:`jtc_utils.book.build.regression.targets` from scratch (its own empty
cache, so hidden states, fits and projections are recomputed too) in a process of its own, with environment variables
that change only how the arithmetic is done:

* ``threads1-aten-default``: one thread (another summation order in every parallel reduction) and ATen's
  non-vectorised kernels (``ATEN_CPU_CAPABILITY=default``: softmax, norms, GELU and reductions in another order);
* ``threads1-mkl-avx``: one thread, MKL's AVX code path instead of AVX2 (``MKL_CBWR=AVX``: GEMM and LAPACK
  without fused multiply-adds, for torch's matrix products and the fits) and numpy's OpenBLAS on its Sandybridge
  kernels (``OPENBLAS_CORETYPE``, no FMA either). ``MKL_CBWR=COMPATIBLE`` was tried first and dropped: it made
  the forward passes three times slower;
* ``threads1-numpy-baseline``: one thread and NumPy on its baseline kernels (``NPY_DISABLE_CPU_FEATURES`` turning
  off every feature this CPU has that NumPy dispatches beyond its build's baseline: AVX2, AVX-512): other sort
  kernels (the order of exact ties where a sort is not stable) and other SIMD summation in NumPy's reductions, as on
  an older CPU (issue 52);
* ``default``: this machine as it is (two threads, AVX2, MKL's own choice): the reader's setting when the pages were
  executed on another machine of the same kind.

Each setting is compared with the stored ``book/data`` (executed under the default setting of the machine that
built the pages), quantity by quantity (:func:`jtc_utils.book.build.regression.quantities`), and the largest difference
over the settings is written to ``tests/noise.json`` with each setting's own.

    python benchmarks/noise.py run threads1-aten-default     # one setting (resumes: finished figures are kept)
    python benchmarks/noise.py run-all                       # every setting, one after the other
    python benchmarks/noise.py compare                       # tests/noise.json from the finished settings
    python benchmarks/noise.py run-all --only '^seed\d+_'    # only the figures whose names match (new figures):
                                                             # the others keep their committed measurement
    python benchmarks/noise.py table [--summary]             # spread and tolerance per quantity (or per kind)

Two single-thread settings may run side by side on two cores; never beside a two-thread job.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jtc_utils.book.build.suite import baseline_dispatch  # noqa: E402 - after the checkout is on the path

WORK = ROOT / ".cache" / "noise"
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
SETTINGS = {
    "threads1-aten-default": {**ONE_THREAD, "ATEN_CPU_CAPABILITY": "default"},
    "threads1-mkl-avx": {**ONE_THREAD, "MKL_CBWR": "AVX", "OPENBLAS_CORETYPE": "Sandybridge"},
    "threads1-numpy-baseline": {**ONE_THREAD, "NPY_DISABLE_CPU_FEATURES": baseline_dispatch()},
    "default": {},
}


# The largest differences that a fresh clone on another two-core x86 machine (same Python, same pinned packages)
# showed against the stored numbers (issue 31). That machine's full recomputation is not at hand, so only these are
# folded in, as a setting "reported", each as the error of regression.spread (relative to the magnitude above 1).
# (Its exit-rule classifiers' 0.004 is left out: they were L-BFGS runs stopped at a loose tolerance, since replaced by
# Newton steps to the optimum, which the settings here reproduce exactly.)
REPORTED = {
    "fig21": {r"^early/[^/]+/x( \(\|value\| > 1\))?$": 0.011},
    "sample_size_gpt48": {r"^r2_mat \(\|value\| > 1\)$": 0.39 / 163},
    "sl_fig5": {r"/accuracy$": 4.3e-4},
}


def _out(setting: str) -> Path:
    return WORK / f"{setting}.json"


def run(setting: str, only: str | None = None) -> None:
    """Recompute every target (whose name matches ``only``) under ``setting`` (this process must already have its
    environment; see main)."""
    from jtc_utils.book.build import regression

    done = json.loads(_out(setting).read_text()) if _out(setting).exists() else {}
    names = [n for n in regression.targets() if only is None or re.search(only, n)]
    for i, name in enumerate(names):
        if name in done:
            continue
        t = time.perf_counter()
        done[name] = {"data": regression.recompute(name), "seconds": round(time.perf_counter() - t, 1)}
        tmp = _out(setting).with_suffix(".tmp")
        tmp.write_text(json.dumps(done))
        tmp.replace(_out(setting))
        print(f"[{setting}] {i + 1}/{len(names)} {name}: {done[name]['seconds']} s", flush=True)


def launch(setting: str, only: str | None = None) -> int:
    WORK.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        **SETTINGS[setting],
        "JTC_CACHE": str(WORK / f"cache-{setting}"),
        "JTC_DATA_OUT": str(WORK / f"data-{setting}"),
        "JTC_PROGRESS": "0",
        "PYTHONWARNINGS": "ignore",
    }
    return subprocess.call([sys.executable, __file__, "_child", setting] + (["--only", only] if only else []), env=env)


def compare() -> dict:
    from jtc_utils.book.build import regression
    from jtc_utils.evidence import figdata

    settings = {s: json.loads(_out(s).read_text()) for s in SETTINGS if _out(s).exists()}
    if not settings:
        raise SystemExit("no setting has been run: python benchmarks/noise.py run-all")
    # a figure no setting recomputed (a run restricted with --only) keeps its committed measurement
    figures = regression.noise()["figures"] if regression.NOISE_FILE.exists() else {}
    for name in regression.targets():
        if not any(name in got for got in settings.values()):
            continue
        stored = regression.quantities(figdata.load(name)["data"])
        per = {}
        for s, got in settings.items():
            if name not in got:
                continue
            mine = regression.quantities(got[name]["data"])
            for quantity, values in stored.items():
                for q, a, b in regression.buckets(quantity, mine.get(quantity, []), values):
                    sp = regression.spread(a, b, counts=regression.is_count(q))
                    best = per.setdefault(
                        q, {"err": 0.0, "scale": sp["scale"], "n": sp["n"], "exact": sp["exact"], "by_setting": {}}
                    )
                    best["err"] = max(best["err"], sp["err"])
                    best["exact"] &= sp["exact"]
                    best["by_setting"][s] = sp["err"]
        for pattern, err in REPORTED.get(name, {}).items():
            for q, best in per.items():
                if re.search(pattern, q):
                    best["err"] = max(best["err"], err)
                    best["exact"] = False
                    best["by_setting"]["reported"] = err
        # a resampled mean is compared with its mean's spread and a derived statistic with its sources' (see
        # regression.measured_names): neither is measured itself
        figures[name] = {
            q: m
            for q, m in per.items()
            if "boot" not in q.split("/")
            and not any(re.search(pat, q.removesuffix(regression.LARGE)) for pat in regression.DERIVED)
        }
    out = {
        "what": __doc__.split("\n\n")[0],
        "settings": {**{s: SETTINGS[s] for s in settings}, "reported": "issue 31: another machine"},
        "environment": figdata.environment(),
        "figures": figures,
    }
    text = json.dumps(out, indent=1, allow_nan=True)
    regression.NOISE_FILE.write_text(text + "\n")
    return out


def table(summary: bool = False) -> None:
    """Per figure and quantity: the measured spread and the tolerance it gives (``summary``: per kind of quantity,
    the last part of its name, over every figure: how many, the largest spread, the tolerances' range)."""
    import collections

    from jtc_utils.book.build import regression
    from jtc_utils.evidence import figdata

    nz = regression.noise()
    kinds = collections.defaultdict(list)
    for name, per in nz["figures"].items():
        params = figdata.load(name)["params"]
        stored = regression.bucketed(figdata.load(name)["data"])
        for q, m in per.items():
            if m["err"] == 0 and m["exact"] and not regression.is_count(q):
                continue
            tol, why = regression.tolerance(name, q, m, params, stored[q])
            kinds[q.split("/")[-1]].append((m["err"], tol, why, name))
            if not summary:
                print(f"{name:24s} {q:44s} spread {m['err']:.2e} scale {m['scale']:.2e} tol {tol:.2e} ({why})")
    if summary:
        print("| quantity | n | largest spread (where) | tolerance: smallest-largest | set by |")
        print("|---|---|---|---|---|")
        for k, rows in sorted(kinds.items(), key=lambda kv: -max(r[0] for r in kv[1])):
            worst = max(rows, key=lambda r: r[0])
            whys = collections.Counter(r[2] for r in rows).most_common(2)
            print(
                f"| {k} | {len(rows)} | {worst[0]:.1e} ({worst[3]}) | {min(r[1] for r in rows):.1e}-"
                f"{max(r[1] for r in rows):.1e} | " + ", ".join(f"{w} ({c})" for w, c in whys) + " |"
            )


def main(argv) -> None:
    only = argv[argv.index("--only") + 1] if "--only" in argv else None
    argv = [a for i, a in enumerate(argv) if a != "--only" and (i == 0 or argv[i - 1] != "--only")]
    cmd = argv[0] if argv else "run-all"
    if cmd == "_child":
        run(argv[1], only)
    elif cmd == "run":
        raise SystemExit(launch(argv[1], only))
    elif cmd == "run-all":
        for s in SETTINGS:
            if launch(s, only):
                raise SystemExit(f"setting {s} failed")
        compare()
    elif cmd == "compare":
        compare()
    elif cmd == "table":
        table(summary="--summary" in argv)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
