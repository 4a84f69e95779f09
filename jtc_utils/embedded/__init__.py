"""The embedded world, version 2 (issue 13, "World v2"): a generated world and two-domain corpus that does not leak
into its experiment pools, is harder to read from early layers, and is free of the first version's artefacts.

* :mod:`.world` builds the entities and their facts (countries with natural adjectives, founders born before
  their organisations, a present year after which nothing is told in the past tense);
* :mod:`.corpus` writes sentences about them with a compositional grammar and the first corpus's API and labels;
* :mod:`.leaks` measures what a model could copy from its training text into the held-out pools.

The zoo and the book still run on the first corpus (:mod:`jtc_utils.corpus`) until the zoo is retrained on this
one; then this package replaces it and the first version stays reproducible from the repository's history.
"""
