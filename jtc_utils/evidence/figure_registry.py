"""One path from a figure id to its numbers: :func:`compute` runs the computation its paper declared (looked up in
the one registry, :mod:`jtc_utils.evidence.registry`), on the profile the figure belongs to; :func:`save` is the one
writer of ``book/data``; :func:`compute_and_save` does both and returns the numbers as saved, for every paper alike.
A figure id belongs to exactly one paper; :func:`jtc_utils.book.display.chapter.figure` is the path a chapter's cell
takes."""

from __future__ import annotations

from jtc_utils.core.data import profiles
from jtc_utils.core.infra import costs
from jtc_utils.core.data.profiles import Profile
from jtc_utils.core.data.setting import Setting

from . import figdata, registry
from .registry import Registered

REAL_PREFIX = "real_"  # a figure computed on the real model (profile "real"), beside its stand-in twin
CUSTOM_PROFILE = "custom"  # a reader's own model's profile, which plays the real model's part (its ``real_`` figures)


def real_of(profile: Profile | str) -> Profile:
    """The profile a chapter's real-model figures are computed on: ``real``, or the reader's own model under the
    custom profile."""
    p = profiles.get(profile)
    return p if p.name == CUSTOM_PROFILE else profiles.get("real")


def profile_of(fig: str, profile: Profile | str) -> Profile:
    """The profile a figure is computed on: :func:`real_of` for the real model's figures, the chapter's otherwise
    (``profile``: a :class:`Profile` or its name)."""
    return real_of(profile) if fig.startswith(REAL_PREFIX) else profiles.get(profile)


def entry(fig: str) -> Registered:
    """The registered figure ``fig`` (:meth:`jtc_utils.evidence.registry.Registry.entry`)."""
    return registry.get().entry(fig)


def compute(fig: str, setting: Setting, registered: Registered | None = None) -> tuple[dict, dict]:
    """``(data, params)`` of figure ``fig`` under ``setting`` (a :class:`~jtc_utils.core.data.setting.Setting`, its
    sizes and seed checked when it was made), computed by the paper package that registered it, on the profile the
    figure belongs to (:func:`profile_of`). ``registered``: the figure's entry, where the caller looked it up already
    (each path looks it up once)."""
    if not isinstance(setting, Setting):
        raise TypeError(
            f"compute({fig!r}, ...) takes a Setting, got {setting!r}: make one with "
            "jtc_utils.core.data.setting.Setting.of(profile, n_train, n_val, seed)"
        )
    registered = registered or entry(fig)
    with costs.figure(fig):
        return registered.compute(fig, setting.on(profile_of(fig, setting.profile)))


def compute_and_save(fig: str, setting: Setting, registered: Registered | None = None) -> tuple[dict, dict]:
    """Compute figure ``fig`` and save its numbers to ``book/data/<fig>.json`` (:func:`save`): ``(numbers, params)``
    as saved, for every paper alike (plain JSON values, NaN as None; the same a reader gets from
    ``figdata.load(fig)``)."""
    registered = registered or entry(fig)
    return save(fig, *compute(fig, setting, registered))


def save(fig: str, data, params: dict) -> tuple:
    """Save the numbers of figure ``fig``, computed by its registered function (:func:`compute`, here or in a worker
    ahead of the page), to ``book/data/<fig>.json``: the one place that writes ``book/data``. Returns
    ``(numbers, params)`` as saved (see :func:`compute_and_save`)."""
    record = figdata.save(fig, data, params)
    return record["data"], record["params"]
