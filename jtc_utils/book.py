"""What a chapter cell does for one paper figure: compute its numbers (:func:`jtc_utils.figures.compute`), save
them to ``book/data/<figure>.json`` and draw it the paper's way (:mod:`jtc_utils.plotting`). One call per figure,
so that every notebook draws its figures the same way."""

from __future__ import annotations

from . import figdata, figures, plotting


def title(data: dict, params: dict) -> str:
    return f"{params['model']} (stands for {params['paper_model']}) on {params['domain']}"


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
    raise ValueError(f"figure {fig!r} ({kind}) is a table, not a plot")


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
    elif show and figures.FIGURES[fig][0] not in ("table1", "plausibility"):
        draw(fig, data, params, **kw)
        plt.show()
    return FigureNumbers(fig, {**data, "params": params})


class Chapter:
    """What one chapter computes, under the chapter's parameters: ``figure`` computes, saves and draws a paper
    figure and keeps its numbers in ``results``; ``verdicts`` judges claims from them (and from ``book/data`` for
    figures of other chapters); ``experiment`` gives the shared :class:`~jtc_utils.experiment.Experiment` behind a
    figure, for exercises."""

    def __init__(self, profile: str = "tiny", n_train=None, n_val=None, seed: int = 0, **draw):
        self.profile, self.n_train, self.n_val, self.seed, self.draw = profile, n_train, n_val, seed, draw
        self.results = {}

    def figure(self, fig: str, **kw) -> dict:
        self.results[fig] = figure(fig, self.profile, n_train=self.n_train, n_val=self.n_val, seed=self.seed,
                                   **{**self.draw, **kw})
        return self.results[fig]

    def verdicts(self, ids, alias: dict | None = None) -> None:
        """Print the verdicts of claims ``ids`` (returns nothing, so that the cell shows only the printed table);
        ``alias`` judges them on other figures' numbers (see :func:`jtc_utils.claims.getter`)."""
        from . import claims

        claims.verdict_table(ids, claims.getter(self.results, alias))

    def experiment(self, fig: str):
        _, model, domain = figures.setting(fig, self.profile)
        return figures.experiment(model, domain, self.profile, self.n_train, self.n_val, self.seed)
