"""The book layer, by concern: ``display`` (what a page shows), ``build`` (executing, checking and publishing the
pages), ``custom`` (the book on a reader's model) and ``classroom`` (student edition, grading). It imports no paper:
every paper plugs in through :mod:`jtc_utils.evidence.registry`; nothing below imports it.
"""
