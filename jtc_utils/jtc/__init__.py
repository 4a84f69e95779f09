"""The JTC paper (Din et al. 2023): its figures, claims and exercises, declared in ``paper``; its early exit and
sub-module shortcuts are the core's (``core.analysis.early_exit``, ``core.analysis.submodules``), which the related
papers read too."""
