"""The JTC claims judged again under the two other settings the claims page shows: in the paper's statistical regime
(:mod:`.regime`: every figure a claim reads recomputed with the paper's training vectors per dimension) and on the
stand-in of GPT2-XL's other training seeds (:mod:`.seeds`). One function computes both, for the claims page and for
the build's work ahead of that page (:data:`jtc_utils.book.build.pages.AHEAD`: it reads no other page's numbers
beyond the stored figures a replica's claims compare with, so `make book` starts it early in a worker of its own and
the page then reads the same computations from the on-disk cache)."""

from __future__ import annotations

from dataclasses import dataclass, field

from jtc_utils.core.data import profiles
from jtc_utils.core.data.profiles import Profile
from jtc_utils.core.data.setting import Setting
from jtc_utils.evidence import claims

from . import claims as jtc_claims
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
            out.update(
                {
                    seeds.prefix(model) + f: (d, self.seed_params[model][f])
                    for f, d in sorted(self.seed_results[model].items())
                }
            )
        return out


def rejudge(profile: Profile | str = "tiny") -> Rejudged:
    """Every JTC claim judged in the paper's regime and on each training-seed replica of the role, with the figures
    each recomputed (see :class:`Rejudged`)."""
    p = profiles.get(profile)
    r = Rejudged([])
    r.regime_records = regime.paper_regime_claims(p, r.regime_results, r.regime_params)
    r.by_seed = seeds.seed_claims(p, r.seed_results, r.seed_params)
    return r


def _claims(fig: str, s: Setting):
    """``claims``: every JTC claim on the stand-in as the claims page shows it (seed 0's records with the
    replicas' shape verdicts, :func:`jtc_utils.jtc.seeds.all_claims`), from the stored figures."""
    p = s.profile
    return seeds.all_claims(p), {"profile": p.name, "source": "book/data"}


def _claims_real(fig: str, s: Setting):
    """``claims_real``: every JTC claim judged on the real model's stored figures (``real_<fig>``)."""
    return jtc_claims.all_claims(claims.profile_getter("real_"), "real"), {"profile": "real", "source": "book/data"}


def _claims_regime(fig: str, s: Setting):
    """``claims_regime``: every JTC claim judged on the figures stored in the paper's regime (``regime_<fig>``)."""
    p = s.profile
    return jtc_claims.all_claims(regime.stored_getter, p), {"profile": p.name, "source": "book/data"}


# the JTC paper's records beside its figures: the figures recomputed in the paper's regime and on the other seeds,
# and the three claims files (declared with the figures by .paper)
CLAIMS_FILES = {"claims": _claims, "claims_real": _claims_real, "claims_regime": _claims_regime}
# every figure in the paper's regime and on each replica that a claim may read: saved where one does
RECOMPUTED = (*(f for f in regime.RECORDS if f.startswith(regime.REGIME_PREFIX)), *seeds.RECORDS)
RECORDS = {**regime.RECORDS, **seeds.RECORDS, **CLAIMS_FILES}
