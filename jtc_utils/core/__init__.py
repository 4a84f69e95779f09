"""The core: models and their adapters, data (sources, samples), hidden states, the readout, linear fits, the
experiment, and the cache, device and paths they run on. Imports nothing above it.
"""
