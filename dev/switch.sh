#!/usr/bin/env bash
# Move the book to the second world (issue 13) in one step, on the commit that holds this script:
#   1. the prepared code (dev/world-v2-switch.patch: the world package, the runner's prose refresh, the resumable
#      tuned lens, the quiet GGUF conversion, the new sections and tests);
#   2. zoo-v2/ replaces the first world's models, tokenizers, lenses and linearity runs in zoo/ (the real model's
#      lenses in zoo/lenses/smollm2-135m do not depend on the world and stay);
#   3. the checksums and the fine-tuning records of the linearity chapter (they need the moved lexicon).
# Then: `make book` (every page re-executes), revise the prose, `make test` on a fresh clone, commit, delete dev/.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
git apply --index dev/world-v2-switch.patch
git rm -q jtc_utils/embedded/train.py  # the transitional trainer of zoo-v2/
for d in tiny-gpt2 tiny-gpt2-medium tiny-gpt2-large tiny-gpt2-xl tiny-bert-base tiny-bert-large tokenizer-gpt \
         tokenizer-bert lenses/tiny-gpt2 lenses/tiny-gpt2-medium lenses/tiny-gpt2-large lenses/tiny-gpt2-xl \
         lenses/tiny-bert-base lenses/tiny-bert-large secretly-linear; do
    git rm -rq "zoo/$d"
    git mv "zoo-v2/$d" "zoo/$d"
done
git rm -q zoo-v2/SHA256SUMS
rm -rf zoo-v2
# the models' files stay byte for byte as trained (their README files included): a model's identity is the digest
# of all its files, and the trained lenses and cached states are keyed on it
$PY -m jtc_utils.zoo checksums
$PY -m jtc_utils.linearity.train finetune --threads "${THREADS:-2}"  # rewrites the checksums too
git add -A zoo jtc_utils tests notebooks
echo "switched: now run make book, revise the prose, make test on a fresh clone"
