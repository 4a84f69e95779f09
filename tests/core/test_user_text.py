"""A reader's own text (issue 36): the three plain forms give the same documents, the real profile's pipeline makes
them sentences deterministically with no document in both splits, and every bad input is refused with its fix."""

import json

import pytest

from jtc_utils.core.data import user_text

SENTENCES = [f"The river number {i} flows slowly through the old town of Ashford." for i in range(60)]


def _docs(n_docs: int = 12) -> list[list[str]]:
    """Documents of five sentences each, one paragraph of two sentences and one of three."""
    per = len(SENTENCES) // n_docs
    docs = [SENTENCES[i * per : (i + 1) * per] for i in range(n_docs)]
    return [[" ".join(d[:2]), " ".join(d[2:])] for d in docs]


def _write_all(tmp_path):
    docs = _docs()
    txt = tmp_path / "all.txt"
    txt.write_text("\n\n".join("\n".join(d) for d in docs) + "\n")
    folder = tmp_path / "folder"
    folder.mkdir()
    for i, d in enumerate(docs):
        (folder / f"doc{i:02d}.txt").write_text("\n".join(d) + "\n")
    jsonl = tmp_path / "all.jsonl"
    jsonl.write_text("".join(json.dumps({"text": "\n".join(d), "id": i}) + "\n" for i, d in enumerate(docs)))
    return txt, folder, jsonl


def test_the_three_forms_give_the_same_documents_and_sentences(tmp_path):
    forms = _write_all(tmp_path)
    assert [len(user_text.documents(f)) for f in forms] == [12, 12, 12]
    # a block's lines are one paragraph in a .txt file (hard wrapping), a .jsonl line's newlines separate them
    text = [[" ".join(ps) for _, ps in user_text.documents(f)] for f in forms]
    assert text[0] == text[1] == text[2] == [" ".join(d) for d in _docs()]
    sents = [user_text.prepare(f, 40, 10) for f in forms]
    assert sents[0]["counts"]["sentences"] == sents[1]["counts"]["sentences"] == sents[2]["counts"]["sentences"] == 60


def test_a_hard_wrapped_text_keeps_every_sentence(tmp_path):
    import textwrap

    sents = [
        f"Clause {i}: the licensee may copy, modify and distribute the work, provided that every copy keeps "
        f"notice number {i} intact and unaltered."
        for i in range(90)
    ]
    paragraphs = [" ".join(sents[i : i + 3]) for i in range(0, 90, 3)]
    wrapped = "\n\n".join(textwrap.fill(p, width=72, break_on_hyphens=False) for p in paragraphs) + "\n"
    assert max(map(len, wrapped.splitlines())) <= 72 and wrapped.count("\n") > 150  # really wrapped
    (tmp_path / "licence.txt").write_text(wrapped)
    got = user_text.prepare(tmp_path / "licence.txt", 60, 30)
    assert got["counts"]["sentences"] == 90 and sorted(got["train"] + got["validation"]) == sorted(sents)
    (tmp_path / "hyphen.txt").write_text("A well-\nknown rule holds here, as every reader of the text knows.\n")
    assert user_text.documents(tmp_path / "hyphen.txt")[0][1] == [
        "A well-known rule holds here, as every reader of the text knows."
    ]


def test_a_folder_of_a_few_files_meets_the_asked_sizes(tmp_path):
    """Three files of 150, 110 and 80 sentences (340 in all) and 240 + 60 asked: with whole files as the unit no
    split works once the largest file is drawn for validation; with the blocks of each file as documents it does,
    and no block gives sentences to both splits."""
    sents = _sentences(340)
    folder = tmp_path / "folder"
    folder.mkdir()
    start = 0
    for name, n in (("a.txt", 150), ("b.txt", 110), ("c.txt", 80)):
        mine = sents[start : start + n]
        (folder / name).write_text("\n\n".join(" ".join(mine[i : i + 5]) for i in range(0, n, 5)) + "\n")
        start += n
    for seed in range(5):
        got = user_text.prepare(folder, 240, 60, seed=seed)
        assert (len(got["train"]), len(got["validation"])) == (240, 60)
        block = {s: i // 5 for i, s in enumerate(sents)}  # every block holds five sentences
        assert not {block[s] for s in got["train"]} & {block[s] for s in got["validation"]}
    card = user_text.data_card(folder, 240, 60)
    assert card["split"] == user_text.SPLIT_RULE and "blank-line-separated blocks" in card["split"]


def test_sentences_are_split_by_document_and_the_same_twice(tmp_path):
    txt, _, _ = _write_all(tmp_path)
    a = user_text.prepare(txt, 40, 10)
    assert a == user_text.prepare(txt, 40, 10)
    assert len(a["train"]) == 40 and len(a["validation"]) == 10
    doc_of = {s: i // 5 for i, s in enumerate(SENTENCES)}
    assert not {doc_of[s] for s in a["train"]} & {doc_of[s] for s in a["validation"]}
    assert a["counts"]["documents"] == 12 and a["counts"]["sentences"] == 60
    assert user_text.prepare(txt, 40, 10, seed=1)["validation"] != a["validation"]
    card = user_text.data_card(txt, 40, 10)
    assert card["sha256"] == user_text.fingerprint(txt) and card["examples"] == a["train"][:3]


def test_too_little_text_names_the_counts_and_the_fix(tmp_path):
    txt, _, _ = _write_all(tmp_path)
    with pytest.raises(
        ValueError,
        match=r"all.txt has 60 sentences in all, fewer than the 100 train and 10 "
        r"validation sentences asked for; give more text, or ask for fewer sentences",
    ):
        user_text.prepare(txt, 100, 10)
    # enough in all, but one document too large to leave training its share: said so, with the same fix
    (tmp_path / "two.txt").write_text(" ".join(SENTENCES[:40]) + "\n\n" + " ".join(SENTENCES[40:]) + "\n")
    with pytest.raises(
        ValueError,
        match=r"two.txt has \d+ train and \d+ validation sentences, fewer than the 30 and "
        r"25 asked for: its documents .* too few and too large to split",
    ):
        user_text.prepare(tmp_path / "two.txt", 30, 25)


@pytest.mark.parametrize(
    "name,content,message",
    [
        ("missing.txt", None, "does not exist"),
        ("empty.txt", b"\n \n", "holds no text"),
        ("binary.txt", b"\x89PNG\r\n\x1a\n\x00\x00", "not a text file"),
        ("latin1.txt", "Caf\xe9 au lait is served here every day.".encode("latin-1"), "not UTF-8 text .*iconv"),
        (
            "notes.pdf",
            b"%PDF-1.4",
            r"is a \.pdf file, not plain text: convert it \(e\.g\. `pdftotext notes.pdf notes.txt`\)",
        ),
        ("LICENSE", b"\x00\x01 compiled", "not a text file"),
        ("bad.jsonl", b'{"text": "fine"}\nnot json\n', "line 2: not JSON"),
        ("nofield.jsonl", b'{"body": "no text field"}\n', "line 1: no 'text' string"),
    ],
)
def test_bad_text_is_refused_with_its_fix(tmp_path, name, content, message):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(user_text.TextInputError, match=message):
        user_text.documents(path)


def test_a_plain_text_file_of_any_name_is_read_as_text(tmp_path):
    """A licence or a README, whatever its name (/usr/share/common-licenses/GPL-3 has none), is a .txt file."""
    text = "The first paragraph, hard-wrapped\nat a narrow column.\n\nThe second paragraph.\n"
    (tmp_path / "GPL-3").write_text(text)
    (tmp_path / "notes.md").write_text(text)
    (tmp_path / "same.txt").write_text(text)
    expected = user_text.documents(tmp_path / "same.txt")
    assert user_text.documents(tmp_path / "GPL-3") == expected == user_text.documents(tmp_path / "notes.md")
    assert expected[0][1] == ["The first paragraph, hard-wrapped at a narrow column."]


def test_a_folder_without_text_files_is_refused(tmp_path):
    (tmp_path / "data.csv").write_text("a,b\n")
    with pytest.raises(user_text.TextInputError, match="holds no .txt files"):
        user_text.documents(tmp_path)


# --- the custom profile: a reader's model on their text, through the core ---------------------------------------


def _sentences(n: int) -> list[str]:
    rivers = ("quiet", "wide", "cold", "old", "slow", "bright")
    return [
        f"The {rivers[i % 6]} river number {i} flows past the mill of Ashford and {i % 7 + 2} bridges."
        for i in range(n)
    ]


def test_a_custom_profile_reads_its_spec_and_its_text(tmp_path, monkeypatch):
    from jtc_utils.core.data import profiles, sources

    text = tmp_path / "mine.txt"
    sents = _sentences(300)
    text.write_text("\n\n".join(" ".join(sents[i : i + 3]) for i in range(0, 300, 3)) + "\n")  # 100 documents
    spec = tmp_path / "profile.json"
    spec.write_text(json.dumps(profiles.custom_spec(profiles.custom("some/model", text, n_train=150, n_val=60))))
    monkeypatch.setenv(profiles.CUSTOM_ENV, str(spec))
    p = profiles.get("custom")
    assert p.role("gpt48") == p.role("bert24") == "some/model" and p.domains == ("text", "news")
    train = [s.text for s in sources.sentences("custom", "text", "train")]
    val = [s.text for s in sources.sentences("custom", "text", "validation", n=20)]
    assert len(train) == 150 and len(val) == 20 and set(train) <= set(sents) and not set(train) & set(val)
    with pytest.raises(ValueError, match="no 'news' text .*--text-news"):
        sources.sentences("custom", "news", "train")
    spec.write_text("{not json")
    with pytest.raises(ValueError, match="spec .* cannot be read"):
        profiles.get("custom")
    monkeypatch.delenv(profiles.CUSTOM_ENV)
    with pytest.raises(ValueError, match="custom profile is not defined"):
        profiles.get("custom")


@pytest.mark.parametrize("family", ["gpt2", "llama", "bert"])
def test_an_experiment_runs_on_a_readers_model_and_text(tmp_path, monkeypatch, family):
    """A random model saved in Hugging Face layout and a text file: the experiment's hidden states, fits and r²."""
    import numpy as np

    from helpers import save_random_model
    from jtc_utils.core.infra import cache
    from jtc_utils.core.data import profiles
    from jtc_utils.core.analysis.experiment import Experiment

    monkeypatch.setattr(cache, "CACHE_DIR", tmp_path / "cache")
    model = save_random_model(family, tmp_path / family)
    text = tmp_path / "mine.jsonl"
    sents = _sentences(240)
    text.write_text("".join(json.dumps({"text": " ".join(sents[i : i + 4])}) + "\n" for i in range(0, 240, 4)))
    spec = tmp_path / "profile.json"
    spec.write_text(json.dumps(profiles.custom_spec(profiles.custom(model, text, n_train=160, n_val=40))))
    monkeypatch.setenv(profiles.CUSTOM_ENV, str(spec))
    exp = Experiment(str(model), "text", profile="custom")
    assert (len(exp.train), len(exp.val)) == (160, 40) and exp.adapter.family == family
    r2 = exp.layer_r2()
    L = exp.n_layers
    assert r2["r2_mat"].shape == (L + 1, L + 1) and np.allclose(np.diag(r2["r2_mat"]), 1)
    again = Experiment(str(model), "text", profile="custom")
    np.testing.assert_array_equal(again.layer_r2()["r2_mat"], r2["r2_mat"])
