"""Executing, checking and publishing the book: the table of pages, the runner, its scheduling and what it keeps of an
executed page, staleness, the HTML and its Sphinx extension, the test suite's driver and the figure-data regression.
Imports no other part of the book."""
