"""The book on a reader's own model and text: the command (:mod:`.command`), what applies (:mod:`.plan`) and the
generated pages (:mod:`.pages`). Built on the book's display and build parts.
"""
