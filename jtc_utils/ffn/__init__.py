"""FFN sub-updates in the vocabulary space (Geva et al. 2022): the exact decomposition of a block's FFN output into
value vectors times coefficients (:mod:`.decompose`, :mod:`.vocab`), what they promote (:mod:`.concepts`,
:mod:`.subupdates`, :mod:`.clusters`), their uses (:mod:`.exit_rule`, :mod:`.steering`, :mod:`.matffn`); ``paper``."""

from .decompose import FFN, NotAdditiveError

__all__ = ["FFN", "NotAdditiveError"]
