"""The embedded world: the generated world and two-domain corpus that the ``tiny`` profile's zoo is trained on and
its experiments read (version 2: no leak into the experiment pools, harder to read from early layers,
free of the first version's artefacts). This package imports nothing from the rest of :mod:`jtc_utils` but
:mod:`jtc_utils.base.validate`; everything else builds on it.

* :mod:`.world` builds the entities and their facts (countries with natural adjectives, founders born before
  their organisations, a present year after which nothing is told in the past tense);
* :mod:`.corpus` gives the labelled sentences about them (:func:`~.corpus.pool`, :func:`~.corpus.training_sentences`),
  written by the compositional grammar of :mod:`.grammar` from :mod:`.words`' lists into :mod:`.sentence`'s records;
* :mod:`.lexicon` gives every generated word a fine class from the generator's own lists;
* :mod:`.leaks` measures what a model could copy from its training text into the held-out pools.

The first world stays reproducible from the repository's history; its hardness report, computed at its last
commit, is ``hardness_v1.json`` (:mod:`jtc_utils.jtc.hardness`).
"""
