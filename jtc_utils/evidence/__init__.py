"""Evidence: the one registry every paper plugs into (:mod:`.registry`), the figure path and data
(:mod:`.figure_registry`, :mod:`.figdata`), the verdict statistics, claims and exercise checks. Imports the core only;
it names the papers' modules in one literal table, read on first use."""
