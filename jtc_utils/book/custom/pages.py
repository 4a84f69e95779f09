"""The custom book's pages: each chapter that applies to a reader's model as a generated py:percent
source (:func:`page_source`), executed by papermill as one transaction (:func:`execute_page`), what a page does in
its kernel (:class:`Run`), and the run of them all with the Jupyter Book around them (:func:`run`). The plan comes
from :mod:`jtc_utils.book.custom.plan`; the command is :mod:`jtc_utils.book.custom.command`."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
from functools import partial
from pathlib import Path

from jtc_utils.book.display import claim_tables

from jtc_utils.book.build import executed, runner, scheduling, staleness, website
from jtc_utils.book.display.chapter import Chapter
from jtc_utils.book.custom.plan import Plan, absent, judged_claims, kind_of
from jtc_utils.book.build.pages import CLAIMS, CUSTOM, Page
from jtc_utils.core.models import models
from jtc_utils.core.data import profiles, user_text
from jtc_utils.core.infra.paths import ROOT, atomic_write_text
from jtc_utils.evidence import claims, figdata, findings


def getter(results: dict, data_dir, missing: dict):
    """A claims ``get`` for the custom book: the numbers computed on this page (``results``), else those another
    page of the same custom book saved in ``data_dir``; a figure the model does not have raises
    :class:`~jtc_utils.evidence.claims.NotComputed` with the reason (``missing``). Never the committed book's."""
    data_dir = Path(data_dir)

    def get(fig):
        if fig in results:
            return results[fig]
        f = data_dir / f"{fig}.json"
        if fig in missing or not f.exists():
            raise claims.NotComputed(missing.get(fig, f"{fig} has not been computed (its page has not run)"))
        return json.loads(f.read_text())["data"]

    return get


# ---------------------------------------------------------------------------------------------------------------
# the pages: generated py:percent sources, executed by papermill

SPEC = profiles.CUSTOM_SPEC  # in the output folder: the custom profile's spec


def page_source(page: Page, kind: str, model: str, skip: str | None) -> str:
    """The py:percent source of one page of the custom book."""
    head = (
        f"# # {page.title}\n#\n# On **{models.display_name(model)}** ({kind}), the reader's own text: the custom "
        f"profile."
    )
    cells = ["# %% [markdown]\n" + head]
    if skip:
        cells.append(f"# %% [markdown]\n# Skipped: {skip}.")
        return "\n\n".join(cells) + "\n"
    if page.omitted:
        cells.append(f"# %% [markdown]\n# Not here: {page.omitted}.")
    cells.append('# %% tags=["parameters", "remove-cell"]\ndata_dir = "data"  # this custom book\'s figure data')
    cells.append(
        "# %% tags=[\"remove-cell\"]\nfrom jtc_utils.book.custom import pages as custom_pages\n\n"
        f"page = custom_pages.Run({page.name!r}, data_dir)"
    )
    if page.about_the_model:
        cells.append("# %% [markdown]\n# The model and the text, as the book read them.")
        cells.append("# %%\npage.cards()")
    for fig in page.figures[kind]:
        cells.append(f"# %%\npage.figure({fig!r})")
    if page.claims.get(kind):
        cells.append("# %% [markdown]\n# The paper's claims, judged with the book's rules on these numbers.")
        cells.append(f"# %%\npage.verdicts({list(page.claims[kind])!r})")
    return "\n\n".join(cells) + "\n"


def claims_source(model: str) -> str:
    """The py:percent source of the custom book's claims page."""
    return (
        "\n\n".join(
            [
                f"# %% [markdown]\n# # The claims, judged for {models.display_name(model)}\n#\n"
                "# Every claim of Jump to Conclusions with the same rules as on every other profile;\n"
                "# a claim whose figures this model does not have gets no verdict and says why.",
                '# %% tags=["parameters", "remove-cell"]\ndata_dir = "data"',
                "# %% tags=[\"remove-cell\"]\nfrom jtc_utils.book.custom import pages as custom_pages\n\npage = "
                "custom_pages.Run('claims_verdicts', data_dir)",
                "# %%\npage.all_verdicts()",
            ]
        )
        + "\n"
    )


class Run:
    """What one page of the custom book does, in its kernel: the custom profile is the one the spec
    (:data:`jtc_utils.core.data.profiles.CUSTOM_ENV`) defines."""

    def __init__(self, name: str, data_dir):
        self.name, self.data_dir = name, Path(data_dir)
        # a page re-run by hand (in Jupyter, outside the runner, which points the kernel at a staging folder) writes
        # its figure data beside itself, never into the committed book's
        os.environ.setdefault("JTC_DATA_OUT", str(self.data_dir.resolve()))
        self.profile = profiles.get("custom")
        self.chapter = Chapter("custom")
        ad = models.adapter(self.profile.gpt[0])
        self.kind = kind_of(ad)
        self.missing = absent(self.kind, "news" in dict(self.profile.texts), ad.family)

    def cards(self) -> None:
        """The model card and each text's data card, saved as ``custom_cards``."""
        import pandas as pd
        from IPython.display import display

        ad = models.adapter(self.profile.gpt[0])
        n_train, n_val = self.profile.sizes
        model = {
            "model": self.profile.gpt[0],
            "family": ad.family,
            "kind": self.kind,
            "layers": ad.n_layers,
            "width": ad.d,
            "vocabulary": len(ad.tokenizer),
            "identity": ad.identity[:16],
        }
        texts = {domain: user_text.data_card(path, n_train, n_val) for domain, path in self.profile.texts}
        figdata.save("custom_cards", {"model": model, "texts": texts}, {"profile": "custom"})
        display(pd.Series(model, name="model").to_frame())
        for domain, card in texts.items():
            print(
                f"{domain}: {card['source']} (sha256 {card['sha256'][:16]}…), {card['train']:,} training and "
                f"{card['validation']:,} validation sentences"
            )
            display(pd.Series(card["counts"], name="sentences after each step").to_frame())

    def figure(self, fig: str) -> None:
        """Compute, save and show one figure on the reader's model: drawn with its caption, or shown as a table, as
        its paper registered it (the chapter's one path, :func:`jtc_utils.book.display.chapter.figure`)."""
        self.chapter.figure(fig)

    def verdicts(self, ids) -> None:
        """The claims ``ids`` judged on this page's numbers and the pages before (never the committed book's)."""
        from IPython.display import display

        get = getter(self.chapter.results, self.data_dir, self.missing)
        display(claim_tables.verdict_table(ids, get, "custom", "verdicts-custom-" + "-".join(ids), link=None))

    def all_verdicts(self) -> None:
        """Every JTC claim judged for the reader's model, saved as ``claims_custom``, with the summary line."""
        from IPython.display import display

        get = claims.memo(getter({}, self.data_dir, self.missing))
        records = [claims.check_any(c, get, "custom") for c in judged_claims()]
        figdata.save("claims_custom", records, {"profile": "custom", "model": self.profile.gpt[0]})
        print(findings.summary(records, "custom"))
        display(claim_tables.styled(records, "verdicts-custom-all", link=None))


def page_digest(plan: Plan, source: str) -> str:
    """What a page's outputs depend on: its source, the model's identity, the texts (their SHA-256) and sizes, and
    the book's code (the ``jtc_utils`` files it can run)."""
    h = hashlib.sha256(
        json.dumps(
            [source, plan.identity, plan.sizes, {d: user_text.fingerprint(p) for d, p in plan.texts.items()}]
        ).encode()
    )
    for f in sorted((ROOT / "jtc_utils").rglob("*.py")):
        h.update(f.read_bytes())
    return h.hexdigest()


def _up_to_date(page_file: Path, digest: str, data_dir: Path) -> bool:
    import nbformat

    if not page_file.exists():
        return False
    record = nbformat.read(page_file, as_version=4).metadata.get("jtc", {})
    return record.get("inputs") == digest and not staleness.data_mismatches(record, data_dir)


def execute_page(
    out: Path, name: str, source: str, digest: str, timeout: int = runner.CELL_TIMEOUT, device: str | None = None
) -> float | None:
    """Execute one generated page into ``out/<name>.ipynb`` as one transaction (:func:`runner.transaction`: its
    figure data into ``out/data`` only when every cell has passed); returns its seconds, or None when it was up to
    date (its inputs unchanged and its data as it recorded)."""
    import jupytext
    import nbformat

    data_dir, page_file = out / "data", out / f"{name}.ipynb"
    if _up_to_date(page_file, digest, data_dir):
        return None
    nb = jupytext.reads(source, fmt="py:percent")
    record = {"inputs": digest, "profile": "custom"}
    if not any(c.cell_type == "code" for c in nb.cells):  # a skipped chapter: its line, no kernel
        t0 = time.time()
        executed.clean(nb)
        nb.metadata["jtc"] = {**record, "data": {}}
        atomic_write_text(page_file, nbformat.writes(nb) + "\n")
        return time.time() - t0
    env = {
        "TRANSFORMERS_VERBOSITY": "error",
        profiles.CUSTOM_ENV: str(out / SPEC),
        **({"JTC_DEVICE": device} if device else {}),
    }
    return runner.transaction(nb, page_file, data_dir, {"data_dir": str(data_dir)}, env, out, timeout, record)


def _execute_named(out: Path, sources: dict, digests: dict, timeout: int, device: str | None, name: str):
    """:func:`execute_page` of page ``name`` (what :func:`scheduling.run_pages` calls, in a worker process)."""
    return execute_page(out, name, sources[name], digests[name], timeout, device)


def write_book(out: Path, plan: Plan) -> None:
    """The Jupyter Book around the executed pages: its configuration, table of contents and an introduction that
    gives the plan."""
    title = f"The book on {models.display_name(plan.model)}"
    config = {
        "title": title,
        "author": "jtc-book (custom profile)",
        "only_build_toc_files": True,
        "execute": {"execute_notebooks": "off"},
        "html": {"use_repository_button": False},
        "exclude_patterns": ["notebooks", "_failed", ".staging-*", "data"],
        "sphinx": {
            "config": {
                "nb_merge_streams": True,
                "html_show_sourcelink": False,
                "html_static_path": ["_static"],
                "html_css_files": ["jtc.css"],
            }
        },
    }
    toc = {
        "format": "jb-book",
        "root": "intro",
        "chapters": [{"file": name} for name in [p.name for p in CUSTOM] + [CLAIMS]],
    }
    intro = [
        f"# {title}",
        "",
        "Every chapter of *Jump to Conclusions, reproduced* that applies to this model, "
        "executed on the reader's own text with `python -m jtc_utils.book.custom.command`. The plan, as printed "
        "before the run:",
        "",
        "```",
        *plan.lines(),
        "```",
        "",
    ]
    atomic_write_text(out / "_config.yml", json.dumps(config, indent=1) + "\n")  # JSON is YAML
    atomic_write_text(out / "_toc.yml", json.dumps(toc, indent=1) + "\n")
    atomic_write_text(out / "intro.md", "\n".join(intro))
    shutil.copytree(ROOT / "_static", out / "_static", dirs_exist_ok=True)


def build_html(out: Path) -> Path:
    """The custom book's HTML (:func:`jtc_utils.book.build.website.jupyter_book`), with its figures' numbers beside
    it."""
    index = website.jupyter_book(out, out, strict=False, quiet=True)
    shutil.copytree(out / "data", out / "_build" / "html" / "data", dirs_exist_ok=True)  # the captions' links
    return index


def write_sources(out: Path, plan: Plan) -> dict:
    """Write the custom profile's spec (:data:`SPEC`) and every page's py:percent source (``notebooks/``) into
    ``out``; returns the sources by page name, the claims page last."""
    out.mkdir(parents=True, exist_ok=True)
    n_train, n_val = plan.sizes
    spec = {
        "model": plan.model,
        "text": plan.texts["text"],
        "news": plan.texts.get("news"),
        "n_train": n_train,
        "n_val": n_val,
    }
    atomic_write_text(out / SPEC, json.dumps(spec, indent=1) + "\n")
    sources = {p.name: page_source(p, plan.kind, plan.model, plan.skipped.get(p.name)) for p in CUSTOM}
    sources[CLAIMS] = claims_source(plan.model)
    (out / "notebooks").mkdir(exist_ok=True)
    for name, source in sources.items():
        atomic_write_text(out / "notebooks" / f"{name}.py", source)
    return sources


def run(
    out, plan: Plan, timeout: int = runner.CELL_TIMEOUT, device: str | None = None, html: bool = True, log=print
) -> dict:
    """Execute the custom book planned by ``plan`` into ``out`` (see the module docstring); returns the seconds
    per page and the kernels' peak memory."""
    import resource

    from tqdm.auto import tqdm

    out = Path(out)
    sources = write_sources(out, plan)
    t0 = time.time()
    bar = tqdm(total=len(sources), desc="custom book", unit="page", disable=not sys.stderr.isatty())

    def report(line: str) -> None:
        if line.startswith("  "):  # a page ended
            bar.update()
        (bar.write if not bar.disable else log)(line)

    skipped = [name for name in sources if name in plan.skipped]  # a line each, no kernel: here, at once
    run_one = partial(
        _execute_named, out, sources, {n: page_digest(plan, src) for n, src in sources.items()}, timeout, device
    )
    times = scheduling.run_pages(skipped, run_one, 1, report)
    with scheduling.MemoryWatch() as watch:
        times.update(scheduling.run_pages([n for n in sources if n not in skipped], run_one, plan.jobs, report))
    times = {name: times[name] for name in sources}
    bar.close()
    failed = out / "_failed"  # the pages' failed copies: none left once every page has passed
    if failed.is_dir() and not any(failed.iterdir()):
        failed.rmdir()
    peak = max(watch.peak_gb, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20)
    result = {
        "plan": plan.lines(),
        "estimate_s": plan.estimate_s,
        "memory_estimate_gb": plan.memory_gb,
        "pages_s": times,
        "pages_total_s": time.time() - t0,
        "peak_memory_gb": peak,
        "jobs": plan.jobs,
    }
    if html:
        write_book(out, plan)
        result["html"] = str(build_html(out))
    result["total_s"] = time.time() - t0
    atomic_write_text(out / "run.json", json.dumps(result, indent=1) + "\n")
    return result
