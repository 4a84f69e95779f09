"""The package's layout, read from its source: layers that import one way, no module reaches into another's private
names, no import cycle (a function-level import included), one figure registry and one ``Chapter`` for every paper,
every benchmark in ``make bench``, and every subpackage in a built wheel."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import jupytext
import pytest

from jtc_utils.book.build import runner, staleness
from jtc_utils.core.infra.paths import NOTEBOOKS_DIR, ROOT
from jtc_utils.core.data.setting import Setting
from jtc_utils.evidence import figure_registry, registry

PKG = ROOT / "jtc_utils"


def _modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        name = ".".join(p.relative_to(ROOT).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = p
    return out


MODULES = _modules()


def _imports(name: str, path: Path):
    """``(imported module, bound name, names taken from it, node)`` for every import of a jtc_utils module in
    ``path`` (the book's one import reader, jtc_utils.book.build.staleness)."""
    return staleness.package_imports(path)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_module_reaches_into_another_modules_private_names():
    found = []
    for name, path in MODULES.items():
        aliases = {}
        for target, alias, taken, _ in _imports(name, path):
            found += [f"{name}: from {target} import {t}" for t in taken if _private(t) and target != name]
            if not taken:
                aliases[alias] = target
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and _private(node.attr)
                and aliases[node.value.id] != name
            ):
                found.append(f"{name}: {aliases[node.value.id]}.{node.attr}")
    assert not found, found


# the tests' reaches into a module's private names that stay, each with why no public name serves (issue 54, item 6)
TEST_REACHES = {
    "jtc_utils.core.data.real_text._build": "clears the in-process cache of the built sentences, to rebuild them "
    "without the package",
    "jtc_utils.linearity.studies._study": "clears the in-process cache of a model's study, so that a second "
    "computation starts from nothing",
    "jtc_utils.core.models.real_models._gguf_bar_disabled": "the progress bar's switch of the GGUF reader, checked in "
    "both positions",
    "jtc_utils.core.models.real_models._write_converted": "replaced to interrupt the conversion half-way",
    "jtc_utils.core.analysis.submodules._replacements": "the stand-in modules themselves, checked against the maps "
    "they hold",
    "jtc_utils.core.analysis.submodules._per_sample": "replaced to count how often the per-sample numbers are computed",
    "jtc_utils.book.build.staleness._input_files": "the files a page's fingerprint reads, checked to leave a staged "
    "lens out",
    "jtc_utils.core.models.catalogue._zoo_files": "the files the zoo's manifest lists, checked to leave a staged lens "
    "out",
}


def test_the_tests_reach_no_private_name_but_the_stated_ones():
    found = set()
    for path in (ROOT / "tests").rglob("*.py"):
        aliases = {}
        for target, alias, taken, _ in staleness.package_imports(path):
            found |= {f"{target}.{t}" for t in taken if _private(t)}
            if not taken:
                aliases[alias] = target
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and _private(node.attr)
            ):
                found.add(f"{aliases[node.value.id]}.{node.attr}")
    assert found <= set(TEST_REACHES), sorted(found - set(TEST_REACHES))
    assert set(TEST_REACHES) <= found, f"no longer reached (remove them): {sorted(set(TEST_REACHES) - found)}"


def test_no_import_cycle_even_through_function_level_imports():
    graph = {
        name: {t for t, _, _, _ in _imports(name, path) if t in MODULES and t != name} for name, path in MODULES.items()
    }
    # a package's __init__ re-exporting its modules is not a cycle with them
    graph = {
        n: {t for t in ts if not (n.startswith(t + ".") and MODULES[t].name == "__init__.py")}
        for n, ts in graph.items()
    }
    state, stack = {}, []

    def visit(n):
        state[n] = "open"
        stack.append(n)
        for t in sorted(graph[n]):
            if state.get(t) == "open":
                pytest.fail("import cycle: " + " -> ".join(stack[stack.index(t) :] + [t]))
            if t not in state:
                visit(t)
        stack.pop()
        state[n] = "done"

    for n in sorted(graph):
        if n not in state:
            visit(n)


# the layers, bottom up: a module imports only from its own package and from layers below its own; two packages on
# one layer do not import each other. The four papers stand side by side on one floor: what two of them share (the
# early-exit rule, the sub-module maps) lives in the core below them.
PAPERS = ("jtc", "lenses", "ffn", "linearity")
LAYERS = {"base": 0, "embedded": 1, "core": 2, "training": 3, "evidence": 3, **dict.fromkeys(PAPERS, 4), "book": 5}


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and MODULES[module].name == "__init__.py") else ""


def test_every_module_sits_in_one_layer():
    """No module at the package's top level but its ``__init__``: every module belongs to a layer."""
    loose = sorted(n for n in MODULES if n != "jtc_utils" and _package(n) not in LAYERS)
    assert not loose, f"modules outside the layers {sorted(LAYERS)}: {loose}"


def test_imports_flow_one_way():
    """base <- embedded <- core <- training, evidence <- jtc, lenses, ffn, linearity <- book, read from every
    import statement (a function-level one included), with no exception: no paper package imports another."""
    found = []
    for name, path in MODULES.items():
        here = _package(name)
        for target, _, _, node in _imports(name, path):
            if target not in MODULES or target == "jtc_utils":
                continue
            there = _package(target)
            if there == here:
                continue
            if LAYERS[there] >= LAYERS[here]:
                found.append(f"{name} (layer {here}) imports {target} (layer {there}), line {node.lineno}")
    assert not found, found


# the folders of the core and of the book, bottom up: a folder imports only from itself and from folders on a lower
# floor. The core: infra <- models <- data <- analysis. The book: what a page shows and how pages are built stand side
# by side; the custom book and the classroom are built on both, and on neither of each other.
PARTS = {
    "core": {"infra": 0, "models": 1, "data": 2, "analysis": 3},
    "book": {"display": 0, "build": 0, "custom": 1, "classroom": 1},
}


@pytest.mark.parametrize("package", sorted(PARTS))
def test_a_layer_is_folders_by_concern_that_import_one_way(package):
    """Every module of the core and of the book sits in one of its concerns' folders, and imports only from its own
    folder and from those on a lower floor (a function-level import included)."""
    parts = PARTS[package]
    mods = [n for n in MODULES if _package(n) == package and n != f"jtc_utils.{package}"]
    loose = sorted(n for n in mods if n.split(".")[2] not in parts)
    assert not loose, f"{package} modules outside {sorted(parts)}: {loose}"
    found = []
    for name in mods:
        here = name.split(".")[2]
        for target, _, _, node in _imports(name, MODULES[name]):
            there = target.split(".")
            if target not in MODULES or there[:2] != ["jtc_utils", package] or len(there) < 3 or there[2] == here:
                continue
            if parts[there[2]] >= parts[here]:
                found.append(f"{name} ({here}) imports {target}, line {node.lineno}")
    assert not found, found


def test_one_figure_registry_serves_every_paper():
    reg = registry.get()
    assert {r.paper for r in reg.figures.values()} == set(reg.papers) == set(registry.PAPERS) == set(PAPERS)
    for pkg in ("lenses", "ffn", "linearity"):
        tree = ast.parse((PKG / pkg / "figures.py").read_text())
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert "figure" not in defined, (
            f"jtc_utils.{pkg}.figures has its own figure(): use figure_registry.compute_and_save"
        )
    with pytest.raises(ValueError, match="unknown figure 'nofig'.*registered"):
        figure_registry.compute("nofig", Setting.of("tiny"))


PAPER_PACKAGES = ("jtc", "lenses", "ffn", "linearity")


def test_a_figure_is_computed_drawn_and_captioned_on_one_path():
    """Issue 54, item 1: each drawn figure id is registered once with its computation, its drawing and its caption
    (a table, with its table), for every paper alike; no figure module picks its computation by a chain of ids, and
    the chapter and the custom book call the registry the same way for every paper (no branch on a paper or a
    figure id)."""
    for fig, r in registry.get().figures.items():
        assert (r.draw is None) == (r.caption is None), fig
        assert r.draw is None or r.table is None, f"{fig} is both drawn and a table"
    for p in registry.get().papers.values():
        assert set(p.drawn) | set(p.tabled) <= set(p.figures), p.name
        assert p.drawn, f"{p.name} draws no figure through the registry"
    chain = re.compile(r"\b(?:if|elif) fig(?:ure)? (?:==|in \()")
    found = [
        f"jtc_utils.{pkg}.figures: line {i}"
        for pkg in PAPER_PACKAGES
        for i, line in enumerate((PKG / pkg / "figures.py").read_text().splitlines(), 1)
        if chain.search(line)
    ]
    branch = re.compile(r"""\bpaper ==|== ["'](?:jtc|lenses|ffn|linearity)["']|\bfig(?:ure)? == ["']""")
    for name in ("display.chapter", "custom.command", "custom.pages"):
        path = PKG / "book" / f"{name.replace('.', '/')}.py"
        found += [
            f"jtc_utils.book.{name}: line {i}"
            for i, line in enumerate(path.read_text().splitlines(), 1)
            if chain.search(line) or branch.search(line)
        ]
        found += [
            f"jtc_utils.book.{name} imports {t}"
            for t in _module_level(f"jtc_utils.book.{name}", path)
            if re.match(r"jtc_utils\.(?:lenses|ffn|linearity)\.|jtc_utils\.jtc\.plots", t)
        ]
    assert not found, found


def test_every_book_data_record_is_written_through_the_registry():
    """Only the figure registry writes ``book/data`` (:func:`jtc_utils.evidence.figure_registry.save`): every record a
    page saves is a registered figure, computed by its registered function. The one other writer is the custom book's
    page (its model and text cards and its claims, saved into the custom book's own folder, never ``book/data``)."""
    call = re.compile(r"\bfigdata\.save\(")
    writers = sorted(name for name, path in MODULES.items() if call.search(path.read_text()))
    assert writers == ["jtc_utils.book.custom.pages", "jtc_utils.evidence.figure_registry"], writers
    pages = sorted(p.stem for p in NOTEBOOKS_DIR.glob("*.py") if call.search(p.read_text()))
    assert not pages, f"notebooks that save numbers outside the registry: {pages}"
    stray = sorted(f.stem for f in (ROOT / "book" / "data").glob("*.json") if f.stem not in registry.get().figures)
    assert not stray, f"book/data records that no paper registers: {stray}"


def test_no_module_outside_a_paper_package_names_a_figure_id_of_that_paper():
    """A figure id is named only in its paper's package: the evidence and book layers reach figures through the
    registry (and the paper packages' tables), never by their ids. A dict key or a subscript that happens to spell an
    id (a record's ``"claims"`` field) is a field name, not a reference."""
    owner = {fig: r.paper for fig, r in registry.get().figures.items()}
    found = []
    for name, path in MODULES.items():
        if _package(name) not in ("evidence", "book"):
            continue
        tree = ast.parse(path.read_text())
        fields = {id(k) for n in ast.walk(tree) if isinstance(n, ast.Dict) for k in n.keys if k is not None}
        fields |= {id(n.slice) for n in ast.walk(tree) if isinstance(n, ast.Subscript)}
        found += [
            f"{name}: line {n.lineno} names {n.value!r} of jtc_utils.{owner[n.value]}"
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in owner and id(n) not in fields
        ]
    assert not found, found


@pytest.mark.parametrize("name", ["lenses", "ffn_subupdates", "secretly_linear"])
def test_a_related_papers_chapter_draws_its_figures_through_the_registry(name):
    """The chapters of the related papers draw no figure of their own: every drawing and caption is the one its
    paper registered (``figure`` draws it, ``chapter.show`` draws a view of it later on the page)."""
    source = (NOTEBOOKS_DIR / f"{name}.py").read_text()
    assert not re.search(r"^(?:plots\.|show\(|plt\.subplots)", source, re.M), name


@pytest.mark.parametrize("name", runner.notebook_names())
def test_no_notebook_defines_a_helper_the_book_layer_has(name):
    """Every chapter computes its figures and judges its claims through ``book.Chapter``."""
    nb = jupytext.read(NOTEBOOKS_DIR / f"{name}.py")
    for cell in nb.cells:
        if cell.cell_type == "code":
            defined = set(re.findall(r"^def (\w+)\(", cell.source, re.M))
            assert not defined & {"figure", "verdicts", "real_verdicts", "experiment"}, (name, defined)


def test_make_bench_runs_every_benchmark():
    make = (ROOT / "Makefile").read_text()
    target = re.search(r"^bench:.*?\n((?:\t.*\n)+)", make, re.M).group(1)
    run = set(re.findall(r"benchmarks/(\w+\.py)", target))
    benches = {p.name for p in (ROOT / "benchmarks").glob("*.py")} - {"noise.py"}  # noise.py: `make noise`
    assert run == benches, f"not in `make bench`: {benches - run}; not a benchmark file: {run - benches}"


def test_a_built_wheel_holds_every_subpackage():
    """``pip install .`` (not editable) must ship the subpackages: the build's package search finds each of them."""
    from setuptools import find_packages

    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    found = set(find_packages(str(ROOT), include=conf["include"]))
    folders = {".".join(p.parent.relative_to(ROOT).parts) for p in PKG.rglob("__init__.py")}
    assert found == folders


_HEAVY = re.compile(r"(?m)^(?:import|from) (?:torch|transformers|matplotlib|seaborn|plotly|sklearn)\b")


def _module_level(name: str, path: Path) -> set[str]:
    return {t for t, _, _, node in _imports(name, path) if node.col_offset == 0 and t in MODULES}


def test_a_function_imports_a_module_of_the_package_only_to_defer_a_heavy_one():
    """Imports sit at the top of a module; a function may import another module of the package only where that
    module would load torch, transformers or a plotting library at import time and the importing module does not."""
    top = {name: _module_level(name, path) for name, path in MODULES.items()}
    heavy = {name for name, path in MODULES.items() if _HEAVY.search(path.read_text())}

    def loads_heavy(name, seen=None):
        seen = set() if seen is None else seen
        if name in heavy:
            return True
        seen.add(name)
        return any(loads_heavy(t, seen) for t in top[name] if t not in seen)

    found = []
    for name, path in MODULES.items():
        for target, _, _, node in _imports(name, path):
            if node.col_offset == 0 or target not in MODULES:  # a statement of the module itself
                continue
            if not (loads_heavy(target) and not loads_heavy(name)):
                found.append(f"{name}: line {node.lineno} imports {target} inside a function")
    assert not found, found


def test_every_module_and_function_the_readme_names_exists():
    """The README's module map and figure-to-function table name modules and functions by their dotted path
    (``core.analysis.readout.per_sample``, ``jtc_utils.book.display.chapter.Chapter``); each must resolve in the
    package."""
    import importlib

    text = (ROOT / "README.md").read_text()
    layers = "|".join(LAYERS)
    names = set(re.findall(rf"`((?:jtc_utils\.)?(?:{layers})\.[A-Za-z_][\w.]*)`", text))
    assert len(names) > 20, "the README names too few functions for this test to mean anything"
    missing = []
    for name in sorted(names):
        parts = (name if name.startswith("jtc_utils.") else "jtc_utils." + name).split(".")
        for i in range(len(parts), 1, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
                break
            except ImportError:
                continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            missing.append(name)
    assert not missing, f"the README names what the package does not have: {missing}"


# attribute names of particular model families in Hugging Face's modules (``lm_head``, which every causal LM of the
# library has, is not one); only the core's block runners and adapter may read them
FAMILY_ATTRIBUTES = {
    "transformer",
    "ln_f",
    "ln_1",
    "ln_2",
    "c_fc",
    "c_attn",
    "c_proj",
    "gate_proj",
    "up_proj",
    "down_proj",
    "self_attn",
    "input_layernorm",
    "post_attention_layernorm",
    "wte",
    "wpe",
    "final_layer_norm",
    "fc1",
    "fc2",
    "embed_tokens",
}


def test_no_module_outside_the_core_reads_a_model_familys_attribute_names():
    found = [
        f"{name}:{node.lineno} .{node.attr}"
        for name, path in MODULES.items()
        if not name.startswith("jtc_utils.core")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr in FAMILY_ATTRIBUTES
    ]
    assert not found, found


def test_no_function_body_has_two_blank_lines_in_a_row():
    """Two blank lines inside an indented block were left where imports moved (issue 54): one is the style."""
    found = []
    for name, path in MODULES.items():
        lines = path.read_text().split("\n")
        for i in range(len(lines) - 3):
            a, b, c, d = lines[i : i + 4]
            if a.startswith(" ") and a.strip() and b == c == "" and d.startswith(" ") and d.strip():
                found.append(f"{name}:{i + 2}")
    assert not found, found


def test_no_registry_is_filled_or_built_by_importing_a_module():
    """Importing every module of the package builds no registry: the one registry is built on first use, from the
    literal table of the papers (:func:`jtc_utils.evidence.registry.get`), and then holds every paper's figures,
    claims and exercise checks. Run in a fresh interpreter, so that nothing imported before counts."""
    import subprocess
    import sys

    code = "\n".join(
        [
            *(f"import {n}" for n in sorted(MODULES)),
            "from jtc_utils.evidence import registry",
            "print(registry.get.cache_info().currsize)",
            "r = registry.get()",
            "print([len(r.figures), len(r.claim_checks), len(r.exercise_checks), len(r.titles), "
            "len(r.absent), len(r.resampled_over), len(r.constants), len(r.ahead), len(r.custom)])",
        ]
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    built, sizes = (eval(line) for line in out.stdout.splitlines()[-2:])
    assert built == 0, "importing the package built the registry"
    assert all(sizes), f"a table of the registry is empty: {sizes}"


def _module_level_names(tree) -> set[str]:
    names = set()
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


MUTATORS = {"update", "append", "extend", "add", "setdefault", "insert", "pop", "clear", "discard", "remove"}


def test_no_table_is_filled_after_it_is_written():
    """A module-level table is one literal: no statement at a module's top level adds to a table it named before
    (``TABLE.update(...)``, ``TABLE[key] = ...``), so that what a lookup finds never depends on what ran first."""
    found = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text())
        tables = _module_level_names(tree)
        for node in tree.body:
            call = node.value if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) else None
            if (
                call is not None
                and isinstance(call.func, ast.Attribute)
                and call.func.attr in MUTATORS
                and isinstance(call.func.value, ast.Name)
                and call.func.value.id in tables
            ):
                found.append(f"{name}: line {node.lineno} fills {call.func.value.id}")
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found += [
                    f"{name}: line {node.lineno} fills {t.value.id}"
                    for t in targets
                    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in tables
                ]
    assert not found, found


def _containers(tree) -> set[str]:
    """The module-level names bound to a dict, list or set (a display, a comprehension or a call of the type)."""
    kinds = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)
    out = set()
    for node in tree.body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(value, kinds) or (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in ("dict", "list", "set", "defaultdict")
        ):
            out |= _module_level_names(ast.Module(body=[node], type_ignores=[]))
    return out


def _bound(target) -> set[str]:
    """The names an assignment binds (``x``, ``x, y``), not those it writes into (``x[k]``, ``x.a``)."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*map(_bound, target.elts))
    return set()


def test_process_state_lives_in_an_object_that_owns_it():
    """No ``global`` statement, and no function fills a module-level dict, list or set: what must live for a process
    (the device chosen, a checkpoint folder, a page's figure numbering, the files a page wrote, counts made once) is
    held by one object with methods (:class:`jtc_utils.base.state.Setting`, :class:`~jtc_utils.base.state.Memo`,
    :class:`jtc_utils.book.display.chapter.Numbering`), never a bare table that a lookup depends on."""
    found = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text())
        tables = _containers(tree)
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            local = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
            local |= {
                name
                for n in ast.walk(fn)
                if isinstance(n, (ast.Assign, ast.AnnAssign, ast.For))
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                for name in _bound(t)
            }
            owned = tables - local
            for n in ast.walk(fn):
                if isinstance(n, ast.Global):
                    found.append(f"{name}.{fn.name}: line {n.lineno} global {', '.join(n.names)}")
                elif (
                    isinstance(n, ast.Call)
                    and isinstance(n.func, ast.Attribute)
                    and n.func.attr in MUTATORS
                    and isinstance(n.func.value, ast.Name)
                    and n.func.value.id in owned
                ):
                    found.append(f"{name}.{fn.name}: line {n.lineno} fills {n.func.value.id}")
                elif isinstance(n, (ast.Assign, ast.AugAssign)):
                    targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                    found += [
                        f"{name}.{fn.name}: line {n.lineno} fills {t.value.id}"
                        for t in targets
                        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in owned
                    ]
    assert not found, found


def test_the_book_layer_imports_no_paper_and_only_the_registry_names_them():
    """The book knows no paper: no module of the book layer imports a paper package (a function-level import
    included); the papers plug in through the literal table :data:`jtc_utils.evidence.registry.PAPERS`, the one
    place that names their modules, each of which declares its ``PAPER``."""
    found = [
        f"{name} imports {target}, line {node.lineno}"
        for name, path in MODULES.items()
        if _package(name) == "book"
        for target, _, _, node in _imports(name, path)
        if target in MODULES and _package(target) in PAPERS
    ]
    assert not found, found
    assert list(registry.PAPERS) == list(PAPERS)
    assert all(MODULES.get(module) and module == f"jtc_utils.{p}.paper" for p, module in registry.PAPERS.items())
    dynamic = sorted(name for name, path in MODULES.items() if "import_module(" in path.read_text())
    assert dynamic == ["jtc_utils.evidence.registry"], dynamic


def test_no_paper_package_imports_another():
    found = [
        f"{name} imports {target}"
        for name, path in MODULES.items()
        if _package(name) in PAPERS
        for target, _, _, _ in _imports(name, path)
        if target in MODULES and _package(target) in PAPERS and _package(target) != _package(name)
    ]
    assert not found, found


def test_no_import_is_made_only_for_its_side_effect():
    sources = [*MODULES.values(), *(ROOT / "notebooks").glob("*.py"), *(ROOT / "tests").rglob("*.py")]
    pattern = re.compile(r"^\s*from jtc_utils\.(jtc|lenses|ffn|linearity) import .*noqa: F401", re.M)
    assert not [str(p) for p in sources if pattern.search(p.read_text())]


def test_one_block_recorder():
    """Recording the vectors inside the blocks is done once (``core.analysis.hidden.block_vectors``): the FFN chapter
    and section 6 both read it (issue 54 found two recorders)."""
    users = sorted(name for name, path in MODULES.items() if "record=True" in path.read_text())
    assert users == ["jtc_utils.core.analysis.hidden"], users


def test_one_padding_helper():
    """Token ids are padded into a batch by one helper (``core.models.batching.right_pad``, with ``pad_id``'s one pad-id
    rule); the hidden states' batches go through it (issue 54 found a copy and hand-set pad ids in the zoo)."""
    defs = sorted(
        f"{name}.{node.name}"
        for name, path in MODULES.items()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and "pad" in node.name
    )
    assert defs == [
        "jtc_utils.core.analysis.hidden.padded_batches",
        "jtc_utils.core.models.batching.pad_id",
        "jtc_utils.core.models.batching.right_pad",
    ], defs
    assert "right_pad(" in (PKG / "core" / "analysis" / "hidden.py").read_text()


def test_one_training_loop():
    """Gradient steps are taken by the shared loop (``training.loop``: ``optimiser_step`` inside ``loop``); the
    low-rank lenses' epochs with early stopping per pair are the one loop of its own, and say why."""
    users = sorted(name for name, path in MODULES.items() if ".backward()" in path.read_text())
    assert users == ["jtc_utils.lenses.lowrank", "jtc_utils.training.loop"], users
    assert "its own loop" in (PKG / "lenses" / "lowrank.py").read_text()


def test_one_html_build_and_one_import_reader():
    """The book and a reader's custom book are built by one function, and imports are read by one (issue 54 found two
    of each)."""
    # each source without whitespace, so that a call the formatter spread over lines is still found
    sources = {name: re.sub(r"\s+", "", path.read_text()) for name, path in MODULES.items()}
    sources["tests.test_layout"] = re.sub(r"\s+", "", Path(__file__).read_text())
    build, reader = '"build",' + "str(", "ast." + "ImportFrom"  # split, so that this test does not match itself
    builds = sorted(n for n, text in sources.items() if build in text)
    readers = sorted(n for n, text in sources.items() if reader in text)
    assert builds == ["jtc_utils.book.build.website"], builds
    assert readers == ["jtc_utils.book.build.staleness"], readers


# the book layer's modules stay a concern each (issue 54 split custom.py, 717, and runner.py, 702)
MODULE_LINES = 500


def test_no_module_mixes_concerns_into_one_long_file():
    long = {name: n for name, path in MODULES.items() if (n := len(path.read_text().splitlines())) > MODULE_LINES}
    assert not long, f"modules over {MODULE_LINES} lines: {long}"


def _string_test(node) -> bool:
    """Whether an ``if`` test compares ``kind`` or ``fig`` with a string (or a tuple of strings)."""

    def strings(n):
        return (isinstance(n, ast.Constant) and isinstance(n.value, str)) or (
            isinstance(n, (ast.Tuple, ast.List, ast.Set)) and n.elts and all(strings(e) for e in n.elts)
        )

    return (
        isinstance(node, ast.Compare)
        and isinstance(node.left, ast.Name)
        and node.left.id in ("kind", "fig")
        and any(strings(c) for c in node.comparators)
    )


def test_no_paper_package_picks_a_computation_by_an_if_chain_on_a_figure_id_or_kind():
    """A paper's figures are tables (id or kind -> its computation, its drawing): no function of a paper package
    tests ``kind`` or ``fig`` against strings in three ``if`` statements or more."""
    found = []
    for name, path in MODULES.items():
        if _package(name) not in PAPERS:
            continue
        for fn in ast.walk(ast.parse(path.read_text())):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                tests = [n for n in ast.walk(fn) if isinstance(n, ast.If) and _string_test(n.test)]
                if len(tests) >= 3:
                    found.append(f"{name}.{fn.name}: {len(tests)} ifs on a figure id or kind, line {fn.lineno}")
    assert not found, found


def test_every_kind_of_a_jtc_figure_has_its_computation_and_a_drawing_or_a_table():
    from jtc_utils.jtc import figures, plots

    kinds = {kind for kind, _, _ in figures.FIGURES.values()}
    assert kinds == set(figures.KINDS), kinds ^ set(figures.KINDS)
    tabled = {figures.FIGURES[f][0] for f in plots.TABLED}
    assert set(plots.DRAWINGS) <= kinds and not set(plots.DRAWINGS) & tabled  # (plausibility: the page's own table)


# how a status begins in words (a verdict, a check, or why there is none): no module tests text against them
STATUS_WORDS = ("not ", "no ", "holds", "fails", "undecided", "check ", "mixed")


def _constants(node) -> list:
    """The string constants of an argument: a constant, or a tuple, list or set of them."""
    if isinstance(node, ast.Constant):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant)]
    return []


def test_no_lens_method_or_claim_status_is_read_from_its_text():
    """A lens's method is a :class:`jtc_utils.lenses.registry.Method` (compared as a member or by ``trained``), and
    a claim's status is its record's ``status`` field: no ``method`` is compared with a string, and no status is
    recovered from a record's display text (``ours`` or a verdict in words) with ``startswith`` or ``endswith``."""
    found = []
    for name, path in MODULES.items():
        for n in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(n, ast.Compare)
                and isinstance(n.left, ast.Attribute)
                and n.left.attr == "method"
                and any(
                    _string_test(ast.Compare(left=ast.Name("kind"), ops=n.ops, comparators=[c])) for c in n.comparators
                )
            ):
                found.append(f"{name}: line {n.lineno} compares a lens method with a string")
            if (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr in ("startswith", "endswith")
                and n.args
                and any(str(w).lower().startswith(STATUS_WORDS) for w in _constants(n.args[0]))
            ):
                found.append(f"{name}: line {n.lineno} reads a status from text")
    assert not found, found


def test_no_curve_key_or_lens_label_is_split_to_recover_its_parts():
    """A trained curve's key (``label/seedN``) is written by one function, :func:`jtc_utils.evidence.verdicts.seed_key`,
    and every reader builds the keys it looks for with it; a lens's label (``rrr_4``) is written by
    :func:`jtc_utils.lenses.base.lens_label` and read back by :func:`jtc_utils.lenses.registry.label_of` alone: no
    other module spells the ``/seed`` form or splits a label at ``/`` or ``_``."""
    found = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text())
        docs = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef))
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        for n in ast.walk(tree):
            if (
                isinstance(n, ast.Constant)
                and isinstance(n.value, str)
                and "/seed" in n.value
                and id(n) not in docs
                and name != "jtc_utils.evidence.verdicts"
            ):
                found.append(f"{name}: line {n.lineno} spells a seed key")
            if (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr in ("split", "rsplit")
                and n.args
                and isinstance(n.args[0], ast.Constant)
                and n.args[0].value == "_"
                and _package(name) == "lenses"
            ):
                found.append(f"{name}: line {n.lineno} splits a label at '_'")
    assert not found, found


def test_one_table_of_pages_agrees_with_the_book_and_the_papers():
    """The pages are declared once (:data:`jtc_utils.book.build.pages.PAGES`): the same pages, in the same order, as the
    book's table of contents and its notebooks; every page a paper declares work ahead of, figures or claims for in
    a custom book is one of them; no other module of the book layer spells a page's name (the page ``lenses`` shares
    its name with its paper)."""
    from jtc_utils.book.build import pages

    names = [p.name for p in pages.PAGES]
    assert names == runner.notebook_names()
    reg = registry.get()
    assert set(reg.ahead) == set(pages.AHEAD)
    assert set(reg.custom) | set(reg.custom_claims) <= {p.name for p in pages.CUSTOM}
    assert all(p.cost is not None for p in pages.CUSTOM if not p.skip) and pages.page(pages.CLAIMS).cost is not None
    found = [
        f"{name}: line {n.lineno} names the page {n.value!r}"
        for name, path in MODULES.items()
        if _package(name) == "book" and name != "jtc_utils.book.build.pages"
        for n in ast.walk(ast.parse(path.read_text()))
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and n.value in names
        and n.value not in registry.PAPERS
    ]  # "lenses" is a paper's name too (its package, its zoo folder)
    assert not found, found


def test_one_setting_object_travels_from_the_chapter_to_every_computation():
    """A figure's profile, sizes and seed travel as one :class:`jtc_utils.core.data.setting.Setting`: every registered
    computation takes ``(fig, s)``, and no function above the core takes the four loose (the chapter's own
    parameters, which it resolves into a setting, and :meth:`Setting.of` excepted)."""
    import inspect

    wide = [
        n for n, r in registry.get().figures.items() if list(inspect.signature(r.compute).parameters) != ["fig", "s"]
    ]
    assert not wide, f"registered computations not of (fig, s): {wide}"
    loose = {"profile", "n_train", "n_val", "seed"}
    found = [
        f"{name}.{fn.name}"
        for name, path in MODULES.items()
        if _package(name) not in ("base", "embedded", "core")
        for fn in ast.walk(ast.parse(path.read_text()))
        if isinstance(fn, ast.FunctionDef) and loose <= {a.arg for a in fn.args.args + fn.args.kwonlyargs}
    ]
    assert found == ["jtc_utils.book.display.chapter.__init__"], found


def test_each_package_says_in_three_lines_what_lives_there():
    long = {
        name: n
        for name, path in MODULES.items()
        if path.name == "__init__.py"
        and (n := len((ast.get_docstring(ast.parse(path.read_text())) or "").splitlines())) > 3
    }
    empty = [
        name
        for name, path in MODULES.items()
        if path.name == "__init__.py" and not ast.get_docstring(ast.parse(path.read_text()))
    ]
    assert not long and not empty, (long, empty)


def test_every_folder_of_the_package_is_a_package_that_git_keeps():
    """Every folder of ``jtc_utils`` with modules has an ``__init__.py``, and git tracks every module (an ignore rule
    that catches a source file leaves a fresh clone with a namespace package and no docstring)."""
    import shutil
    import subprocess

    folders = {p.parent for p in PKG.rglob("*.py") if "__pycache__" not in p.parts}
    assert not [str(f) for f in folders if not (f / "__init__.py").is_file()]
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    ignored = subprocess.run(
        ["git", "ls-files", "--others", "--ignored", "--exclude-standard", "--", "jtc_utils"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert not [f for f in ignored if f.endswith(".py")], ignored


MODULE_DOC_LINES = 10


def test_each_module_says_what_it_does_in_ten_lines_at_most():
    """A module's docstring is a summary of what it does now; the details sit with the function or constant they
    describe, and history is in git."""
    docs = {name: ast.get_docstring(ast.parse(path.read_text()), clean=False) for name, path in MODULES.items()}
    long = {name: n for name, d in docs.items() if d and (n := len(d.strip("\n").splitlines())) > MODULE_DOC_LINES}
    assert not long, f"module docstrings over {MODULE_DOC_LINES} lines: {long}"
    bare = sorted(name for name, d in docs.items() if not d)
    assert not bare, f"modules that do not say what they do: {bare}"


# a page that reads a parameter the runner gives every page, without using it (with why)
IGNORED_PARAMETERS = {("embedded_world", "profile"): "the page describes the embedded world whatever the profile"}


@pytest.mark.parametrize("name", runner.notebook_names())
def test_every_chapter_has_one_header(name):
    """One shape of parameters cell: the lines of :data:`jtc_utils.book.display.chapter.PARAMETERS` a chapter takes,
    in that order; every parameter it declares is read by its code (a computing chapter hands them to its
    ``Chapter``, which chooses the device), and no chapter sets the device itself."""
    import jupytext

    from jtc_utils.book.display.chapter import PARAMETERS

    nb = jupytext.read(NOTEBOOKS_DIR / f"{name}.py")
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1, name
    lines = cells[0].source.splitlines()
    names = [line.split("=")[0].strip() for line in lines]
    assert set(names) <= set(PARAMETERS), (name, set(names) - set(PARAMETERS))
    assert lines == [PARAMETERS[n] for n in PARAMETERS if n in names], name
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code" and c is not cells[0])
    unread = [n for n in names if not re.search(rf"\b{n}\b", code) and (name, n) not in IGNORED_PARAMETERS]
    assert not unread, f"{name} declares parameters it never reads: {unread}"
    assert "devices.use(" not in code and "core.infra import device" not in code, name
    call = re.search(r"\bChapter\(([^)]*)\)", code)
    if call:
        handed = [
            n
            for n in names
            if n not in re.findall(r"\b(\w+)=\w+", call.group(1))
            and not re.search(rf"(?<![\w=]){n}\b(?!=)", call.group(1))
        ]
        assert not handed, f"{name} does not hand {handed} to its Chapter"


def test_the_benchmarks_and_notebooks_reach_names_that_exist():
    """The benchmarks run by hand, outside the test suite: every ``jtc_utils`` name they (and the notebooks' sources)
    import, and every attribute they read of a ``jtc_utils`` module they import, exists (a rename that missed them is
    found here, not by the next person timing something). Imports are read by the one import reader."""
    import importlib

    from jtc_utils.book.build.staleness import package_imports

    missing = []
    files = sorted((ROOT / "benchmarks").glob("*.py")) + sorted((ROOT / "notebooks").glob("*.py"))
    for path in files:
        modules = {}
        for module, bound, taken, node in package_imports(path):
            imported = importlib.import_module(module)
            missing += [f"{path.name}:{node.lineno} {module}.{name}" for name in taken if not hasattr(imported, name)]
            if not taken:
                modules[bound] = imported
        for n in ast.walk(ast.parse(path.read_text())):
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in modules:
                if isinstance(n.ctx, ast.Load) and not hasattr(modules[n.value.id], n.attr):
                    missing.append(f"{path.name}:{n.lineno} {modules[n.value.id].__name__}.{n.attr}")
    assert not missing, missing
