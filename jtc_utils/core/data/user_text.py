"""A reader's own text, made into an experiment's sentences exactly as the real profile's text is.

It comes as a plain-text file (blank lines separate documents; a document's hard-wrapped lines are joined, a hyphen
at a line's end without a space), a folder of ``.txt`` files (searched recursively; each file's blank-line-separated
blocks are documents ``file.txt#k``) or a JSON Lines file (one ``{"text": ...}`` document per line). From there the
real profile's pipeline runs unchanged (:func:`jtc_utils.core.data.real_text.prepare`), split by document
(:data:`SPLIT_RULE`). Anything that is not UTF-8 text is refused with the problem and the fix, before any work.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

from jtc_utils.core.data import real_text

FORMS = (
    "a .txt file (or a plain-text file of another name), a folder of .txt files, or a .jsonl file with a "
    "'text' field per line"
)
# documents that are not plain text whatever their bytes look like at first: refused by name, with how to convert them
NOT_TEXT = {
    ".pdf": "pdftotext {name} {stem}.txt",
    ".doc": "libreoffice --convert-to txt {name}",
    ".docx": "libreoffice --convert-to txt {name}",
    ".odt": "libreoffice --convert-to txt {name}",
    ".rtf": "libreoffice --convert-to txt {name}",
    ".epub": "ebook-convert {name} {stem}.txt",
    ".zip": "unzip {name}",
    ".gz": "gunzip {name}",
    ".bz2": "bunzip2 {name}",
    ".xz": "unxz {name}",
    ".tar": "tar xf {name}",
}
SPLIT_RULE = (
    "documents are the blank-line-separated blocks of a .txt file (of each file, in a folder) or the lines "
    "of a .jsonl file; the lines of a block are joined into one paragraph (hard-wrapped text); the "
    "documents, in an order shuffled with the seed, go to validation while it has fewer sentences than "
    "asked and the others still hold enough for training, the rest to training: no document gives "
    "sentences to both splits"
)
TOO_FEW = "; give more text, or ask for fewer sentences (--sentences N)"


class TextInputError(ValueError):
    """The text given cannot be read as text; the message names the file, the problem and the fix."""


def _read(path: Path) -> str:
    raw = path.read_bytes()
    if b"\x00" in raw:
        raise TextInputError(f"{path} is not a text file (it holds NUL bytes: a binary file?); give {FORMS}")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise TextInputError(
            f"{path} is not UTF-8 text (byte {e.start} is {raw[e.start]:#04x}); save it as UTF-8 "
            f"(e.g. `iconv -f latin1 -t utf-8 {path.name} > fixed.txt`)"
        ) from None


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _blocks(text: str) -> list[str]:
    """The blank-line-separated blocks of ``text``, each one paragraph: its lines joined by a space (without one
    after a line that ends in a hyphen)."""
    blocks, block = [], ""
    for line in text.splitlines() + [""]:
        line = line.strip()
        if line:
            block = line if not block else block + line if block.endswith("-") else f"{block} {line}"
        elif block:
            blocks.append(block)
            block = ""
    return blocks


def check_path(path) -> Path:
    """``path`` as a :class:`~pathlib.Path`, if it is one of the three forms (see the module's docstring); only
    names are looked at (nothing is read), so that a command can check its every input at once, first."""
    path = Path(path).expanduser()
    if not path.exists():
        raise TextInputError(f"{path} does not exist; give {FORMS}")
    if path.is_dir():
        if not any(p.is_file() for p in path.rglob("*.txt")):
            raise TextInputError(f"the folder {path} holds no .txt files; give {FORMS}")
    elif path.suffix.lower() in NOT_TEXT:
        how = NOT_TEXT[path.suffix.lower()].format(name=path.name, stem=path.stem)
        raise TextInputError(
            f"{path} is a {path.suffix} file, not plain text: convert it (e.g. `{how}`) and give {FORMS}"
        )
    return path  # any other file is read as plain text, and refused then if it is not (NUL bytes, not UTF-8)


def documents(path) -> list[tuple[str, list[str]]]:
    """``[(document id, [paragraph, ...]), ...]`` of the text at ``path``, in a fixed order (see the module's
    docstring for the three forms)."""
    path = check_path(path)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.txt") if p.is_file())
        docs = [
            (f"{p.relative_to(path).as_posix()}#{k}", [b]) for p in files for k, b in enumerate(_blocks(_read(p)), 1)
        ]
    elif path.suffix == ".jsonl":
        docs = []
        for i, line in enumerate(_read(path).splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise TextInputError(
                    f"{path}, line {i}: not JSON ({e.msg}); each line must be an object such as {{\"text\": \"...\"}}"
                ) from None
            if not isinstance(record, dict) or not isinstance(record.get("text"), str):
                raise TextInputError(
                    f"{path}, line {i}: no 'text' string; each line must be an object such as {{\"text\": \"...\"}}"
                )
            docs.append((f"line {i}", _lines(record["text"])))
    else:
        docs = [(f"document {i}", [b]) for i, b in enumerate(_blocks(_read(path)), 1)]
    if not any(paragraphs for _, paragraphs in docs):
        raise TextInputError(f"{path} holds no text; give {FORMS}")
    return docs


def fingerprint(path) -> str:
    """SHA-256 of the text's files (names and contents), for cache keys and the data card."""
    path = check_path(path)
    files = sorted(p for p in path.rglob("*.txt") if p.is_file()) if path.is_dir() else [path]
    h = hashlib.sha256()
    for p in files:
        h.update((p.relative_to(path).as_posix() if path.is_dir() else p.name).encode())
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def prepare(path, n_train: int, n_val: int, seed: int = 0) -> dict:
    """The ``train`` and ``validation`` sentences (``n_train`` and ``n_val`` of them) of the text at ``path``, with
    the counts of every step; too few sentences after filtering: a ValueError with the counts and the fix."""
    want = {"train": n_train, "validation": n_val}
    return real_text.prepare(documents(path), want, f"user/{seed}", Path(path).name, TOO_FEW)


def data_card(path, n_train: int, n_val: int, seed: int = 0, examples: int = 3) -> dict:
    """Where the sentences come from and what was done to them: the path and its SHA-256, the filters, the count
    after each step, the split sizes and a few training examples."""
    data = prepare(path, n_train, n_val, seed)
    return {
        "source": str(Path(path)),
        "sha256": fingerprint(path),
        "seed": seed,
        "split": SPLIT_RULE,
        "filters": {name: desc for name, (desc, _) in real_text.FILTERS.items()},
        "counts": data["counts"],
        "train": len(data["train"]),
        "validation": len(data["validation"]),
        "examples": data["train"][:examples],
    }


def prepared(path, n_train: int, n_val: int, seed: int = 0) -> dict:
    """:func:`prepare`, computed once per text (its files' contents) and sizes in a process."""
    return _prepared(str(path), fingerprint(path), n_train, n_val, seed)


@lru_cache(maxsize=4)
def _prepared(path: str, digest: str, n_train: int, n_val: int, seed: int) -> dict:
    return prepare(path, n_train, n_val, seed)
