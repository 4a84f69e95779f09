"""Where the heavy work runs (extraction, fits and r², vocabulary projections, block runners, training): ``auto``
(CUDA where PyTorch sees a GPU, else the CPU), set by :func:`use` (a notebook's ``device`` parameter), else
``JTC_DEVICE`` (the runner's ``--device``), else ``auto``. Results come back as numpy and the fits stay in float64;
TF32 is switched off on a GPU (10-bit mantissas flip the near-tie argmaxes Precision@1 counts).

    >>> from jtc_utils.core.infra import device
    >>> device.use("cpu")
    device(type='cpu')
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from jtc_utils.base.state import Setting

ENV = "JTC_DEVICE"
CHOICES = ("auto", "cpu", "cuda", "cuda:N")
CHOSEN = Setting()  # set by use() or using(); None: the environment variable, then auto


def resolve(name=None):
    """The ``torch.device`` that ``name`` (``auto``, ``cpu``, ``cuda``, ``cuda:N``, a ``torch.device`` or None for
    the current setting) stands for; a clear error for a device that does not exist here."""
    import torch

    if name is None:
        return current()
    if isinstance(name, torch.device):
        name = str(name)
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"device must be one of {', '.join(CHOICES)}, got {name!r}")
    name = name.strip().lower()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(name)
    except RuntimeError:
        raise ValueError(f"unknown device {name!r}; choose one of {', '.join(CHOICES)}") from None
    if dev.type == "cpu":
        return torch.device("cpu")
    if dev.type != "cuda":
        raise ValueError(f"device {name!r} is not supported; choose one of {', '.join(CHOICES)}")
    if not torch.cuda.is_available():
        raise ValueError(
            f"device {name!r} was asked for, but PyTorch sees no CUDA GPU on this machine (this torch "
            f"build: {torch.__version__}). Use device='cpu' or 'auto', or install a CUDA build of "
            f"torch on a machine with a GPU."
        )
    count = torch.cuda.device_count()
    if dev.index is not None and dev.index >= count:
        raise ValueError(
            f"device {name!r} does not exist: this machine has {count} CUDA GPU(s), cuda:0 .. cuda:{count - 1}"
        )
    return dev


def _prepare(dev) -> None:
    import torch

    if dev.type == "cuda":  # full float32 precision for anything that feeds a metric
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False


def use(name="auto"):
    """Set the device of the heavy work for this process; returns it. An unknown or absent device is refused."""
    dev = resolve(name)
    _prepare(dev)
    return CHOSEN.set(dev)


def current():
    """The device the heavy work runs on now (see the module's docstring for where the setting comes from)."""
    if CHOSEN.value is not None:
        return CHOSEN.value
    dev = resolve(os.environ.get(ENV, "").strip() or "auto")
    _prepare(dev)
    return dev


@contextmanager
def using(name):
    """Run a block of code on another device, then restore the previous setting."""
    dev = resolve(name)
    _prepare(dev)
    with CHOSEN.within(dev):
        yield dev


def to_numpy(t, dtype=None):
    """A tensor from any device as a host numpy array (optionally cast)."""
    a = t.detach().cpu().numpy()
    return a if dtype is None else a.astype(dtype, copy=False)


def on(model, dev=None):
    """``model`` moved to ``dev`` (default: the current device) when it is elsewhere; returns it."""
    dev = resolve(dev)
    first = next(model.parameters(), None)
    if first is not None and first.device != dev:
        model.to(dev)
    return model


def of(model):
    """The device a model's weights are on."""
    first = next(model.parameters(), None)
    return first.device if first is not None else current()
