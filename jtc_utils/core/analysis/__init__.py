"""What is computed from a model on its samples: hidden states (:mod:`.hidden`), the linear fits and r²
(:mod:`.linear`), the readout, early exit, the sub-module maps and the experiment that holds them together
(:mod:`.experiment`). Built on the rest of the core.
"""
