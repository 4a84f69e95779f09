"""FFN sub-updates in the vocabulary space (Geva, Caciularu, Wang, Goldberg 2022; related-systems spec section 2).

A decoder block's feed-forward output is a sum of *value vectors* weighted by input-dependent *coefficients*,
``o = sum_i m_i v_i + b_V``, so its effect on the logits splits into per-neuron sub-updates ``m_i (v_i E^T)``: a
static ranking of the vocabulary (the value's projection) times a coefficient.

Modules, in the order the chapter uses them:

* :mod:`.decompose`: the exact decomposition (weights, coefficients, mid-block states cached per experiment);
* :mod:`.vocab`: value projections to the vocabulary in bounded-memory chunks (raw and through ``ln_f``);
* :mod:`.concepts`: concept coverage of value vectors against random vectors, whole updates and chance, with the
  generator's word classes (:mod:`jtc_utils.embedded.lexicon`) in place of human annotation;
* :mod:`.subupdates`: dominance, reference-token scores, saturation and the promotion/elimination events;
* :mod:`.clusters`: clusters of value vectors and the extreme sub-updates they explain;
* :mod:`.exit_rule`: the self-supervised early-exit rule on dominant sub-updates and its classifier baselines;
* :mod:`.steering`: concept steering (the stand-in for the paper's toxicity suppression);
* :mod:`.matffn`: what section 6's ``mat_ffn`` does to the coefficients, and values seen through ``mat``;
* :mod:`.figures`, :mod:`.claims`, :mod:`.exercises`, :mod:`.plots`: the numbers behind the chapter, claims
  F1-F11, the exercise checks, the drawings.
"""

from .decompose import FFN, NotAdditiveError

__all__ = ["FFN", "NotAdditiveError"]
