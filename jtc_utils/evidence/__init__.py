"""Evidence: the figure registry every paper registers into, the figure data in book/data, the lexicon and verdict
statistics, the claims framework and the exercise registry. Imports the core only.
"""
