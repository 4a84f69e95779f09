"""Executing, checking and publishing the book: the table of pages, the runner and its scheduling, staleness, the
HTML and its Sphinx extension, the test suite's driver and the figure-data regression. Imports no other part of the book.
"""
