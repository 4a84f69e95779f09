"""Every lens as a reader meets it in a legend or a table: the labels (``njtc_4``) are the figures' keys, these are
their names."""

from __future__ import annotations

from .registry import label_of

NAMES = {
    "id": "id (logit lens)",
    "mat": "JTC (mat)",
    "njtc": "NJTC",
    "nnjtc": "N-NJTC",
    "rrr": "RRR (optimum)",
    "arrr": "aRRR (optimum + intercept)",
    "mat+b": "mat + b",
    "tuned": "tuned lens",
    "tuned-lin": "tuned, no bias",
    "tuned<-mat": "tuned, from mat",
}


def reader_name(label: str) -> str:
    """A lens's label as legends and tables name it: ``njtc_4`` is "NJTC r=4", ``mat`` is "JTC (mat)"."""
    base, rank = label_of(label)
    return NAMES.get(base, base) + (f" r={rank}" if rank is not None else "")
