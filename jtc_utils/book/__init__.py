"""The book layer: one Chapter for every notebook, figure display, claims tables and page, runner, student edition,
grading, regression data. Imports everything below it; nothing imports it. Every module of it that reads a registry
(figures, claims, exercise checks) fills them first from the one list of the papers
(:func:`jtc_utils.book.papers.register`).
"""
