"""Whether a stored page is up to date: the inputs of a page (its source, the ``jtc_utils`` modules it can run, found
by reading their imports, the zoo and the requirements), their fingerprint, and the data files the page recorded.

A page is up to date when the fingerprint of its inputs is the one it recorded *and* its data files are the ones it
wrote (:func:`up_to_date`); :mod:`jtc_utils.book.build.runner` executes the pages that are not.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from jtc_utils.core.infra.cache import file_fingerprint
from jtc_utils.core.infra.paths import BOOK_DIR, NOTEBOOKS_DIR, ROOT, ZOO_DIR
from jtc_utils.core.models import catalogue
from jtc_utils.evidence import registry

PACKAGE = "jtc_utils"


# trained lenses (``zoo/lenses``) are inputs only of the pages that import the lens package
LENS_ARTIFACTS, LENS_PACKAGE = "lenses", "jtc_utils.lenses"


def _module_file(module: str) -> Path | None:
    """The source file of a ``jtc_utils`` module or subpackage, or None if there is none."""
    base = ROOT.joinpath(*module.split("."))
    for f in (base.with_suffix(".py"), base / "__init__.py"):
        if f.is_file():
            return f
    return None


def _module_name(f: Path) -> str:
    parts = list(f.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def package_imports(f: Path):
    """``(module, bound name, names taken, node)`` for every import of a ``jtc_utils`` module anywhere in file ``f``
    (function-level imports included), relative imports resolved: ``from X import y`` gives ``X.y`` where that is a
    module of the package, else ``X`` with ``[y]`` taken from it. The one import reader: the closure of a page
    (:func:`package_closure`) and the layout tests read imports through it."""
    import ast

    try:
        tree = ast.parse(f.read_text(), filename=str(f))
    except SyntaxError as e:  # one line naming the place, not a traceback from here
        raise ValueError(f"{f}, line {e.lineno}: {e.msg}: fix the syntax error there and run again") from None
    here = _module_name(f) if f.is_relative_to(ROOT / PACKAGE) else ""
    package = here if f.name == "__init__.py" else here.rpartition(".")[0]
    ours = lambda m: m == PACKAGE or m.startswith(PACKAGE + ".")  # noqa: E731
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if ours(a.name):
                    yield a.name, a.asname or a.name, [], node
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            if not ours(base):
                continue
            for a in node.names:
                full = f"{base}.{a.name}"
                if _is_module(full):
                    yield full, a.asname or a.name, [], node
                else:
                    yield base, a.asname or a.name, [a.name], node


def _imports(f: Path) -> set[str]:
    """Every ``jtc_utils`` module a file imports (see :func:`package_imports`); the one registry's also the modules
    of the papers, which plug in by name (:data:`jtc_utils.evidence.registry.PAPERS`)."""
    found = {module for module, _, _, _ in package_imports(f)}
    if f == _module_file(registry.__name__):
        found |= set(registry.PAPERS.values())
    return found


def package_closure(source: Path) -> list[Path]:
    """The ``jtc_utils`` source files a notebook can run: the modules it imports, what they import, and so on
    (a module's parent packages included, since importing ``a.b`` runs ``a/__init__.py``)."""
    seen: dict[str, Path] = {}
    todo = list(_imports(source))
    while todo:
        mod = todo.pop()
        parts = mod.split(".")
        for i in range(1, len(parts) + 1):
            name = ".".join(parts[:i])
            f = _module_file(name)
            if f is None or name in seen:
                continue
            seen[name] = f
            todo.extend(_imports(f))
    return sorted(seen.values())


def _input_files(name: str) -> list[Path]:
    source = NOTEBOOKS_DIR / f"{name}.py"
    package = package_closure(source)
    lenses = any(_module_name(f) == LENS_PACKAGE for f in package)
    zoo = sorted(
        p
        for p in ZOO_DIR.rglob("*")
        if p.is_file()
        and not {"_work"} & set(p.parts)
        and not p.name.endswith(".tmp")
        and not catalogue.staged(p)
        and (lenses or LENS_ARTIFACTS not in p.relative_to(ZOO_DIR).parts)
    )
    return [source, ROOT / "requirements.txt", *package, *zoo]


def code_fingerprint(source: Path) -> str:
    """What of a chapter's source its outputs depend on: its code cells (source and cell metadata, such as the
    tags) in order. The markdown cells are the prose around them: editing prose changes no output, so it does not
    make a page stale; the runner copies the new prose into the stored page instead (:func:`refresh_prose`)."""
    import json

    import jupytext

    h = hashlib.sha256()
    for cell in jupytext.read(source).cells:
        if cell.cell_type == "code":
            h.update(json.dumps([cell.source, cell.metadata], sort_keys=True, default=str).encode())
    return h.hexdigest()


def inputs_fingerprint(name: str, profile: str) -> str:
    """What a chapter's outputs depend on: its code (:func:`code_fingerprint`), the ``jtc_utils`` modules it can
    run (its import closure, :func:`package_closure`), the pinned requirements, every file of the zoo (weights,
    configs, tokenizers; the trained lenses only for pages that import the lens package) and the profile. A stored
    page with the same fingerprint is up to date (provided its data files are the ones it recorded, see
    :func:`up_to_date`)."""

    source = NOTEBOOKS_DIR / f"{name}.py"
    h = hashlib.sha256(f"{name}/{profile}".encode())
    for f in _input_files(name):
        h.update(str(f.relative_to(ROOT) if f.is_relative_to(ROOT) else f.name).encode())
        h.update((code_fingerprint(f) if f == source else file_fingerprint(f)).encode())
    return h.hexdigest()


def data_dir() -> Path:
    return BOOK_DIR / "data"


def page_record(name: str) -> dict | None:
    """What a stored page says about itself (``metadata.jtc``: inputs fingerprint, profile, data files with their
    SHA-256), or None when there is no page."""
    import nbformat

    page = BOOK_DIR / f"{name}.ipynb"
    if not page.exists():
        return None
    return dict(nbformat.read(page, as_version=4).metadata.get("jtc", {}))


def data_mismatches(record: dict, folder: Path | None = None) -> list[str]:
    """The data files a page recorded that are missing from ``folder`` (default: the book's data) or differ from
    what the page saw."""
    folder = data_dir() if folder is None else folder
    out = []
    for fname, digest in (record.get("data") or {}).items():
        f = folder / fname
        if not f.exists():
            out.append(f"{fname} is missing")
        elif file_fingerprint(f) != digest:
            out.append(f"{fname} differs from the page")
    return out


def up_to_date(name: str, profile: str) -> bool:
    record = page_record(name)
    if not record or "data" not in record:
        return False
    return record.get("inputs") == inputs_fingerprint(name, profile) and not data_mismatches(record)
