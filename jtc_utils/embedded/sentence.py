"""One generated sentence with a label on every word (:class:`Sentence`), and the builder the grammar writes it
with (:class:`Builder`)."""

from __future__ import annotations

from dataclasses import dataclass

_NO_SPACE_BEFORE = {",", ".", ";", ":", ")", "%"}
_NO_SPACE_AFTER = {"("}


@dataclass(frozen=True)
class Sentence:
    """One generated sentence: its text and, for every word, its character span and label."""

    text: str
    domain: str
    spans: tuple  # ((start, end, label), ...)

    def words(self) -> list[tuple[str, str]]:
        return [(self.text[a:b], lab) for a, b, lab in self.spans]

    def label_at(self, start: int, end: int) -> str:
        """Label of the word that a token with character offsets [start, end) belongs to.

        Sub-word tokens take the label of their word; a token holding only whitespace (the trailing
        newline of an encyclopedia sentence) is ``punct``.
        """
        for a, b, lab in self.spans:
            if a < end and start < b:
                return lab
        return "punct"


class Builder:
    """A sentence built word by word, each word with its label (one method per label); :meth:`build` joins them."""

    def __init__(self):
        self.parts: list[tuple[str, str]] = []

    def add(self, text: str, label: str) -> "Builder":
        for w in text.split():
            self.parts.append((w, label))
        return self

    def f(self, text):
        return self.add(text, "function")

    def c(self, text):
        return self.add(text, "content")

    def e(self, text):
        return self.add(text, "entity")

    def fact(self, text):
        return self.add(text, "fact")

    def n(self, text):
        return self.add(str(text), "number")

    def a(self, text):
        return self.add(text, "agree")

    def p(self, text):
        return self.add(text, "punct")

    def build(self, domain: str, newline: bool) -> Sentence:
        text, spans = [], []
        pos = 0
        quote_open = False
        for i, (w, lab) in enumerate(self.parts):
            space = i > 0 and w not in _NO_SPACE_BEFORE and self.parts[i - 1][0] not in _NO_SPACE_AFTER
            if w == '"':
                if quote_open:
                    space = False
                quote_open = not quote_open
            elif i > 0 and self.parts[i - 1][0] == '"' and quote_open:
                space = False
            if space:
                text.append(" ")
                pos += 1
            text.append(w)
            spans.append((pos, pos + len(w), lab))
            pos += len(w)
        s = "".join(text)
        if newline:  # like the paper's Wikipedia sentences, which keep their trailing newline
            s += "\n"
        return Sentence(text=s, domain=domain, spans=tuple(spans))
