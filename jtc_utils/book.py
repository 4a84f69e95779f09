"""What a chapter cell does for one paper figure: compute its numbers (:func:`jtc_utils.figures.compute`), save
them to ``book/data/<figure>.json`` and draw it the paper's way (:mod:`jtc_utils.plotting`). One call per figure,
so that every notebook draws its figures the same way."""

from __future__ import annotations

from . import figdata, figures, plotting


def title(data: dict, params: dict) -> str:
    if params["model"] == params["paper_model"]:  # a real model stands for itself
        return f"{params['model']} on {params['domain']}"
    return f"{params['model']} (stands for {params['paper_model']}) on {params['domain']}"


def real_sizes(n_train=None, n_val=None) -> tuple:
    """The real model's training and validation sizes: the notebook's parameters; when they are None (the full
    9,000 and 3,000), ``$JTC_REAL_SUBSET`` (``"train,val"``) if set: `make test` re-executes the pages on such a
    subset so that the tests stay within their time budget."""
    import os

    sub = os.environ.get("JTC_REAL_SUBSET", "").strip()
    if sub and n_train is None and n_val is None:
        try:
            n_train, n_val = (int(x) for x in sub.split(","))
        except ValueError:
            raise ValueError(f"JTC_REAL_SUBSET must be two whole numbers 'train,validation', got {sub!r}") from None
    return n_train, n_val


def draw(fig: str, data: dict, params: dict, mappings=None, ax=None, labels=None):
    """Draw a figure from its numbers (computed now or read back from ``book/data``)."""
    kind = figures.FIGURES[fig][0]
    t = title(data, params)
    if kind == "r2":
        return plotting.r2_heatmaps(data["r2_mat"], data["r2_id"], title=t)
    if kind in ("pk", "parts_pk"):
        ks = data.get("ks", (1, 5, 10))
        return plotting.precision_curves(data["curves"], mappings or tuple(data["curves"]), ks=ks, title=t, ax=ax)
    if kind in ("surp", "parts_surp"):
        return plotting.surprisal_curves(data["curves"], mappings or tuple(data["curves"]), title=t, ax=ax)
    if kind == "ee":
        return plotting.early_exit_plot(data, title=t, ax=ax)
    if kind == "labels":
        return plotting.label_breakdown(data["by_label"], labels=labels, title=t)
    if kind == "norms":
        return plotting.norms_by_position(data, title=t)
    if kind == "r2_first":
        return plotting.r2_with_without_first(data, title=t)
    raise ValueError(f"figure {fig!r} ({kind}) is a table, not a plot")


TABLES = ("table1", "plausibility", "toplists", "textfit")  # kinds shown as tables, not drawn


class FigureNumbers(dict):
    """The numbers behind a figure (a plain dict), shown in a notebook as where they are saved."""

    def __init__(self, fig: str, data: dict):
        super().__init__(data)
        self.fig = fig

    def __repr__(self) -> str:
        return f"numbers behind {self.fig}: book/data/{self.fig}.json"


def figure(fig: str, profile: str = "tiny", n_train=None, n_val=None, seed: int = 0, show: bool = True, **kw):
    """Compute paper figure ``fig``, save its numbers, draw it (unless ``show=False``) and return the numbers."""
    import matplotlib.pyplot as plt

    data, params = figures.compute(fig, profile, n_train=n_train, n_val=n_val, seed=seed)
    figdata.save(fig, data, params)
    if "skipped" in data:
        print(f"{fig} skipped: {data['skipped']}")
    elif show and figures.FIGURES[fig][0] not in TABLES:
        draw(fig, data, params, **kw)
        plt.show()
    return FigureNumbers(fig, {**data, "params": params})


def real_model_line() -> str:
    """One line on how well the real model fits its text (perplexity on each domain's validation sentences), from
    the numbers the page "A real model, offline" saved, for the chapters' real-model sections."""
    parts = []
    for fig in ("real_textfit", "real_textfit_bbc"):
        rec = figdata.load(fig)
        d = rec["data"]
        parts.append(f"perplexity {d['perplexity']:.1f} on {d['domain']} ({d['ppl_tokens']} tokens)")
    return f"{rec['params']['model']}: " + "; ".join(parts)


class Chapter:
    """What one chapter computes, under the chapter's parameters: ``figure`` computes, saves and draws a paper
    figure and keeps its numbers in ``results``; ``verdicts`` judges claims from them (and from ``book/data`` for
    figures of other chapters); ``experiment`` gives the shared :class:`~jtc_utils.experiment.Experiment` behind a
    figure, for exercises."""

    def __init__(self, profile: str = "tiny", n_train=None, n_val=None, seed: int = 0, real_n_train=None,
                 real_n_val=None, **draw):
        self.profile, self.n_train, self.n_val, self.seed, self.draw = profile, n_train, n_val, seed, draw
        self.real_n_train, self.real_n_val = real_sizes(real_n_train, real_n_val)
        self.results = {}

    def sizes(self, fig: str) -> tuple:
        """(n_train, n_val) of a figure: the real model's for ``real_*`` figures, the chapter's otherwise."""
        real = figures.profile_of(fig, self.profile) == "real"
        return (self.real_n_train, self.real_n_val) if real else (self.n_train, self.n_val)

    def figure(self, fig: str, **kw) -> dict:
        n_train, n_val = self.sizes(fig)
        self.results[fig] = figure(fig, self.profile, n_train=n_train, n_val=n_val, seed=self.seed,
                                   **{**self.draw, **kw})
        return self.results[fig]

    def verdicts(self, ids, alias: dict | None = None) -> None:
        """Print the verdicts of claims ``ids`` (returns nothing, so that the cell shows only the printed table);
        ``alias`` judges them on other figures' numbers (see :func:`jtc_utils.claims.getter`)."""
        from . import claims

        claims.verdict_table(ids, claims.getter(self.results, alias))

    def real_verdicts(self, ids) -> None:
        """Print the verdicts of claims ``ids`` judged with the same rules on the real model's figures
        (``real_<fig>``); a claim whose figures the real profile lacks gets no verdict and says why."""
        from . import claims

        claims.verdict_table(ids, claims.profile_getter("real_", self.results))

    def experiment(self, fig: str):
        _, model, domain = figures.setting(fig, self.profile)
        return figures.experiment(model, domain, figures.profile_of(fig, self.profile), *self.sizes(fig), self.seed)
