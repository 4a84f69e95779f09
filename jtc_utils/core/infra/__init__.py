"""What every computation runs on: where things live (:mod:`.paths`), the on-disk cache, the device, progress bars,
packaged files, machine-independent orders (:mod:`.ordering`) and the bootstrap's resamples (:mod:`.resample`).
Imports no other part of the core.
"""
