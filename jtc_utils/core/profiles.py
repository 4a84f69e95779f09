"""The three profiles of the book: which model plays which of the paper's roles, and on which data.

``tiny`` (the default) is the embedded world: generated corpus, small models trained from scratch, runs offline
on a laptop. ``real`` is one real pretrained model (SmolLM2-135M, and the encoder MiniLM) on real Wikipedia and BBC
News sentences, offline, from registry packages. ``paper`` is the paper's exact models and data, for a user with
internet and a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    name: str
    gpt: tuple  # GPT-style models, smallest to largest (the paper's 12/24/36/48 layers)
    bert: tuple  # BERT-style models (12/24 layers)
    main_domain: str  # the paper's Wikipedia
    second_domain: str  # the paper's Leipzig news

    def role(self, role: str) -> str:
        """The model that plays a paper model's role: ``gpt12``/``gpt24``/``gpt36``/``gpt48`` (GPT-2 small to XL)
        or ``bert12``/``bert24`` (BERT base and large). ``gpt24`` and ``bert24`` are the ones the paper uses for
        early exit, sub-modules, Table 1 and the second domain."""
        roles = {"gpt12": self.gpt[0], "gpt24": self.gpt[1], "gpt36": self.gpt[2], "gpt48": self.gpt[3],
                 "bert12": self.bert[0], "bert24": self.bert[1]}
        if role not in roles:
            raise ValueError(f"unknown role {role!r}; choose one of {', '.join(roles)}")
        return roles[role]

    def domain(self, which: str) -> str:
        """``main`` (the paper's Wikipedia) or ``second`` (the paper's Leipzig news)."""
        domains = {"main": self.main_domain, "second": self.second_domain}
        if which not in domains:
            raise ValueError(f"unknown domain role {which!r}; choose 'main' ({self.main_domain}) or 'second' "
                             f"({self.second_domain})")
        return domains[which]

    @property
    def models(self) -> tuple:
        return self.gpt + self.bert

    @property
    def domains(self) -> tuple:
        """The profile's two domains: the main one (the paper's Wikipedia), then the second (its news)."""
        return self.main_domain, self.second_domain


# the real model's subset (training, validation sentences): what the chapters that cannot afford the whole real split
# compute on (each sentence costs a 30-layer forward pass), the student edition's real-model size, and the sizes
# `make test` re-executes the pages at (the Makefile's JTC_REAL_SUBSET)
REAL_SUBSET = (1200, 300)

PROFILES = {
    "tiny": Profile("tiny", gpt=("tiny-gpt2", "tiny-gpt2-medium", "tiny-gpt2-large", "tiny-gpt2-xl"),
                    bert=("tiny-bert-base", "tiny-bert-large"), main_domain="encyclopedia", second_domain="news"),
    # offline, real: one real decoder (SmolLM2-135M, LLaMA family) plays every GPT role and one real headless encoder
    # (all-MiniLM-L6-v2) the BERT roles of the hidden-state chapters; Wikipedia leads and BBC News
    "real": Profile("real", gpt=("smollm2-135m",) * 4, bert=("minilm-l6",) * 2, main_domain="wiki",
                    second_domain="bbc"),
    "paper": Profile("paper", gpt=("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"),
                     bert=("bert-base-uncased", "bert-large-uncased"), main_domain="wikipedia",
                     second_domain="leipzig"),
}

# which paper model each zoo model stands in for
PAPER_NAME = dict(zip(PROFILES["tiny"].models, PROFILES["paper"].models))


def get(name) -> Profile:
    """The profile called ``name``; a :class:`Profile` is returned as it is, so that a function may take either."""
    if isinstance(name, Profile):
        return name
    if name not in PROFILES:
        raise ValueError(f"unknown profile {name!r}; choose 'tiny' (default, offline), 'real' (a real pretrained "
                         f"model on real text, offline) or 'paper' (needs internet and a GPU)")
    return PROFILES[name]
