"""How linear is each block ("Your Transformer is Secretly Linear", Razzhigaev et al. 2024): the linearity score
(:mod:`.score`) on every position's states (:mod:`.states`), pruning to linear maps (:mod:`.prune`), the zoo's extra
training runs (:mod:`.train`, :mod:`.tasks`, :mod:`.artifacts`); ``paper`` declares its figures and claims."""
