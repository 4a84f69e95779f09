"""The core: models and their adapters, data (sources, samples), hidden states, the readout, linear fits, the
experiment, the methods two papers share (early exit, sub-module maps), and the cache, device and paths they run on.
Imports nothing above it.
"""
