"""The JTC claims judged again under the two other settings the claims page shows: in the paper's statistical regime
(:mod:`.regime`: every figure a claim reads recomputed with the paper's training vectors per dimension) and on the
stand-in of GPT2-XL's other training seeds (:mod:`.seeds`). One function computes both, for the claims page and for
the build's work ahead of that page (:data:`jtc_utils.book.scheduling.READERS`: it reads no other page's numbers
beyond the stored figures a replica's claims compare with, so `make book` starts it early in a worker of its own and
the page then reads the same computations from the on-disk cache)."""

from __future__ import annotations

from dataclasses import dataclass, field

from jtc_utils.core import profiles
from jtc_utils.core.profiles import Profile

from . import regime, seeds


@dataclass
class Rejudged:
    regime_records: list  # every JTC claim at the paper's vectors per dimension
    regime_results: dict = field(default_factory=dict)  # figure -> the numbers recomputed in that regime
    regime_params: dict = field(default_factory=dict)  # figure -> their parameters
    by_seed: dict = field(default_factory=dict)  # replica model -> its claim records
    seed_results: dict = field(default_factory=dict)  # replica model -> figure -> numbers
    seed_params: dict = field(default_factory=dict)  # replica model -> figure -> parameters

    def figures(self) -> dict[str, tuple[dict, dict]]:
        """Every recomputed figure under the name the claims page saves it by (``regime_<fig>``,
        ``seed<k>_<fig>``): ``{name: (data, params)}``, in a total order (setting, then figure id)."""
        out = {regime.REGIME_PREFIX + f: (d, self.regime_params[f]) for f, d in sorted(self.regime_results.items())}
        for model in sorted(self.seed_results):
            out.update({seeds.prefix(model) + f: (d, self.seed_params[model][f])
                        for f, d in sorted(self.seed_results[model].items())})
        return out


def rejudge(profile: Profile | str = "tiny") -> Rejudged:
    """Every JTC claim judged in the paper's regime and on each training-seed replica of the role, with the figures
    each recomputed (see :class:`Rejudged`)."""
    p = profiles.get(profile)
    r = Rejudged([])
    r.regime_records = regime.paper_regime_claims(p, r.regime_results, r.regime_params)
    r.by_seed = seeds.seed_claims(p, r.seed_results, r.seed_params)
    return r
