"""How linear is each block? "Your Transformer is Secretly Linear" (Razzhigaev et al. 2024) on the book's bench.

Modules, one concept each (the package imports the core, training, evidence and JTC layers below it, never the
book above it):

* :mod:`.score`: the Procrustes-normalised linearity score, in-sample, held-out and against a null baseline, with
  and without the residual, and the identity that links the two (related-systems spec 4.1).
* :mod:`.states`: every position's hidden states for the paper's protocol, beside the book's one-per-sentence samples.
* :mod:`.train`: the zoo's extra training runs (log-spaced checkpoints, cosine-regularised pretraining,
  fine-tuning on two generated tasks), ``python -m jtc_utils.linearity.train`` (``make zoo-extras``); their results
  are read back by :mod:`.artifacts`.
* :mod:`.tasks`: the two generated fine-tuning tasks and their probes.
* :mod:`.prune`: removing blocks, replacing them by least-squares linear maps, and distilling the replacements.
* :mod:`.figures`, :mod:`.claims`, :mod:`.exercises`, :mod:`.plots`: the chapter's figure data, its claims S1-S12,
  its exercise checks, its drawings.
"""
