"""Benchmark: generating the full training text of the embedded corpus (the issue asks for under two minutes on
two cores)."""

import time

from jtc_utils.embedded import corpus

t = time.perf_counter()
sents = corpus.training_sentences()
dt = time.perf_counter() - t
words = sum(len(s.text.split()) for s in sents)
print(f"{len(sents):,} sentences, {words:,} words in {dt:.1f} s ({words / dt:,.0f} words/s)")
