"""Models: the zoo's catalogue, loading by name and the adapters (:mod:`.models`), the real pretrained models, the
block runners of section 6 (:mod:`.blocks`) and batching. Built on ``infra`` only.
"""
