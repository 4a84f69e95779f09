"""Issue 57: every door a student or researcher uses checks its values once, at the door: a bad size, layer, sample
index, k, figure id or text path gets one line naming the parameter, the value, what is allowed and the fix (never a
raw TypeError, IndexError or ZeroDivisionError from inside the computation, and never a silent nonsense result), and
nothing is written (no cache entry, no figure data, no output folder) when an input is refused. A claim read from a
map fitted on fewer training samples than the model's width gets no verdict, with that reason."""

import subprocess
import sys

import pytest

from jtc_utils.book.display import chapter

from jtc_utils.book.custom import command as custom, plan as custom_plan
from jtc_utils.core.infra import cache
from jtc_utils.core.analysis import readout
from jtc_utils.core.analysis.experiment import Experiment
from jtc_utils.core.data.setting import Setting
from jtc_utils.evidence import claims, figure_registry, findings
from jtc_utils.jtc import figures, top_tokens
from jtc_utils.jtc import plots as jtc_plots


@pytest.fixture
def nothing_written(tmp_path, monkeypatch):
    """An empty cache and figure-data folder; after the test, both must still be empty."""
    monkeypatch.setattr(cache, "CACHE_DIR", tmp_path / "cache")
    monkeypatch.setenv("JTC_DATA_OUT", str(tmp_path / "data"))
    yield
    for folder in ("cache", "data"):
        f = tmp_path / folder
        assert not f.exists() or not any(f.rglob("*")), f"{folder} written by a refused call: {list(f.rglob('*'))}"


@pytest.fixture(scope="module")
def exp():
    return Experiment("tiny-gpt2", "news", n_train=100, n_val=40)


SIZES = [  # (keyword, value, error, what the message must say)
    ("n_train", [10], TypeError, r"n_train must be a whole number, got \[10\]"),
    ("n_train", 2.5, TypeError, r"n_train must be a whole number, got 2\.5"),
    ("n_val", "100", TypeError, r"n_val must be a whole number, got '100'"),
    ("n_train", True, TypeError, r"n_train must be a whole number, got True"),
    ("n_val", 1, ValueError, r"n_val must be at least 2 \(r² and its resamples need at least two samples"),
    ("n_train", -1, ValueError, r"n_train must be at least 2.*got -1"),
]


@pytest.mark.parametrize("key,value,error,match", SIZES, ids=[f"{k}={v!r}" for k, v, *_ in SIZES])
def test_a_bad_size_is_refused_at_every_figure_door(key, value, error, match, nothing_written):
    with pytest.raises(error, match=match):
        Setting.of("tiny", **{key: value})
    with pytest.raises(error, match=match):
        chapter.Chapter("tiny", **{key: value})
    with pytest.raises(error, match=match):
        Experiment("tiny-gpt2", "news", **{key: value})


def test_a_figure_is_computed_under_a_setting_only(nothing_written):
    """The figure path takes the one setting object, resolved once: a profile's name or loose sizes are refused with
    the way to make one."""
    with pytest.raises(TypeError, match=r"takes a Setting.*Setting\.of\(profile, n_train, n_val, seed\)"):
        figure_registry.compute("fig4", "tiny")
    with pytest.raises(TypeError, match="not a Setting"):
        Setting.of(Setting.of("tiny"))
    s = Setting.of("tiny", 100, 40, 3)
    assert s.sized(50, None) == Setting(s.profile, 50, None, 3) and s.on("tiny") == s


@pytest.mark.parametrize(
    "value,error,match",
    [
        (0, ValueError, r"n_sentences must be at least 1, got 0"),
        (-1, ValueError, r"n_sentences must be at least 1, got -1"),
        (2.5, TypeError, r"n_sentences must be a whole number, got 2\.5"),
        ("5", TypeError, r"n_sentences must be a whole number, got '5'"),
    ],
)
def test_plausibility_checks_its_sample_count(exp, value, error, match):
    with pytest.raises(error, match=match):
        top_tokens.plausibility(exp, n_sentences=value)


@pytest.mark.parametrize(
    "call,error,match",
    [
        (
            lambda e: top_tokens.top_tokens(e, "the city of", layers=3),
            TypeError,
            r"layers must be a list .* pass \[3\]",
        ),
        (lambda e: top_tokens.top_tokens(e, "the city of", layers=[]), ValueError, r"layers is empty"),
        (
            lambda e: top_tokens.top_tokens(e, "the city of", layers=[-1]),
            ValueError,
            r"each layer .* between 0 and 6, got -1",
        ),
        (
            lambda e: readout.cast(e, "mat", 99),
            ValueError,
            r"layer \(of tiny-gpt2, which has layers 0..6\) must be "
            r"between 0 and 6, got 99",
        ),
        (lambda e: readout.cast(e, "mat", -1), ValueError, r"between 0 and 6, got -1"),
        (
            lambda e: top_tokens.top_tokens_of_samples(e, [999]),
            ValueError,
            r"indices .* 40 validation samples, 0..39\) "
            r"must be between 0 and 39, got 999",
        ),
        (lambda e: top_tokens.top_tokens_of_samples(e, 3), TypeError, r"indices must be a list of indices"),
        (lambda e: figures.table1(e, samples=[999]), ValueError, r"samples .* must be between 0 and 39, got 999"),
        (lambda e: figures.table1(e, samples=[-2]), ValueError, r"got -2"),
        (
            lambda e: readout.text_fit(e, n=0),
            ValueError,
            r"n \(validation sentences whose perplexity is measured\) must "
            r"be at least 1, got 0",
        ),
        (lambda e: readout.text_fit(e, n=-1), ValueError, r"at least 1, got -1"),
    ],
    ids=[
        "layers scalar",
        "layers empty",
        "layer negative",
        "cast layer 99",
        "cast layer -1",
        "sample 999",
        "samples scalar",
        "table1 sample 999",
        "table1 sample -2",
        "text_fit n=0",
        "text_fit n=-1",
    ],
)
def test_layers_samples_and_counts_are_checked(exp, call, error, match):
    with pytest.raises(error, match=match):
        call(exp)


def test_an_unknown_figure_id_names_the_known_ones(nothing_written):
    with pytest.raises(ValueError, match=r"unknown figure 'fig99'; known: fig2, fig3"):
        jtc_plots.draw("fig99", {}, {})
    with pytest.raises(ValueError, match=r"unknown figure 'fig99'.*jtc: fig2, fig3"):
        chapter.Chapter("tiny").figure("fig99")


def test_an_underdetermined_fit_gives_no_verdict(tmp_path, monkeypatch):
    """C1a read from maps fitted on 40 samples of a 96-wide stand-in: no verdict, and the reason says why and how
    many samples are needed; at 200 samples the same rule gives a verdict."""
    monkeypatch.setattr(cache, "CACHE_DIR", tmp_path / "cache")
    small, _ = figures.compute("fig2", Setting.of("tiny", n_train=40, n_val=40))
    assert small["underdetermined"] == {"n_train": 40, "d": 96}
    rec = claims.check_any("C1a", claims.getter({"fig2": small}))
    assert rec["verdict"] is None and rec["holds"] is None and rec["margin"] is None
    assert "underdetermined" in rec["reason"] and "at least 96 training samples" in rec["reason"]
    assert findings.shape_verdict(rec).startswith("no verdict: the maps were fitted on 40 training samples")
    assert "1 claim gets no verdict: its maps were" in findings.summary([rec], "tiny")
    enough, _ = figures.compute("fig2", Setting.of("tiny", n_train=200, n_val=40))
    assert "underdetermined" not in enough
    assert claims.check_any("C1a", claims.getter({"fig2": enough}))["verdict"] is not None


def _plan(n_train, d):
    return custom_plan.Plan(
        model="m",
        family="llama",
        kind=custom_plan.CAUSAL,
        n_layers=4,
        d=d,
        vocab=100,
        parameters=1000,
        sizes=(n_train, n_train // 4),
        texts={},
        counts={},
        run=[],
        skipped={},
        forward_s=0.01,
        device="cpu",
    )


def test_the_plan_says_when_the_fit_is_underdetermined_and_what_size_is_not():
    under = _plan(240, 576).regime_lines()
    assert len(under) == 1 and "WARNING: 240 training samples for a model 576 wide" in under[0]
    least = custom_plan.sentences_for(576)
    assert (
        f"--sentences {least} or more" in under[0]
        and custom_plan.split_sizes(least)[0] >= 576 > custom_plan.split_sizes(least - 1)[0]
    )
    below = _plan(1000, 576).regime_lines()
    assert len(below) == 1 and "fewer than the paper's least (5.6, GPT-2 XL)" in below[0]
    assert _plan(9000, 576).regime_lines() == []


def _cli(args, tmp_path):
    """The command in a fresh interpreter: its exit message and whether torch was imported before it refused."""
    code = (
        "import sys\nfrom jtc_utils.book.custom import command\ntry:\n    command.main(sys.argv[1:])\n"
        "except SystemExit as e:\n    print(e)\nprint('torch loaded:', 'torch' in sys.modules)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, *args, "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120
    )
    assert not (tmp_path / "out").exists()
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_the_custom_command_refuses_a_missing_text_at_once(tmp_path):
    out = _cli(["--model", "tiny-gpt2", "--text", str(tmp_path / "missing.txt")], tmp_path)
    assert "--text: " in out and "missing.txt does not exist; give a .txt file" in out
    assert "torch loaded: False" in out and "Traceback" not in out


def test_the_custom_command_reports_every_bad_input_at_once_the_model_first(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes.pdf").write_bytes(b"%PDF-1.4")
    out = _cli(
        [
            "--model",
            str(tmp_path / "empty"),
            "--text",
            str(tmp_path / "missing.txt"),
            "--text-news",
            str(tmp_path / "notes.pdf"),
            "--sentences",
            "3",
            "--jobs",
            "0",
        ],
        tmp_path,
    )
    assert "5 problem(s)" in out and "torch loaded: False" in out
    lines = [x.strip() for x in out.splitlines()]
    assert [x.split(":")[0] for x in lines if x.startswith("--")] == [
        "--model",
        "--text",
        "--text-news",
        "--sentences",
        "--jobs",
    ]
    assert "holds no config.json" in out and "is a .pdf file, not plain text" in out


def test_a_text_of_one_document_is_told_to_add_blank_lines(tmp_path):
    from jtc_utils.core.data import user_text

    one = tmp_path / "one.txt"
    one.write_text("\n".join(f"Sentence number {i} of the only document here." for i in range(300)) + "\n")
    with pytest.raises(
        ValueError,
        match="is one document .*no blank line separates its text into documents.*Put a "
        "blank line between its documents",
    ):
        user_text.prepare(one, 200, 50)


def test_no_folder_is_written_when_the_plan_refuses(tmp_path):
    """A text too short for the sizes (found by the plan, after the cheap checks): the message, and no folder."""
    short = tmp_path / "short.txt"
    short.write_text("Only one sentence is here.\n\nAnd a second one there.\n")
    with pytest.raises(SystemExit, match="--text: after filtering"):
        custom.main(
            ["--model", "tiny-gpt2", "--text", str(short), "--sentences", "100", "--out", str(tmp_path / "out")]
        )
    assert not (tmp_path / "out").exists()


def test_findings_are_refused_before_any_verdict_is_shown(nothing_written):
    """A page that pastes its findings grid must have shown a verdict first: with none shown the grid would be an
    empty table, so ``Chapter.findings`` stops with what to do instead (the real-model page opens with a sentence)."""
    with pytest.raises(RuntimeError, match=r"showed no verdict.*call chapter\.verdicts"):
        chapter.Chapter("tiny").findings()
