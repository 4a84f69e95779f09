"""The device setting: auto, cpu and cuda resolve or fail with a clear message; the heavy work honours it."""

import numpy as np
import pytest
import torch

from jtc_utils.base.state import Setting
from jtc_utils.core.infra import device
from jtc_utils.core.analysis import linear

HAS_CUDA = torch.cuda.is_available()


def test_auto_picks_the_gpu_only_when_there_is_one():
    assert device.resolve("auto").type == ("cuda" if HAS_CUDA else "cpu")
    assert device.resolve("CPU") == torch.device("cpu")


@pytest.mark.skipif(HAS_CUDA, reason="this machine has a GPU")
def test_cuda_without_a_gpu_is_refused_with_the_fix():
    with pytest.raises(ValueError, match="no CUDA GPU.*device='cpu'"):
        device.use("cuda")


@pytest.mark.parametrize("bad", ["tpu", "gpu0", "", 3, "cuda:99" if HAS_CUDA else "mps"])
def test_unknown_devices_are_refused(bad):
    with pytest.raises(ValueError, match="device"):
        device.resolve(bad)


def test_use_using_and_the_environment(monkeypatch):
    monkeypatch.setattr(device, "CHOSEN", Setting())
    monkeypatch.setenv(device.ENV, "cpu")
    assert device.current() == torch.device("cpu")
    monkeypatch.setenv(device.ENV, "tpu")
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        device.current()
    with device.using("cpu") as dev:
        assert dev.type == "cpu" and device.current() == dev
    assert device.CHOSEN.value is None  # restored


def test_the_fits_run_on_the_chosen_device(monkeypatch):
    """The factorization's tensors live on the device asked for (the CPU here; the GPU too when there is one)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 4))
    devs = ["cpu"] + (["cuda"] if HAS_CUDA else [])
    results = []
    for name in devs:
        f = linear.factor(X, dev=name)
        assert f.R.device.type == name and f.R.dtype == torch.float64
        results.append(
            linear.layer_pair_r2(
                np.stack([X, X**2, X**3]).astype(np.float32), np.stack([X, X**2, X**3]).astype(np.float32), dev=name
            )["r2_mat"]
        )
    for r in results[1:]:  # a GPU gives the CPU's numbers
        np.testing.assert_allclose(r, results[0], rtol=0, atol=1e-9)


def test_a_batch_that_does_not_fit_in_memory_is_split_and_gives_the_same_states(monkeypatch):
    """Out of memory for batches of more than two sentences: the extraction goes on with smaller batches (warning
    once per split) and returns exactly the states of an unconstrained run; when one sentence does not fit, a
    MemoryError names the memory it needs and the fix."""
    from jtc_utils.core.analysis import hidden
    from jtc_utils.core.models import models
    from jtc_utils.core.data.samples import make_samples

    ad = models.adapter("tiny-gpt2")
    s = make_samples(ad.tokenizer, "gpt2", "encyclopedia", "validation", n=7)
    want = hidden.extract(ad, s, batch_size=8, progress=False)
    real = ad.forward_states

    def tight(inp, att, limit):
        if len(inp) > limit:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(inp, att)

    monkeypatch.setattr(ad, "forward_states", lambda inp, att: tight(inp, att, 2))
    with pytest.warns(ResourceWarning, match="did not fit in the memory"):
        got = hidden.extract(ad, s, batch_size=8, progress=False)
    np.testing.assert_array_equal(got, want)
    monkeypatch.setattr(ad, "forward_states", lambda inp, att: tight(inp, att, 0))
    with pytest.warns(ResourceWarning), pytest.raises(MemoryError, match=r"does not fit.*MB.*device='cpu'"):
        hidden.extract(ad, s, batch_size=8, progress=False)


def test_other_runtime_errors_are_not_taken_for_memory(monkeypatch):
    from jtc_utils.core.analysis import hidden
    from jtc_utils.core.models import models
    from jtc_utils.core.data.samples import make_samples

    ad = models.adapter("tiny-gpt2")
    s = make_samples(ad.tokenizer, "gpt2", "encyclopedia", "validation", n=3)

    def broken(inp, att):
        raise RuntimeError("shape mismatch")

    monkeypatch.setattr(ad, "forward_states", broken)
    with pytest.raises(RuntimeError, match="shape mismatch"):
        hidden.extract(ad, s, batch_size=8, progress=False)
