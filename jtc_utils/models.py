"""Loading models by name, and the adapters that give every model the same two operations the paper needs:
the hidden states ``h^0 .. h^L`` at chosen positions, and the readout ``R(h)`` that turns a final-layer vector into
next-token (GPT-style) or masked-token (BERT-style) logits.

* GPT-style (``GPT2LMHeadModel``): ``h^L`` is the *raw* output of the last block, before ``ln_f`` (Hugging Face's
  ``hidden_states[L]`` is already after ``ln_f``, so we capture the input of ``ln_f`` with a hook);
  ``R(h) = wte · ln_f(h)``.
* BERT-style (``BertForMaskedLM``): the token at the chosen position is replaced by ``[MASK]``;
  ``h^l = hidden_states[l]``; ``R(h)`` is the MLM head ``cls``.

A zoo name (``tiny-gpt2`` ...) loads the committed weights; a Hugging Face id (``gpt2``, ``bert-large-uncased``
...) goes through ``from_pretrained`` exactly as for a user with internet, and fails at once with a clear message
when neither the network nor a local cache has it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .paths import ZOO_DIR

HF_MODELS = ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "bert-base-uncased", "bert-large-uncased")


class ModelUnavailableError(RuntimeError):
    """A model could not be loaded; the message says why and what to do."""


def zoo_names() -> list[str]:
    from .zoo import ZOO

    return list(ZOO)


def family_of(model) -> str:
    t = model.config.model_type
    if t == "gpt2":
        return "gpt2"
    if t == "bert":
        return "bert"
    raise ValueError(f"unsupported model type {t!r}; supported families: gpt2 (GPT2LMHeadModel), "
                     f"bert (BertForMaskedLM)")


def _check_zoo_dir(name: str):
    path = ZOO_DIR / name
    weights = path / "model.safetensors"
    if not weights.exists():
        raise ModelUnavailableError(
            f"zoo model {name!r} has no weights at {weights}. The zoo is committed to the repository: "
            f"restore it with `git checkout -- zoo/{name}`, or retrain it with "
            f"`python -m jtc_utils.zoo train --only {name}`.")
    from safetensors import safe_open

    try:
        with safe_open(str(weights), framework="pt") as f:
            for k in f.keys():  # reading every tensor catches a truncated file
                f.get_slice(k)[:]
    except Exception as e:  # noqa: BLE001 - any failure here means a damaged file
        raise ModelUnavailableError(
            f"zoo model {name!r}: the weight file {weights} is damaged ({type(e).__name__}: {e}). Restore it with "
            f"`git checkout -- zoo/{name}` or retrain with `python -m jtc_utils.zoo train --only {name} --force`."
        ) from None
    return path


def _from_pretrained(cls, ident, **kw):
    """from_pretrained for a hub id: local cache first; then the hub, turning any failure into one clear error."""
    try:
        return cls.from_pretrained(ident, local_files_only=True, **kw)
    except OSError:
        pass
    offline = os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False")
    hint = (f"Could not load {ident!r}: it is not in the local Hugging Face cache "
            f"({os.environ.get('HF_HOME', '~/.cache/huggingface')}) and ")
    fix = ("The default 'tiny' profile needs no download and works offline. To run the 'paper' profile, use a "
           "machine with internet access (the first run downloads the weights), or copy a Hugging Face cache that "
           "holds the model and point HF_HOME (or HF_HUB_CACHE) at it, or pass a local folder saved with "
           "save_pretrained instead of the id.")
    if offline:
        raise ModelUnavailableError(hint + "HF_HUB_OFFLINE is set, so the hub was not asked. " + fix) from None
    os.environ.setdefault("HF_HUB_ETAG_TIMEOUT", "10")
    os.environ.setdefault("HF_HUB_DOWNLOAD_TIMEOUT", "10")
    try:
        return cls.from_pretrained(ident, **kw)
    except Exception as e:  # noqa: BLE001 - network errors come in many types
        first = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
        raise ModelUnavailableError(hint + f"the Hugging Face hub could not be reached ({first}). " + fix) from None


def load(name: str, dtype=None):
    """Load ``(model, tokenizer)`` by zoo name, Hugging Face id or local folder. The model is in eval mode."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    from .progress import show_progress

    if not show_progress():  # keep saved notebooks free of "Loading weights" bars
        import transformers

        transformers.utils.logging.disable_progress_bar()
    if not isinstance(name, str) or not name:
        raise ValueError(f"model name must be a non-empty string, got {name!r}")
    if os.sep in name and os.path.isdir(name):  # a local folder saved with save_pretrained
        ident = name
        loader = lambda cls, **kw: cls.from_pretrained(ident, **kw)  # noqa: E731
    elif name.startswith("tiny-"):
        if name not in zoo_names():
            raise ModelUnavailableError(f"unknown zoo model {name!r}; the zoo has: {', '.join(zoo_names())}")
        ident = str(_check_zoo_dir(name))
        loader = lambda cls, **kw: cls.from_pretrained(ident, **kw)  # noqa: E731
    else:
        if name not in HF_MODELS and "/" not in name:
            raise ModelUnavailableError(
                f"unknown model {name!r}: use a zoo model ({', '.join(zoo_names())}), one of the paper's models "
                f"({', '.join(HF_MODELS)}), or a local folder saved with save_pretrained")
        ident = name
        loader = lambda cls, **kw: _from_pretrained(cls, ident, **kw)  # noqa: E731
    cfg = loader(AutoConfig)
    cls = AutoModelForCausalLM if cfg.model_type == "gpt2" else AutoModelForMaskedLM
    model = loader(cls, dtype=dtype or torch.float32)
    tok = loader(AutoTokenizer)
    family_of(model)
    model.eval()
    return model, tok


@dataclass
class Adapter:
    """The paper's view of a model: L blocks, width d, hidden states at chosen positions and the readout R."""

    model: object
    tokenizer: object
    name: str

    @property
    def family(self) -> str:
        return family_of(self.model)

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
        """Logits ``R(h)`` for final-layer vectors h of shape [..., d] (raw, pre-``ln_f`` for GPT-style)."""
        if self.family == "gpt2":
            tr = self.model.transformer
            return tr.ln_f(h) @ self.model.lm_head.weight.T
        return self.model.cls(h)

    def forward_states(self, input_ids, attention_mask):
        """All hidden states ``[L+1, batch, T, d]`` with raw ``h^L`` for GPT-style models."""
        import torch

        if self.family == "gpt2":
            tr = self.model.transformer
            captured = {}
            handle = tr.ln_f.register_forward_pre_hook(lambda mod, args: captured.__setitem__("h", args[0]))
            try:
                out = tr(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
            finally:
                handle.remove()
            states = list(out.hidden_states[:-1]) + [captured["h"]]
        else:
            out = self.model.bert(input_ids=input_ids, attention_mask=attention_mask,
                                  token_type_ids=torch.zeros_like(input_ids), output_hidden_states=True)
            states = list(out.hidden_states)
        return torch.stack(states)


def adapter(name: str) -> Adapter:
    model, tok = load(name)
    return Adapter(model=model, tokenizer=tok, name=name)
