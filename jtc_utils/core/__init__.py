"""The core, in four folders that import one way: ``infra`` (paths, cache, device, progress, orders, the bootstrap)
<- ``models`` (the zoo, loading, adapters, block runners) <- ``data`` (text, samples, profiles, the setting) <-
``analysis`` (hidden states, fits, the readout, early exit, sub-module maps, the experiment). Imports nothing above it.
"""
