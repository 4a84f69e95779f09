"""Training: the one loop (optimiser, schedule, checkpoints, resume) and the zoo's trainer. Imports the core only."""
