"""The book layer: one Chapter for every notebook, figure display, claims tables and page, runner, student edition,
grading, regression data. Imports everything below it; nothing imports it.
"""
