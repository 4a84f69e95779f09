"""What a figure is computed under, resolved once and passed whole: a :class:`Setting` (the profile, the training and
validation sizes, the seed). A chapter makes one from its parameters (:meth:`Setting.of`); the figure path hands it
to the paper's computation, which reads what it needs of it (:meth:`Setting.sized` for a figure computed at other
sizes, :meth:`Setting.on` for another profile)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from jtc_utils.base import validate

from jtc_utils.core.data import profiles
from jtc_utils.core.data.profiles import Profile


@dataclass(frozen=True)
class Setting:
    """A profile, the training and validation sizes (None: the profile's own) and the seed, each checked once."""

    profile: Profile
    n_train: int | None = None
    n_val: int | None = None
    seed: int = 0

    @classmethod
    def of(cls, profile: Profile | str = "tiny", n_train=None, n_val=None, seed=0) -> "Setting":
        """A setting from a chapter's parameters: the profile resolved (a :class:`Profile` or its name), the sizes and
        the seed checked (:mod:`jtc_utils.base.validate`)."""
        if isinstance(profile, Setting):
            raise TypeError("Setting.of takes a profile, not a Setting: pass the setting itself")
        n_train, n_val = validate.sizes(n_train, n_val)
        return cls(profiles.get(profile), n_train, n_val, validate.seed(seed))

    @property
    def sizes(self) -> tuple:
        return self.n_train, self.n_val

    def sized(self, n_train=None, n_val=None) -> "Setting":
        """The same setting at other sizes (checked)."""
        n_train, n_val = validate.sizes(n_train, n_val)
        return replace(self, n_train=n_train, n_val=n_val)

    def on(self, profile: Profile | str) -> "Setting":
        """The same sizes and seed on another profile."""
        return replace(self, profile=profiles.get(profile))
