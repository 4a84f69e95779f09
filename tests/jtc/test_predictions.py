"""Prediction metrics (paper section 4) on a small random model: the built-in invariants of the spec."""

import numpy as np
import pytest
import torch
from helpers import save_random_model

from jtc_utils.core.analysis import readout
from jtc_utils.core.analysis.experiment import Experiment

pytestmark = [pytest.mark.jtc]  # the JTC paper's package


@pytest.fixture(scope="module", params=["gpt2", "bert"])
def exp(request, tmp_path_factory):
    path = save_random_model(request.param, tmp_path_factory.mktemp(request.param))
    return Experiment(str(path), "news", n_train=200, n_val=60)


def test_last_layer_is_the_model_itself(exp):
    r = readout.per_sample(exp)
    L = exp.n_layers
    with torch.no_grad():
        logp = torch.log_softmax(exp.adapter.readout(torch.from_numpy(exp.X_val[L])).double(), -1)
    for m in readout.MAPPINGS:
        for k in (1, 5, 10):
            assert r["precision"][m][k][L].all()
        np.testing.assert_allclose(r["surprisal"][m][L], -logp.max(-1).values.numpy(), rtol=1e-10)
        assert np.array_equal(r["top1"][m][L], r["final_topk"][:, 0])


def test_precision_is_monotone_in_k_and_id_is_the_logit_lens(exp):
    r = readout.per_sample(exp)
    for m in readout.MAPPINGS:
        assert np.all(r["precision"][m][1] <= r["precision"][m][5])
        assert np.all(r["precision"][m][5] <= r["precision"][m][10])
    with torch.no_grad():  # id at layer 1 is the readout applied to h^1 directly (ln_f included for GPT-2)
        lens = exp.adapter.readout(torch.from_numpy(exp.X_val[1])).argmax(-1).numpy()
    assert np.array_equal(r["top1"]["id"][1], lens)


def test_k_larger_than_vocabulary_is_refused(exp):
    with pytest.raises(ValueError, match="larger than the vocabulary"):
        readout.per_sample(exp, ks=(1, 10**6))
