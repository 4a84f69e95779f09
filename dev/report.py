"""The tables the closing note of issue 13 asks for, read from what the build wrote (run after the switch's
`make book`): the hardness report of both worlds, the claims that hold in the first world (read from the commit
named below, the last with the first world's pages) and in the second (at 9,000 training vectors and at the
paper's vectors per dimension), and the training times of the zoo.

    .venv/bin/python dev/report.py [--first-world-commit COMMIT]
"""

import argparse
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIRST_WORLD = "d65b313"  # main before the switch: the first world's pages and claims
CLAIM_FILES = ("claims", "claims_real", "claims_lenses", "claims_ffn", "claims_linearity")


def claims_at(commit: str | None, name: str) -> dict:
    if commit is None:
        f = ROOT / "book" / "data" / f"{name}.json"
        if not f.exists():
            return {}
        text = f.read_text()
    else:
        try:
            text = subprocess.run(["git", "show", f"{commit}:book/data/{name}.json"], cwd=ROOT, check=True,
                                  capture_output=True, text=True).stdout
        except subprocess.CalledProcessError:
            return {}
    return {r["id"]: r for r in json.loads(text)["data"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--first-world-commit", default=FIRST_WORLD)
    args = ap.parse_args()
    from jtc_utils import hardness, zoo

    print("## Hardness (validation pools)\n")
    second = json.loads((ROOT / "book" / "data" / "hardness.json").read_text())["data"]
    print(hardness.table(hardness.stored_v1()["report"], second).to_markdown(index=False), "\n")

    print("## Claims that hold\n")
    regime = claims_at(None, "claims_regime")
    print("| claim | first world | second world, 9,000 vectors | second world, paper's vectors per dimension |")
    print("|---|---|---|---|")
    mark = {True: "holds", False: "fails", None: "-"}
    for name in CLAIM_FILES:
        before, after = claims_at(args.first_world_commit, name), claims_at(None, name)
        for cid in sorted(set(before) | set(after), key=lambda c: (len(c), c)):
            r = regime.get(cid) if name == "claims" else None
            print(f"| {name}: {cid} | {mark[before.get(cid, {}).get('holds')]} | {mark[after.get(cid, {}).get('holds')]} "
                  f"| {mark[r.get('holds')] if r else '-'} |")
    for name in CLAIM_FILES:
        before, after = claims_at(args.first_world_commit, name), claims_at(None, name)
        print(f"\n{name}: {sum(bool(r.get('holds')) for r in before.values())}/{len(before)} hold before, "
              f"{sum(bool(r.get('holds')) for r in after.values())}/{len(after)} after")
    if regime:
        print(f"claims_regime: {sum(bool(r.get('holds')) for r in regime.values())}/{len(regime)} hold")

    print("\n## Zoo\n")
    print("| model | layers | width | held-out loss | unigram | bigram | training time |")
    print("|---|---|---|---|---|---|---|")
    for n in zoo.ZOO:
        c = zoo.load_card(n)
        h = c["heldout"]
        print(f"| {n} | {c['config']['n_layer']} | {c['config']['d_model']} | {h['loss']:.3f} | "
              f"{h['unigram_loss']:.3f} | {h.get('bigram_loss', float('nan')):.3f} | {c['train_time_s']:.0f} s |")


if __name__ == "__main__":
    main()
