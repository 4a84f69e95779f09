"""The zoo's catalogue: which small models the embedded profile has (their specs), where their files and tokenizers
live, and the committed checksums that every load checks. What the loaders need; training them is
:mod:`jtc_utils.training.zoo`."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path

from jtc_utils.core.infra.paths import ZOO_DIR, atomic_write_text, file_fingerprint

GPT_TOKENIZER_DIR = ZOO_DIR / "tokenizer-gpt"
BERT_TOKENIZER_DIR = ZOO_DIR / "tokenizer-bert"
VOCAB_SIZE = 4096
MAX_LEN = 256  # positions; the longest generated sentence is far shorter


@dataclass(frozen=True)
class Spec:
    name: str
    family: str  # "gpt2" or "bert": the properties below give each family's facts
    n_layer: int
    d: int
    n_head: int
    tokens: int  # training budget in (non-padding) tokens
    stands_for: str  # the paper's model this one stands in for
    lr: float = 2e-3
    batch: int = 64
    mask_prob: float = 0.15  # BERT-style only: share of tokens to predict
    seed: int = 0  # the training seed (initialisation, batch order, masking) added to the corpus seed; the texts
    # are the corpus seed's, so replicas of one model differ in their training randomness only

    # the family's facts, in one place: what the zoo's training and evaluation ask of a model spec
    @property
    def causal(self) -> bool:
        """Whether the model predicts the next token (GPT-style) rather than masked tokens (BERT-style)."""
        return self.family == "gpt2"

    @property
    def tokenizer_dir(self) -> Path:
        """The zoo's tokenizer of the family: byte-level BPE for GPT-style models, WordPiece for BERT-style ones."""
        return GPT_TOKENIZER_DIR if self.causal else BERT_TOKENIZER_DIR

    @property
    def model_class(self) -> str:
        """The ``transformers`` class the model is trained and saved as."""
        return "GPT2LMHeadModel" if self.causal else "BertForMaskedLM"

    @property
    def special_tokens(self) -> bool:
        """Whether a sentence is encoded with the tokenizer's special tokens (BERT's [CLS] ... [SEP])."""
        return not self.causal


ZOO = {
    s.name: s
    for s in [  # in training order: the small ones first
        Spec("tiny-gpt2", "gpt2", 6, 48, 4, 1_500_000, "gpt2"),
        Spec("tiny-bert-base", "bert", 6, 48, 4, 5_000_000, "bert-base-uncased", lr=3e-3, mask_prob=0.3),
        Spec("tiny-gpt2-medium", "gpt2", 12, 64, 4, 1_500_000, "gpt2-medium"),
        Spec("tiny-bert-large", "bert", 12, 64, 4, 6_000_000, "bert-large-uncased", lr=3e-3, mask_prob=0.3),
        Spec("tiny-gpt2-large", "gpt2", 18, 80, 4, 1_500_000, "gpt2-large"),
        Spec("tiny-gpt2-xl", "gpt2", 24, 96, 4, 1_500_000, "gpt2-xl"),
    ]
}

# Training-seed replicas of the GPT2-XL stand-in (the verdicts' second review): the same architecture, budget and
# texts, other initialisation and batch order. Not part of ZOO (the book's model list); loaded by name all the same.
REPLICAS = {s.name: s for s in [replace(ZOO["tiny-gpt2-xl"], name=f"tiny-gpt2-xl-seed{k}", seed=k) for k in (1, 2)]}
ALL = {**ZOO, **REPLICAS}


def replicas_of(name: str) -> list[str]:
    """The zoo model and its training-seed replicas, seed 0 first."""
    return [name] + [r for r, spec in REPLICAS.items() if replace(spec, name=name, seed=0) == ZOO.get(name)]


# ---------------------------------------------------------------------------------------------------------
# checksums of every committed file, checked whenever a zoo model is loaded
MANIFEST_NAME = "SHA256SUMS"


def manifest_path() -> Path:
    return ZOO_DIR / MANIFEST_NAME


# a trained lens staged beside the ones the book reads (retrained under a new recipe, run by run, until every run the
# book needs exists): neither in the manifest nor an input of any page until the book reads it; its key, embedded in
# the file, is what checks it
STAGED_SUFFIX = ".converged.safetensors"


def staged(path: Path) -> bool:
    return path.name.endswith(STAGED_SUFFIX)


def _zoo_files() -> list[Path]:
    return sorted(
        p
        for p in ZOO_DIR.rglob("*")
        if p.is_file()
        and p != manifest_path()
        and not {"_work"} & set(p.relative_to(ZOO_DIR).parts)
        and not p.parent.name.endswith(".tmp")
        and not staged(p)
    )


def write_manifest() -> Path:
    """Write ``zoo/SHA256SUMS`` (``sha256sum`` format: ``cd zoo && sha256sum -c SHA256SUMS`` checks it)."""
    lines = [f"{file_fingerprint(p)}  {p.relative_to(ZOO_DIR).as_posix()}" for p in _zoo_files()]
    atomic_write_text(manifest_path(), "\n".join(lines) + "\n")
    return manifest_path()


def manifest(name: str) -> dict[str, str]:
    """The committed checksums of the files of ``zoo/<name>/``: {file name: sha256}."""
    if not manifest_path().exists():
        raise FileNotFoundError(f"{manifest_path()} is missing; restore it with `git checkout -- zoo/{MANIFEST_NAME}`")
    out = {}
    for line in manifest_path().read_text().splitlines():
        digest, _, rel = line.partition("  ")
        folder, _, fname = rel.partition("/")
        if folder == name:
            out[fname] = digest
    return out


def manifest_digest(name: str) -> str:
    """One SHA-256 for the committed state of a zoo model (all its files), from the manifest."""
    return hashlib.sha256(json.dumps(manifest(name), sort_keys=True).encode()).hexdigest()


def verify_files(name: str) -> list[str]:
    """What is wrong with the files of ``zoo/<name>/`` against the manifest (an empty list when nothing is)."""
    try:
        expected = manifest(name)
    except FileNotFoundError as e:
        return [str(e)]
    if not expected:
        return [f"the manifest {MANIFEST_NAME} lists no files for {name}"]
    folder = ZOO_DIR / name
    problems = [f"{f} is missing" for f in expected if not (folder / f).is_file()]
    problems += [
        f"{f} has changed (checksum differs)"
        for f in expected
        if (folder / f).is_file() and file_fingerprint(folder / f) != expected[f]
    ]
    if folder.is_dir():
        problems += [
            f"{p.name} is not in the manifest"
            for p in sorted(folder.iterdir())
            if p.is_file() and p.name not in expected
        ]
    return problems


def load_card(name: str) -> dict:
    """The model card of a zoo model (written by training)."""
    if name not in ALL:
        raise ValueError(f"unknown zoo model {name!r}; the zoo has: {', '.join(ALL)}")
    path = ZOO_DIR / name / "card.json"
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing; train the model with `python -m jtc_utils.training.zoo train "
            f"--only {name}` or restore it with `git checkout -- zoo/{name}`"
        )
    return json.loads(path.read_text())


def zoo_size_bytes() -> int:
    """Bytes the committed zoo takes (models, tokenizers, cards)."""
    return sum(p.stat().st_size for p in ZOO_DIR.rglob("*") if p.is_file() and "_work" not in p.parts)
