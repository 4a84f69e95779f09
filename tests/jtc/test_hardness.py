"""The hardness report: the first world's stored report, the second world's computed one, the table of both."""

import json

import numpy as np
import pytest

from jtc_utils.core.infra.paths import DATA_DIR
from jtc_utils.embedded import corpus, leaks
from jtc_utils.embedded.world import PRESENT
from jtc_utils.evidence import figdata
from jtc_utils.jtc import hardness
from jtc_utils.core.analysis import experiment

pytestmark = [pytest.mark.jtc]  # the JTC paper's package


def test_the_first_worlds_report_names_its_commit_and_has_every_measure():
    v1 = hardness.stored_v1()
    assert len(v1["commit"]) == 40 and v1["uncommitted_changes"] is False
    for dom in corpus.DOMAINS:
        assert {k for k, _ in hardness.CORPUS_ROWS} <= set(v1["report"]["corpus"][dom])
    assert len(v1["report"]["models"]) == 4


@pytest.mark.skipif(not (DATA_DIR / "hardness.json").exists(), reason="the embedded-world page writes it")
def test_the_table_sets_both_reports_side_by_side():
    v1, v2 = hardness.stored_v1()["report"], figdata.load("hardness")["data"]
    t = hardness.table(v1, v2)
    assert list(t.columns) == ["share of", "domain", "first world", "second world"]
    assert len(t) == 2 * len(hardness.CORPUS_ROWS) + 1 + 2 * len(hardness.MODEL_ROWS)
    leak = t[(t["share of"].str.startswith("pool sentences that are a prefix")) & (t["domain"] == "encyclopedia")]
    assert leak["first world"].item() == f"{100 * v1['corpus']['encyclopedia']['prefix_leak']:.1f}%"


@pytest.mark.slow
@pytest.mark.skipif(not (DATA_DIR / "hardness.json").exists(), reason="the embedded-world page writes it")
def test_the_second_worlds_report_is_reproduced():
    stored = figdata.load("hardness")["data"]
    pools = {d: corpus.pool(d, "validation") for d in corpus.DOMAINS}
    train = corpus.training_sentences()
    for dom in corpus.DOMAINS:
        assert leaks.prefix_leak(pools[dom], train) == stored["corpus"][dom]["prefix_leak"]
        assert leaks.late_past_share(pools[dom], PRESENT) == stored["corpus"][dom]["late_past"]
    model = "tiny-gpt2"  # the model measures of one stand-in, on both domains
    table = hardness.bigram_table(experiment.shared(model, "news").adapter.tokenizer, train)
    for dom in corpus.DOMAINS:
        got = hardness.model_measures(experiment.shared(model, dom), table)
        for key in ("confident", "mat_layer0", "bigram"):
            assert got[key] == pytest.approx(stored["models"][model][dom][key], abs=2e-3), (dom, key)
    json.dumps(stored)
    assert np.isfinite(stored["corpus"]["training_duplicates"])
