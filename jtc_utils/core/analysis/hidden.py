"""Hidden states ``h^0 .. h^L`` at each sample's chosen position, for all layers in one forward pass per batch.

Batches are sorted by length and right-padded with an attention mask; GPT-style models see only the prefix up to
the position (the causal mask makes this identical to running the whole sentence). Results are cached on disk,
keyed on the exact weights, the samples and the batch size.

One extraction per model, domain and split: samples that are the first n of samples already extracted (a test
subset, a chapter that reads fewer sentences) are sliced out of that extraction, never run again. Each extraction
records a digest of every sample (its ids and position) in an index, so that a prefix is recognised whatever the
code that built it.
"""

from __future__ import annotations

import hashlib

import numpy as np

from jtc_utils.core.infra import cache, costs
from jtc_utils.core.models.batching import batches_by_length, pad_id, right_pad
from jtc_utils.core.models.models import CAUSAL_FAMILIES, Adapter
from jtc_utils.core.infra.paths import atomic_write_text
from jtc_utils.core.infra.progress import show_progress
from jtc_utils.core.data.samples import Samples


def samples_identity(s: Samples) -> str:
    h = hashlib.sha256()
    for ids, p in zip(s.input_ids, s.positions):
        h.update(np.asarray(ids, dtype=np.int64).tobytes())
        h.update(int(p).to_bytes(8, "little"))
    return h.hexdigest()


def sample_digests(s: Samples) -> list[str]:
    """One short digest per sample (its token ids and position): sample i of two sets is the same sample when the
    digests agree."""
    return [
        hashlib.sha256(np.asarray(ids, dtype=np.int64).tobytes() + int(p).to_bytes(8, "little")).hexdigest()[:16]
        for ids, p in zip(s.input_ids, s.positions)
    ]


def padded_batches(family: str, s: Samples, batch_size: int, pad: int = 0):
    """What the model reads for each sample, right-padded in length-sorted batches: ``(indices, input ids,
    attention mask, positions)`` as tensors. GPT-style models read the prefix ``ids[: position + 1]``, BERT-style
    ones the whole sentence (already holding ``[MASK]``)."""
    import torch

    seqs = [ids[: p + 1] if family in CAUSAL_FAMILIES else ids for ids, p in zip(s.input_ids, s.positions)]
    for idx in batches_by_length([len(x) for x in seqs], batch_size):
        inp, att = right_pad([seqs[i] for i in idx], pad)
        yield idx, inp, att, torch.as_tensor(s.positions[idx])


def block_vectors(
    run, s: Samples, vectors, batch_size: int, pad: int = 0, progress: bool = False, desc: str = ""
) -> dict:
    """The vectors ``vectors`` of every block (numbered as in :mod:`jtc_utils.core.models.blocks`: 3 is the mid-block
    state) at each sample's position, recorded while block runner ``run`` passes the unmodified model over the
    samples: ``{vector: [L, n, d] float32}``. The one block recorder: the FFN chapter's mid-block states and
    section 6's sub-module inputs and outputs both read it."""
    import torch
    from tqdm.auto import tqdm

    L, n, d = run.n_layers, len(s), run.d
    out = {v: np.zeros((L, n, d), dtype=np.float32) for v in vectors}
    with torch.inference_mode():
        for idx, inp, mask, pos in tqdm(
            list(padded_batches(run.family, s, batch_size, pad)), desc=desc, disable=not progress, leave=False
        ):
            inp, mask, pos = inp.to(run.device), mask.to(run.device), pos.to(run.device)
            h = run.embed(inp)
            rows = torch.arange(len(idx), device=run.device)
            for j in range(L):
                h, vecs = run.block(h, j, record=True, mask=mask)
                for v in vectors:
                    out[v][j, idx] = vecs[v][rows, pos].float().cpu().numpy()
    return out


def out_of_memory(e: BaseException) -> bool:
    """Whether ``e`` says that an allocation failed (on a GPU, or on the CPU)."""
    import torch

    return isinstance(e, (torch.OutOfMemoryError, MemoryError)) or (
        isinstance(e, RuntimeError) and ("out of memory" in str(e) or "can't allocate memory" in str(e))
    )


def _states_at(ad: Adapter, inp, att, pos) -> np.ndarray:
    """``[L+1, B, d]`` states of one batch at the positions; a batch that does not fit in memory is split in halves
    (with a warning), down to one sentence, which fails with the memory it needed."""
    import warnings

    import torch

    try:
        states = ad.forward_states(inp, att)  # [L+1, B, T, d]
        return states[:, torch.arange(len(inp), device=states.device), pos.to(states.device)].float().cpu().numpy()
    except (RuntimeError, MemoryError) as e:
        if not out_of_memory(e):
            raise
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        B, T = inp.shape
        if B == 1:
            need = (ad.n_layers + 1) * T * ad.d * 4
            raise MemoryError(
                f"one sentence of {T} tokens does not fit in the free memory of {ad.device} for {ad.name}: its hidden "
                f"states alone take {need / 2**20:.0f} MB ({ad.n_layers + 1} layers x {T} tokens x {ad.d} x 4 "
                f"bytes), besides the model and its activations. Free memory on that device, run on another one "
                f"(device='cpu' uses the host's memory), or use shorter sentences."
            ) from None
        half = B // 2
        warnings.warn(
            f"a batch of {B} sentences of up to {T} tokens did not fit in the memory of {ad.device}; "
            f"going on with batches of {half} (pass a smaller batch_size to avoid the retry)",
            ResourceWarning,
            stacklevel=2,
        )
        return np.concatenate(
            [_states_at(ad, inp[:half], att[:half], pos[:half]), _states_at(ad, inp[half:], att[half:], pos[half:])],
            axis=1,
        )


def extract(ad: Adapter, s: Samples, batch_size: int, progress: bool) -> np.ndarray:
    import torch
    from tqdm.auto import tqdm

    out = np.zeros((ad.n_layers + 1, len(s), ad.d), dtype=np.float32)
    n_batches = -(-len(s) // batch_size)
    with torch.inference_mode():
        for idx, inp, att, pos in tqdm(
            padded_batches(ad.family, s, batch_size, pad_id(ad.tokenizer)),
            total=n_batches,
            desc=f"hidden states {ad.name}",
            disable=not progress,
            leave=False,
        ):
            out[:, idx] = _states_at(ad, inp, att, pos)
    return out


# sentences per forward pass: the stand-ins (width <= 96) are fastest in large batches; the real model (width 576)
# in batches of 32, where its activations still fit in the cache (measured by ``benchmarks/bench_real.py --batches``)
WIDE = 256


def default_batch(ad: Adapter) -> int:
    """The batch size :func:`hidden_states` uses when none is given: 32 for a model of width >= ``WIDE``, else 64."""
    return 32 if ad.d >= WIDE else 64


def _index_path(ad: Adapter, s: Samples, batch_size: int):
    """The index of this model's extractions of one domain and split (at one batch size)."""
    key = {
        "what": "hidden-index",
        "model": ad.identity,
        "family": s.family,
        "domain": s.domain,
        "split": s.split,
        "seed": s.seed,
        "batch": batch_size,
    }
    return cache.CACHE_DIR / "hidden" / "index" / f"{cache.key_hash(key)}.json"


def _read_index(path) -> list:
    import json

    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return []  # missing or damaged: no extraction to slice from


def _slice_of_extraction(ad: Adapter, s: Samples, batch_size: int) -> np.ndarray | None:
    """The states of ``s`` sliced out of a larger extraction of which ``s`` is the first n samples, or None."""
    digests = sample_digests(s)
    for entry in sorted(_read_index(_index_path(ad, s, batch_size)), key=lambda e: e["n"]):
        if entry["n"] > len(s) and entry["digests"][: len(s)] == digests:
            hit = cache.load(cache.CACHE_DIR / "hidden" / entry["file"])
            if hit is not None:
                return np.ascontiguousarray(hit["X"][:, : len(s)])
    return None


def _record_extraction(ad: Adapter, s: Samples, batch_size: int, path) -> None:
    import json

    index = _index_path(ad, s, batch_size)
    entries = [e for e in _read_index(index) if e["file"] != path.name]
    entries.append({"file": path.name, "n": len(s), "digests": sample_digests(s)})
    atomic_write_text(index, json.dumps(entries))


def hidden_states(ad: Adapter, s: Samples, batch_size: int | None = None, progress: bool | None = None) -> np.ndarray:
    """``X[l, i] = h^l`` at sample i's position, float32 array of shape [L+1, n, d]; ``batch_size`` defaults to
    :func:`default_batch`. Samples that begin a larger set already extracted are sliced out of it."""

    batch_size = default_batch(ad) if batch_size is None else batch_size
    key = {"what": "hidden", "model": ad.identity, "samples": samples_identity(s), "batch": batch_size}
    path = cache.path_for("hidden", key)
    hit = cache.load(path)
    if hit is not None:
        if not any(e["file"] == path.name for e in _read_index(_index_path(ad, s, batch_size))):
            _record_extraction(ad, s, batch_size, path)  # extracted before the index existed
        return hit["X"]
    X = _slice_of_extraction(ad, s, batch_size)
    if X is not None:
        return X
    # one extraction per model, domain and split at a time: a process that wants a prefix of what another is
    # extracting waits for it and slices (the index is keyed without the sample count)
    with cache.computing(_index_path(ad, s, batch_size)):
        hit = cache.load(path)
        X = hit["X"] if hit is not None else _slice_of_extraction(ad, s, batch_size)
        if X is not None:
            return X
        show = show_progress() if progress is None else progress
        with costs.step("hidden"):
            X = extract(ad, s, batch_size, show)
        cache.save(path, {"X": X})
        _record_extraction(ad, s, batch_size, path)
    return X
