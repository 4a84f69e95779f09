"""Every lens of the book by name: how it is fitted, what it optimises, how many parameters it has per layer.

    get("id"), get("mat"), get("mat+b"), get("rrr", rank=4), get("arrr", rank=4), get("njtc", rank=4),
    get("nnjtc", rank=4), get("tuned"), get("tuned-lin"), get("tuned<-mat")

Trained lenses (NJTC, N-NJTC, tuned) are keyed on the model's weights, the train samples, the hyper-parameters and
the recipe: found in the committed ``zoo/lenses`` (see :mod:`.artifacts`), else in the on-disk cache, else trained.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Callable

import numpy as np

from jtc_utils.core.infra import cache
from jtc_utils.core.models import catalogue, real_models
from jtc_utils.core.infra.cache import key_hash
from jtc_utils.core.analysis.hidden import sample_digests, samples_identity
from jtc_utils.core.infra.paths import file_fingerprint
from jtc_utils.core.data.samples import make_samples

from . import artifacts, closed_form, lowrank, tuned
from .base import LensError, NotFittedError, StaleLensError, lens_label


class Method(StrEnum):
    """How a lens's maps are found (a string: its value is what the tables show)."""

    IDENTITY = "identity"
    LEAST_SQUARES = "least squares"
    REDUCED_RANK = "reduced rank"
    GRADIENT_DESCENT = "gradient descent"
    TUNED_LENS = "tuned lens"

    @property
    def trained(self) -> bool:
        """Whether the maps are trained (by gradient descent or as a tuned lens), so that a seed picks a run."""
        return self in (Method.GRADIENT_DESCENT, Method.TUNED_LENS)


@dataclass(frozen=True)
class LensSpec:
    name: str
    method: Method  # how its maps are found
    objective: str  # what the fit minimises: "none", "MSE" (hidden space), "KL" (output space)
    fit: Callable
    params: Callable  # (d, rank) -> trained parameters per layer
    rank: bool = False  # needs a rank
    description: str = ""


# files of a real model's converted folder that record where the package file was, not what the model is
_LOCATION_FILES = ("SOURCE.json",)
_LOCATION_FIELDS = ("_name_or_path",)  # of config.json


def lens_model_identity(ad) -> str:
    """The model's identity in a trained lens's key: the adapter's ``identity``
    (:func:`jtc_utils.core.models.models.model_identity`), except for a real model. Its converted folder records the
    absolute path of the package file it was made from (``SOURCE.json``, ``config.json``'s ``_name_or_path``), so its
    identity differs between two checkouts of the same commit and a committed lens would be missed (and retrained) in
    every other checkout. For a real model the key holds the package file's pinned checksum and the folder's content
    without those paths."""
    import hashlib
    import json

    if ad.name not in real_models.REAL_MODELS:
        return ad.identity
    folder = real_models.folder(ad.name)
    h = hashlib.sha256()
    for f in sorted(p for p in folder.iterdir() if p.is_file() and p.name not in _LOCATION_FILES):
        if f.name == "config.json":
            cfg = {k: v for k, v in json.loads(f.read_text()).items() if k not in _LOCATION_FIELDS}
            digest = hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()
        else:
            digest = file_fingerprint(f)
        h.update(f"{f.name}\0{digest}\n".encode())
    return f"real:{real_models.spec(ad.name).sha256}:content:{h.hexdigest()}"


def lens_key(exp, label: str, hp: dict, recipe: dict) -> dict | None:
    """What a trained lens depends on, or None for hidden states that come without a model (tests)."""
    ad = getattr(exp, "adapter", None)
    if ad is None or not hasattr(exp, "train"):
        return None

    return {
        "what": "lens",
        "lens": label,
        "hp": hp,
        "recipe": recipe,
        "model": lens_model_identity(ad),
        "train": samples_identity(exp.train),
        "n_layers": getattr(exp, "n_layers", None) or exp.X_train.shape[0] - 1,
    }  # (no extraction for the key)


# the recipe of a model's low-rank lenses (:func:`lowrank_recipe`): CONVERGED (the convergence rule) for the models
# whose every run the book reads has been trained under it (BOOK_CONVERGED), RECIPE (at most 300 epochs) for the
# others until then. ``python -m jtc_utils.lenses.train --converged`` (TRAIN_CONVERGED) trains the others under
# CONVERGED too, stored beside the book's lenses with their file names tagged CONVERGED_TAG (staged: no page's input
# until the book reads them)
BOOK_CONVERGED = frozenset({"tiny-gpt2-xl"})
TRAIN_CONVERGED = False
CONVERGED_TAG = catalogue.STAGED_SUFFIX.removesuffix(".safetensors")


def lowrank_recipe(model: str) -> dict:
    """The recipe ``model``'s NJTC and N-NJTC are read (or, with :data:`TRAIN_CONVERGED`, trained) under."""
    return lowrank.CONVERGED if model in BOOK_CONVERGED or TRAIN_CONVERGED else lowrank.RECIPE


def staged(model: str, recipe: dict) -> bool:
    """Whether a lens of ``model`` trained under ``recipe`` is staged: trained under the convergence rule for a model
    whose book still reads the capped recipe (its file name tagged :data:`CONVERGED_TAG`)."""
    return "converge_gap" in recipe and model not in BOOK_CONVERGED


# set by ``python -m jtc_utils.lenses.train``: trained lenses are written to ``zoo/lenses`` instead of the cache
STORE_ARTIFACTS = False
# set by the tests: a trained lens missing from ``zoo/lenses`` (or stale there) is an error instead of a training run
REQUIRE_ARTIFACTS = False


def file_label(label: str, hp: dict) -> str:
    """The name a trained lens is stored under: its label and its seed (``njtc_4_s1``, ``tuned_s0``)."""
    suffix = f"_s{hp['seed']}" if "seed" in hp else ""
    return label if label.endswith(suffix) else label + suffix


def whole_split_key(exp, label: str, hp: dict, recipe: dict) -> dict | None:
    """The key of ``label`` trained on the whole train split of which ``exp``'s train samples are the first n (the
    tests' and the student edition's subset of the real model), or None when ``exp`` reads the whole split or
    its samples are not such a prefix."""

    key = lens_key(exp, label, hp, recipe)
    if key is None or getattr(exp, "n_train", None) is None:
        return None
    ad = exp.adapter
    whole = make_samples(ad.tokenizer, ad.family, exp.domain, "train", n=None, profile=exp.profile.name, seed=exp.seed)
    n = len(exp.train)
    if len(whole) <= n or sample_digests(whole)[:n] != sample_digests(exp.train):
        return None
    return {**key, "train": samples_identity(whole)}


def trained(exp, label: str, hp: dict, recipe: dict, compute, whole_split: bool = False) -> dict:
    """``compute()`` for a trained lens, from the committed artifacts or the cache when trained before.

    ``whole_split``: a lens too costly to train in the build (the real model's tuned lens: a GPU job) is, on a
    subset of the train split, the committed one trained on the whole split; its card says on how many."""
    import time

    key = lens_key(exp, label, hp, recipe)
    if key is None:
        return {k: v for k, v in compute().items() if v is not None}
    label_hp = label
    label = file_label(label, hp) + (CONVERGED_TAG if staged(exp.model_name, recipe) else "")
    hit = artifacts.lookup(exp.model_name, label, key)
    if hit is not None:
        return hit
    if whole_split:
        whole = whole_split_key(exp, label_hp, hp, recipe)
        hit = None if whole is None else artifacts.lookup(exp.model_name, label, whole)
        if hit is not None:
            return hit
        if not STORE_ARTIFACTS and not exp.model_name.startswith("tiny-"):
            raise StaleLensError(
                f"no trained lens {label!r} for {exp.model_name} in zoo/lenses under the current weights, samples and "
                f"recipe, and it is not trained in the build (hours of CPU): train it on a GPU with `python -m "
                f"jtc_utils.lenses.train --models {exp.model_name} --real-tuned --device cuda`"
            )
    if REQUIRE_ARTIFACTS:
        raise StaleLensError(
            f"no trained lens {label!r} for {exp.model_name} in zoo/lenses under the current weights, "
            f"samples and recipe: retrain with `python -m jtc_utils.lenses.train --models "
            f"{exp.model_name}`"
        )
    if STORE_ARTIFACTS:
        import shutil

        # the tuned lens keeps its training state in the zoo's work folder, so an interrupted run resumes there
        stem = artifacts.path(exp.model_name, label).stem
        work = artifacts.ZOO_DIR / "_work" / "lenses" / exp.model_name / f"{stem}-{key_hash(key)[:16]}"
        t = time.perf_counter()
        with tuned.checkpoints(work):
            out = {k: v for k, v in compute().items() if v is not None}
        earlier = float(out.pop("earlier_seconds", 0.0))
        card = {
            "model": exp.model_name,
            "lens": label,
            "hp": hp,
            "recipe": recipe,
            "train_seconds": round(time.perf_counter() - t + earlier, 1),
            "n_train": int(exp.X_train.shape[1]),
            **{k: np.asarray(out[k]).tolist() for k in ("steps", "doublings", "improvement", "epochs") if k in out},
            **artifacts.convergence(out),
        }
        artifacts.store(exp.model_name, label, key, out, card)
        shutil.rmtree(work, ignore_errors=True)
        return artifacts.lookup(exp.model_name, label, key)
    return cache.cached("lenses", key, lambda: {k: v for k, v in compute().items() if v is not None})


# the layer pairs a batched low-rank training covers (N-NJTC's Figure 2: all; the real model: the pairs its claims
# read, each layer to the next and to the last)
PAIR_SETS = ("all", "adjacent", "to-last")


def pair_list(L: int, which: str) -> list[tuple[int, int]]:
    """The layer pairs (l, l') of ``which`` (:data:`PAIR_SETS`) for a model of ``L`` layers (l' = L: the output)."""
    if which == "all":
        return [(a, b) for a in range(L) for b in range(a + 1, L + 1)]
    if which == "adjacent":
        return [(a, a + 1) for a in range(L)]
    if which == "to-last":
        return [(a, L) for a in range(L)]
    raise ValueError(f"unknown pair set {which!r}; choose one of {', '.join(PAIR_SETS)}")


def trained_pairs(exp, rank: int, norm: bool, seed: int = 0, which: str = "all", whole_split: bool = False) -> dict:
    """NJTC (or N-NJTC) trained for the layer pairs ``which`` (:func:`pair_list`) as one batched model: the
    :func:`jtc_utils.lenses.lowrank.train` output, with ``pairs`` [P, 2] and the affine form ``M``, ``c``.
    ``whole_split``: on a subset of the train split, the committed lens trained on the whole split (see
    :func:`trained`)."""
    rank = closed_form.check_rank(rank, exp.X_train.shape[2])
    L = exp.X_train.shape[0] - 1
    pairs = pair_list(L, which)
    base = lens_label("nnjtc" if norm else "njtc", rank)
    label = {"all": f"{base}_pairs_s{seed}", "adjacent": f"{base}_adjacent_s{seed}", "to-last": base}[which]
    recipe = lowrank_recipe(exp.model_name)
    r = trained(
        exp,
        label,
        {"rank": rank, "seed": seed, "pairs": which},
        recipe,
        lambda: lowrank.train(exp.X_train, pairs, rank, norm, seed, recipe),
        whole_split=whole_split,
    )
    M, c = lowrank.affine_form(r)
    return {**r, "pairs": np.array(pairs), "M": M, "c": c}


def all_pairs(exp, rank: int, norm: bool, seed: int = 0) -> dict:
    """NJTC (or N-NJTC) trained for every layer pair l < l' (N-NJTC's Figure 2; :func:`trained_pairs`)."""
    return trained_pairs(exp, rank, norm, seed, "all")


def _fit_lowrank(norm: bool):
    def fit(exp, rank, seed=0):
        # a real model's, on a subset of its train split: the lens trained on the whole split (never in the build)
        r = trained_pairs(exp, rank, norm, seed, "to-last", whole_split=exp.model_name in real_models.REAL_MODELS)
        rec = {k: r[k] for k in ("best_epoch", "epochs", "stop_loss", "train_loss", "gap", "converged") if k in r}
        return r["M"], r["c"], rec

    return fit


def readout_of(exp):
    """A differentiable torch readout ``R`` for the tuned lens (the model's own weights frozen)."""
    ad = exp.adapter
    for p in ad.model.parameters():
        p.requires_grad_(False)
    return ad.readout


def _fit_tuned(variant: str):
    def fit(exp, seed=0):
        init = None
        if variant == "tuned<-mat":
            init = closed_form.fit_mat(exp)[0]
        r = trained(
            exp,
            variant,
            {"seed": seed},
            tuned.RECIPE,
            lambda: tuned.train(exp.X_train, readout_of(exp), variant, init, seed),
            whole_split=True,
        )
        rec = {k: r[k] for k in ("steps", "doublings", "improvement", "log") if k in r}
        rec["n_train"] = int(r.get("card", {}).get("n_train", exp.X_train.shape[1]))  # the whole split's, if so
        if "trained_on" in r.get("card", {}):
            rec["trained_on"] = r["card"]["trained_on"]
        return np.asarray(r["M"], dtype=np.float64), (np.asarray(r["c"], np.float64) if "c" in r else None), rec

    return fit


LENSES = {
    s.name: s
    for s in (
        LensSpec(
            "id",
            Method.IDENTITY,
            "none",
            closed_form.fit_identity,
            lambda d, r: 0,
            description="the hidden state read as it is (the logit lens; the paper's id)",
        ),
        LensSpec(
            "mat",
            Method.LEAST_SQUARES,
            "MSE",
            closed_form.fit_mat,
            lambda d, r: d * d,
            description="the paper's least-squares map, no intercept",
        ),
        LensSpec(
            "mat+b",
            Method.LEAST_SQUARES,
            "MSE",
            closed_form.fit_mat_affine,
            lambda d, r: d * d + d,
            description="least squares with an intercept",
        ),
        LensSpec(
            "rrr",
            Method.REDUCED_RANK,
            "MSE",
            closed_form.fit_rrr,
            lambda d, r: 2 * d * r,
            rank=True,
            description="the best map of rank r (closed form): NJTC's global optimum",
        ),
        LensSpec(
            "arrr",
            Method.REDUCED_RANK,
            "MSE",
            closed_form.fit_arrr,
            lambda d, r: 2 * d * r + d,
            rank=True,
            description="the best rank-r map with an intercept: N-NJTC's function class, optimum",
        ),
        LensSpec(
            "njtc",
            Method.GRADIENT_DESCENT,
            "MSE",
            _fit_lowrank(False),
            lambda d, r: lowrank.params(d, r, False),
            rank=True,
            description="NJTC: h A B by gradient descent",
        ),
        LensSpec(
            "nnjtc",
            Method.GRADIENT_DESCENT,
            "MSE",
            _fit_lowrank(True),
            lambda d, r: lowrank.params(d, r, True),
            rank=True,
            description="N-NJTC: BatchNorm(h) A B by gradient descent",
        ),
        LensSpec(
            "tuned",
            Method.TUNED_LENS,
            "KL",
            _fit_tuned("tuned"),
            lambda d, r: d * d + d,
            description="the tuned lens: h + h W + b trained on KL to the final distribution",
        ),
        LensSpec(
            "tuned-lin",
            Method.TUNED_LENS,
            "KL",
            _fit_tuned("tuned-lin"),
            lambda d, r: d * d,
            description="the tuned lens without its bias",
        ),
        LensSpec(
            "tuned<-mat",
            Method.TUNED_LENS,
            "KL",
            _fit_tuned("tuned<-mat"),
            lambda d, r: d * d + d,
            description="the tuned lens started from mat",
        ),
    )
}


@dataclass
class Lens:
    """A lens by name and hyper-parameters; :meth:`fit` fills in its maps (see :func:`get`). Every lens of the book,
    however it is trained, is evaluated as a per-layer affine map to the last layer, ``T_l(h) = h M_l + c_l``: ``M``
    [L, d, d] (None for the identity), ``c`` [L, d] (or None), the number of trained parameters per layer, and a
    record of how it was fitted; layer L is the true output for every lens."""

    name: str
    hp: dict = field(default_factory=dict)
    M: np.ndarray | None = None  # [L, d, d], row form; None = identity
    c: np.ndarray | None = None  # [L, d]; None = no intercept
    n_layers: int | None = None
    d: int | None = None
    record: dict = field(default_factory=dict)  # how it was fitted (training log, epochs, losses)

    @property
    def spec(self) -> "LensSpec":
        """How the lens is fitted and its parameters (:data:`LENSES`, by its name)."""
        if self.name not in LENSES:
            raise LensError(f"no lens named {self.name!r}; lenses: {', '.join(LENSES)}")
        return LENSES[self.name]

    @property
    def label(self) -> str:
        return lens_label(self.name, self.hp.get("rank"))

    @property
    def fitted(self) -> bool:
        return self.n_layers is not None

    def params(self, d: int | None = None) -> int:
        """Trained parameters per layer (0 for ``id``; JTC d², NJTC 2dr, N-NJTC 2dr + 4d, tuned d² + d)."""
        d = d or self.d
        if d is None:
            raise NotFittedError(f"lens {self.label!r} is not fitted; pass d, or call .fit(exp) first")
        return self.spec.params(d, self.hp.get("rank"))

    def fit(self, exp) -> "Lens":
        """Fit on ``exp``'s train split (an :class:`jtc_utils.core.analysis.experiment.Experiment`, or anything with
        ``X_train`` [L+1, n, d], ``n_layers`` and ``adapter``); returns the lens itself."""
        L, d = exp.X_train.shape[0] - 1, exp.X_train.shape[2]
        rank = self.hp.get("rank")
        if rank is not None and rank > d:
            raise LensError(
                f"rank {rank} is above the width d = {d} of {getattr(exp, 'model_name', 'this model')}; "
                f"use a rank from 1 to {d}"
            )
        self.M, self.c, self.record = self.spec.fit(exp, **self.hp)
        self.n_layers, self.d = L, d
        self.check()
        return self

    def check(self) -> None:
        for what, a, shape in (("M", self.M, (self.n_layers, self.d, self.d)), ("c", self.c, (self.n_layers, self.d))):
            if a is not None and (a.shape != shape or not np.all(np.isfinite(a))):
                raise LensError(
                    f"lens {self.label!r}: {what} has shape {a.shape} (expected {shape}) or non-finite values"
                )

    def check_states(self, X: np.ndarray) -> None:
        """Refuse hidden states of another model: ``X`` [L+1, n, d] must match the layers and width fitted on."""
        if not self.fitted:
            raise NotFittedError(f"lens {self.label!r} is not fitted: call lens.fit(exp) before evaluating it")
        if X.ndim != 3 or X.shape[0] != self.n_layers + 1 or X.shape[2] != self.d:
            raise LensError(
                f"lens {self.label!r} was fitted on a model with {self.n_layers} layers and width "
                f"{self.d}; these hidden states are {tuple(X.shape)} ([layers+1, n, d]): fit the lens on "
                f"the model you evaluate"
            )

    def transform(self, H: np.ndarray, layer: int) -> np.ndarray:
        """``T_layer(H)`` for vectors ``H`` [n, d] of layer ``layer`` (0..L); layer L is returned as it is."""
        if not self.fitted:
            raise NotFittedError(f"lens {self.label!r} is not fitted: call lens.fit(exp) before using it")
        if H.shape[-1] != self.d:
            raise LensError(f"lens {self.label!r} has width {self.d}; got vectors of width {H.shape[-1]}")
        if not 0 <= layer <= self.n_layers:
            raise LensError(f"layer {layer} is outside 0..{self.n_layers}")
        if layer == self.n_layers:
            return H
        out = H.astype(np.float64) @ self.M[layer] if self.M is not None else H.astype(np.float64)
        if self.c is not None:
            out = out + self.c[layer]
        return out.astype(np.float32)


def label_of(label: str) -> tuple[str, int | None]:
    """``(name, rank)`` of a lens's label as the figures store it (:func:`jtc_utils.lenses.base.lens_label`): the one
    reader of that form, matched against the lenses' names; a label of no lens is its own name."""
    for name, spec in LENSES.items():
        if label == name:
            return name, None
        if spec.rank and label.startswith(name + "_") and label[len(name) + 1 :].isdigit():
            return name, int(label[len(name) + 1 :])
    return label, None


def get(name: str, **hp) -> Lens:
    """An unfitted lens by name; ``rank=`` for the low-rank ones, ``seed=`` for the trained ones."""
    if name not in LENSES:
        raise LensError(f"no lens named {name!r}; the lenses are: {', '.join(LENSES)}")
    spec = LENSES[name]
    if spec.rank:
        if "rank" not in hp:
            raise LensError(f"lens {name!r} needs a rank, e.g. get({name!r}, rank=4)")
        hp["rank"] = closed_form.check_rank(hp["rank"])
    elif "rank" in hp:
        raise LensError(
            f"lens {name!r} has no rank; the low-rank lenses are: {', '.join(n for n, s in LENSES.items() if s.rank)}"
        )
    allowed = {"rank", "seed"} if spec.method.trained else {"rank"}
    extra = set(hp) - allowed
    if extra:
        raise LensError(
            f"lens {name!r} takes no {', '.join(sorted(extra))}; it takes: "
            f"{', '.join(sorted(allowed & ({'rank', 'seed'} if spec.rank else {'seed'}))) or 'nothing'}"
        )
    return Lens(name, dict(hp))
