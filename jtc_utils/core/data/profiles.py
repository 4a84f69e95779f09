"""The profiles of the book: which model plays which of the paper's roles, and on which data.

``tiny`` (the default) is the embedded world: generated corpus, small models trained from scratch, runs offline
on a laptop. ``real`` is one real pretrained model (SmolLM2-135M, and the encoder MiniLM) on real Wikipedia and BBC
News sentences, offline, from registry packages. ``paper`` is the paper's exact models and data, for a user with
internet and a GPU. ``custom`` is a reader's own model on their own text (:func:`custom`), defined by a JSON spec
that :data:`CUSTOM_ENV` names, so that every kernel a run starts sees the same profile.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from jtc_utils.core.models import catalogue
from jtc_utils.core.data import user_text


@dataclass(frozen=True)
class Profile:
    name: str
    gpt: tuple  # GPT-style models, smallest to largest (the paper's 12/24/36/48 layers)
    bert: tuple  # BERT-style models (12/24 layers)
    main_domain: str  # the paper's Wikipedia
    second_domain: str  # the paper's Leipzig news
    texts: tuple = ()  # the custom profile: (domain, path of its text) pairs
    sizes: tuple = ()  # the custom profile: (training, validation) sentences of each domain
    one_model: bool = False  # one pretrained model in every role (real, custom): no sizes trained alike

    def __str__(self) -> str:
        """Its name: how a profile reads in a caption, a log line or a cache key (a key written with the object in
        place of its name is the same key)."""
        return self.name

    def subset(self, default: tuple) -> tuple:
        """The (training, validation) sentences a chapter that cannot afford a real model's whole split computes
        on: ``default`` (the real profile's subset), or the custom profile's own sizes where they are smaller."""
        return tuple(min(a, b) for a, b in zip(self.sizes, default)) if self.sizes else tuple(default)

    def role(self, role: str) -> str:
        """The model that plays a paper model's role: ``gpt12``/``gpt24``/``gpt36``/``gpt48`` (GPT-2 small to XL)
        or ``bert12``/``bert24`` (BERT base and large). ``gpt24`` and ``bert24`` are the ones the paper uses for
        early exit, sub-modules, Table 1 and the second domain."""
        roles = {
            "gpt12": self.gpt[0],
            "gpt24": self.gpt[1],
            "gpt36": self.gpt[2],
            "gpt48": self.gpt[3],
            "bert12": self.bert[0],
            "bert24": self.bert[1],
        }
        if role not in roles:
            raise ValueError(f"unknown role {role!r}; choose one of {', '.join(roles)}")
        return roles[role]

    def domain(self, which: str) -> str:
        """``main`` (the paper's Wikipedia) or ``second`` (the paper's Leipzig news)."""
        domains = {"main": self.main_domain, "second": self.second_domain}
        if which not in domains:
            raise ValueError(
                f"unknown domain role {which!r}; choose 'main' ({self.main_domain}) or 'second' ({self.second_domain})"
            )
        return domains[which]

    def text_key(self) -> dict:
        """What a cache key must add for the profile's text where the model's identity and the profile's name do not
        pin it: the SHA-256 of a custom profile's texts and its sizes (the reader may change them between runs);
        nothing for the other profiles, whose text is fixed."""
        if not self.texts:
            return {}
        texts = {domain: user_text.fingerprint(path) for domain, path in self.texts}
        return {"texts": texts, "sizes": list(self.sizes)}

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
    "tiny": Profile(
        "tiny",
        gpt=("tiny-gpt2", "tiny-gpt2-medium", "tiny-gpt2-large", "tiny-gpt2-xl"),
        bert=("tiny-bert-base", "tiny-bert-large"),
        main_domain="encyclopedia",
        second_domain="news",
    ),
    # offline, real: one real decoder (SmolLM2-135M, LLaMA family) plays every GPT role and one real headless encoder
    # (all-MiniLM-L6-v2) the BERT roles of the hidden-state chapters; Wikipedia leads and BBC News
    "real": Profile(
        "real",
        gpt=("smollm2-135m",) * 4,
        bert=("minilm-l6",) * 2,
        main_domain="wiki",
        second_domain="bbc",
        one_model=True,
    ),
    "paper": Profile(
        "paper",
        gpt=("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"),
        bert=("bert-base-uncased", "bert-large-uncased"),
        main_domain="wikipedia",
        second_domain="leipzig",
    ),
}

# which paper model each zoo model stands in for (a training-seed replica, the one its model stands in for)
PAPER_NAME = {
    **dict(zip(PROFILES["tiny"].models, PROFILES["paper"].models)),
    **{name: spec.stands_for for name, spec in catalogue.REPLICAS.items()},
}


CUSTOM_ENV = "JTC_CUSTOM_PROFILE"  # the path of the custom profile's JSON spec (see :func:`custom_spec`)
CUSTOM_SPEC = "profile.json"  # the spec's name in a custom book's folder (what CUSTOM_ENV points to there)
CUSTOM_SIZES = (9000, 3000)  # the custom profile's default training and validation sentences: the paper's


def custom(model: str, text, news=None, n_train: int = CUSTOM_SIZES[0], n_val: int = CUSTOM_SIZES[1]) -> Profile:
    """A reader's own model (a Hugging Face folder or hub id) on their own text (see
    :mod:`jtc_utils.core.data.user_text` for the forms it may take), in every role of the paper's models; ``news`` plays
    the second domain (the paper's news set) where given."""
    if not (isinstance(n_train, int) and isinstance(n_val, int) and n_train > 0 and n_val > 0):
        raise ValueError(f"the custom profile's sizes must be whole numbers above 0, got {n_train!r} and {n_val!r}")
    texts = (("text", str(text)),) + ((("news", str(news)),) if news is not None else ())
    return Profile(
        "custom",
        gpt=(str(model),) * 4,
        bert=(str(model),) * 2,
        main_domain="text",
        second_domain="news",
        texts=texts,
        sizes=(n_train, n_val),
        one_model=True,
    )


def custom_spec(profile: Profile) -> dict:
    """The JSON spec of a custom profile (what :data:`CUSTOM_ENV` points to)."""
    texts = dict(profile.texts)
    return {
        "model": profile.gpt[0],
        "text": texts["text"],
        "news": texts.get("news"),
        "n_train": profile.sizes[0],
        "n_val": profile.sizes[1],
    }


def _custom_from_env() -> Profile:
    path = os.environ.get(CUSTOM_ENV)
    if not path:
        raise ValueError(
            f"the custom profile is not defined in this process: set {CUSTOM_ENV} to the path of its "
            'JSON spec ({"model": ..., "text": ..., "news": null, "n_train": 9000, "n_val": 3000})'
        )
    try:
        spec = json.loads(open(path, encoding="utf-8").read())
        return custom(
            spec["model"],
            spec["text"],
            spec.get("news"),
            spec.get("n_train", CUSTOM_SIZES[0]),
            spec.get("n_val", CUSTOM_SIZES[1]),
        )
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"the custom profile's spec {path} ({CUSTOM_ENV}) cannot be read: {e}") from None


def name_of(profile: Profile | str) -> str:
    """The name of ``profile``, given as a :class:`Profile` or by its name (checked; a custom profile's spec is not
    read): for what only labels a result with its profile, such as a claim's verdict column."""
    if isinstance(profile, Profile):
        return profile.name
    if profile != "custom" and profile not in PROFILES:
        get(profile)  # raises the error that lists the profiles
    return profile


def get(name) -> Profile:
    """The profile called ``name``; a :class:`Profile` is returned as it is, so that a function may take either.
    ``custom`` is read from the spec :data:`CUSTOM_ENV` names."""
    if isinstance(name, Profile):
        return name
    if name == "custom":
        return _custom_from_env()
    if name not in PROFILES:
        raise ValueError(
            f"unknown profile {name!r}; choose 'tiny' (default, offline), 'real' (a real pretrained "
            f"model on real text, offline), 'paper' (needs internet and a GPU) or 'custom' (your model "
            f"on your text: set {CUSTOM_ENV})"
        )
    return PROFILES[name]


def real_sizes(n_train=None, n_val=None) -> tuple:
    """The real model's training and validation sizes: the notebook's parameters; when they are None (the full
    9,000 and 3,000), ``$JTC_REAL_SUBSET`` (``"train,val"``) if set: `make test` re-executes the pages on such a
    subset so that the tests stay within their time budget."""
    sub = os.environ.get("JTC_REAL_SUBSET", "").strip()
    if sub and n_train is None and n_val is None:
        try:
            n_train, n_val = (int(x) for x in sub.split(","))
        except ValueError:
            raise ValueError(f"JTC_REAL_SUBSET must be two whole numbers 'train,validation', got {sub!r}") from None
    return n_train, n_val
