"""The bottom layer, needing nothing of the package: the checks of arguments at every door (:mod:`.validate`) and
process state owned by one object each (:mod:`.state`). The generated world sits on it, the core on both."""
