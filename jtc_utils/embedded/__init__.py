"""The embedded world: the generated world (:mod:`.world`) and two-domain labelled corpus (:mod:`.corpus`,
:mod:`.grammar`, :mod:`.words`, :mod:`.sentence`, :mod:`.lexicon`) that the ``tiny`` profile's zoo is trained on, and
what a model could copy into the pools (:mod:`.leaks`). Imports only :mod:`jtc_utils.base`."""
