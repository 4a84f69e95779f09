"""The classroom: the student edition (:mod:`.student`) and grading (:mod:`.grade`): each submission executed in its
own sandbox (:mod:`.sandbox`), its answers written by the recorder inside the kernel. Built on the book's build part.
"""
