"""One (model, domain) experiment of the paper: samples with their positions, the hidden states of every layer
at those positions for the train and validation sets, and what is computed from them. Each piece is computed
once, on first use, and the expensive ones are cached on disk, so notebooks share work.
"""

from __future__ import annotations

import warnings
from functools import cached_property, lru_cache

import numpy as np

from jtc_utils.base import validate

from jtc_utils.core.infra import cache, resample
from jtc_utils.core.analysis import linear, readout
from jtc_utils.core.models import models
from jtc_utils.core.data import profiles
from jtc_utils.core.analysis.hidden import hidden_states, samples_identity
from jtc_utils.core.data.profiles import Profile
from jtc_utils.core.data.samples import Samples, make_samples


class Experiment:
    """The paper's setting for one model on one domain.

    ``n_train`` / ``n_val`` default to the paper's split sizes (9,000 train; 3,000 or 1,000 validation).
    """

    def __init__(
        self,
        model: str,
        domain: str | None = None,
        profile: Profile | str = "tiny",
        n_train: int | None = None,
        n_val: int | None = None,
        seed: int = 0,
    ):
        self.profile = profiles.get(profile)
        seed = validate.seed(seed)
        n_train, n_val = validate.sizes(n_train, n_val)
        self.model_name = model
        self.domain = domain or self.profile.main_domain
        self.n_train, self.n_val, self.seed = n_train, n_val, seed
        self.adapter = models.adapter(model)
        # build the samples now, so that a bad domain or size fails before any heavy work
        self.train, self.val = self.train, self.val

    def __repr__(self) -> str:
        return (
            f"Experiment({self.model_name!r}, {self.domain!r}, L={self.n_layers}, d={self.adapter.d}, "
            f"train={len(self.train)}, validation={len(self.val)})"
        )

    @property
    def n_layers(self) -> int:
        return self.adapter.n_layers

    def _samples(self, split: str, n) -> Samples:
        return make_samples(
            self.adapter.tokenizer, self.adapter.family, self.domain, split, n=n, profile=self.profile, seed=self.seed
        )

    @cached_property
    def train(self) -> Samples:
        return self._samples("train", self.n_train)

    @cached_property
    def val(self) -> Samples:
        return self._samples("validation", self.n_val)

    @cached_property
    def X_train(self) -> np.ndarray:
        """[L+1, n_train, d] hidden states at the train positions."""
        return hidden_states(self.adapter, self.train)

    @cached_property
    def X_val(self) -> np.ndarray:
        return hidden_states(self.adapter, self.val)

    def key(self, what: str) -> dict:
        return {
            "what": what,
            "model": self.adapter.identity,
            "train": samples_identity(self.train),
            "val": samples_identity(self.val),
            "rcond": linear.RCOND,
            "r2_constant_rtol": linear.CONSTANT_RTOL,
            "boot": [resample.N_RESAMPLES, resample.SEED],
        }

    @cached_property
    def _fits(self) -> dict:
        n, d = len(self.train), self.adapter.d
        if n < d:  # warn here, not only inside the fit, so that a cached result warns too
            linear.warn_underdetermined(n, d, stacklevel=3)

        def compute():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", linear.UnderdeterminedFitWarning)
                fits = linear.layer_pair_r2(
                    self.X_train, self.X_val, train_r2=True, boot=resample.weights(len(self.val))
                )
            fits["maps"] = fits["maps"].astype(np.float32)
            return fits

        return cache.cached("fits", self.key("layer_pair_fits"), compute)

    @property
    def maps(self) -> np.ndarray:
        """``maps[l]`` = W of ``mat`` from layer l to the last layer, [L, d, d] (apply as ``h @ W``)."""
        return self._fits["maps"]

    @cached_property
    def predictions(self) -> dict:
        """Per-sample, per-layer predictions of ``mat`` and ``id`` on the validation set (paper section 4; see
        :func:`jtc_utils.core.analysis.readout.per_sample`). Computed once per experiment, shared by every figure."""

        return readout.per_sample(self)

    def layer_r2(self) -> dict:
        """r² of ``mat`` and ``id`` for every layer pair (paper section 3; Figs 2, 3, 12, 13, 22-25).

        ``r2_mat`` / ``r2_id``: validation r², [L+1, L+1] with rows = source l, columns = target l', diagonal 1, lower
        triangle NaN. The ``*_train`` versions are the same on the training set. ``pairs``: the statistics the claims
        read (:func:`jtc_utils.core.analysis.linear.pair_statistics`), with their resamples in ``boot`` (the validation
        set resampled, :func:`jtc_utils.core.infra.resample.weights`; the fits are not refitted).
        """
        f = self._fits
        boot = linear.pair_statistics(f["boot_r2_mat"], f["boot_r2_id"])
        return {
            "model": self.model_name,
            "domain": self.domain,
            "n_layers": self.n_layers,
            "d": self.adapter.d,
            "n_train": len(self.train),
            "n_val": len(self.val),
            "r2_mat": f["r2_mat"],
            "r2_id": f["r2_id"],
            "r2_mat_train": f["r2_mat_train"],
            "r2_id_train": f["r2_id_train"],
            "pairs": {k: float(v) for k, v in linear.pair_statistics(f["r2_mat"], f["r2_id"]).items()},
            "boot": {"pairs": {k: np.round(v, 6) for k, v in boot.items()}},
        }


def shared(
    model: str,
    domain: str | None = None,
    profile: Profile | str = "tiny",
    n_train: int | None = None,
    n_val: int | None = None,
    seed: int = 0,
) -> Experiment:
    """One shared :class:`Experiment` per setting, so that every figure on the same model reuses its hidden states
    and fits (a profile and its name are the same setting)."""
    return _shared(model, domain, profiles.get(profile), *validate.sizes(n_train, n_val), validate.seed(seed))


@lru_cache(maxsize=16)
def _shared(model, domain, profile: Profile, n_train, n_val, seed) -> Experiment:
    return Experiment(model, domain, profile=profile, n_train=n_train, n_val=n_val, seed=seed)


def for_role(
    profile, role: str = "gpt48", n_train: int | None = None, n_val: int | None = None, seed: int = 0
) -> Experiment:
    """The shared experiment of the model that plays paper role ``role`` (``gpt12`` ... ``gpt48``, ``bert12``,
    ``bert24``) on the profile's main domain; ``profile``: a :class:`~jtc_utils.core.data.profiles.Profile` or its
    name."""
    p = profiles.get(profile)
    return shared(p.role(role), p.main_domain, p, n_train, n_val, seed)
