"""The book layer: one Chapter for every notebook, figure display, claims tables and page, runner, student edition,
grading, regression data. Imports everything below it; nothing imports it. It imports no paper package: every paper
plugs in through the one registry (:mod:`jtc_utils.evidence.registry`), built on first use.
"""
