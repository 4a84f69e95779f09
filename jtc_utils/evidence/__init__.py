"""Evidence: the figure registry every paper registers into, the figure data in book/data, the lexicon and verdict statistics, and the claims framework. Imports the core only."""
