"""The bottom layer: what every other layer may use and that needs nothing of the package, the checks of arguments
at every door (:mod:`.validate`). The generated world (:mod:`jtc_utils.embedded`) sits on it, the core on both."""
