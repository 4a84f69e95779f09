"""Linear shortcuts across sub-modules (paper section 6, appendix C; spec 7).

Per block and sub-module (``ln_1``, ``attn``, ``ln_2``, ``ffn``: :data:`jtc_utils.core.models.blocks.PART_NAMES`) a
matrix is fitted by least squares on the training sentences at each sample's position (the same fit as ``mat``). Three
mappings cast h^l to the output by running blocks l+1 .. L with some steps replaced by their matrices
(:data:`MAPPINGS`): ``mat_attn`` removes all interaction between positions, so it runs on single vectors; the other
two keep the real attention and start from the true h^l at every prefix position. All start layers run together
as a wavefront, so each mapping costs L block calls per batch. BERT-style models work the same way through
:class:`jtc_utils.core.models.blocks.BertBlocks` (an extension: the whole sentence instead of the prefix).
"""

from __future__ import annotations

import numpy as np

from jtc_utils.core.infra import cache
from jtc_utils.core.analysis import linear, readout
from jtc_utils.core.models.batching import pad_id
from jtc_utils.core.models.blocks import PART_NAMES, Blocks, runner_for
from jtc_utils.core.analysis.hidden import block_vectors, padded_batches, samples_identity

MAPPINGS = ("mat_attn", "mat_ln1_ln2", "mat_ffn")  # the paper's plotting order, then mat
REPLACED = {"mat_attn": ("attn",), "mat_ffn": ("ffn",), "mat_ln1_ln2": ("ln_1", "ln_2")}
BATCH = 64


def runner(exp) -> Blocks:
    """The block runner of the experiment's model, on the current device (:mod:`jtc_utils.core.infra.device`); a clear
    error for a model family it does not support."""
    exp.adapter.device  # moves the model to the current device
    return runner_for(exp.adapter.model)


def sample_batches(exp, s, batch_size: int = BATCH):
    """:func:`jtc_utils.core.analysis.hidden.padded_batches` for samples ``s`` of the experiment's model."""
    return padded_batches(exp.adapter.family, s, batch_size, pad_id(exp.adapter.tokenizer))


def record(run: Blocks, s, pad: int = 0) -> dict:
    """The vectors 0-6 of every block (see :mod:`jtc_utils.core.models.blocks`) at each sample's position in the
    unmodified model, those that some sub-module reads or writes: ``{vector: [L, n, d]}``."""
    return block_vectors(run, s, sorted({v for pair in run.PARTS.values() for v in pair}), BATCH, pad)


def fit(exp) -> dict:
    """The four sub-module matrices of every block, ``{"ln_1"|"attn"|"ln_2"|"ffn": [L, d, d]}`` (apply as
    ``v @ W``), fitted on the experiment's training samples; cached on disk."""
    run = runner(exp)

    def compute():
        vecs = record(run, exp.train, pad_id(exp.adapter.tokenizer))
        maps = {}
        for name, (src, dst) in run.PARTS.items():  # a sub-module's output regressed on its input
            maps[name] = np.stack([linear.fit(vecs[src][j], vecs[dst][j]) for j in range(run.n_layers)]).astype(
                np.float32
            )
        return maps

    return check_maps(cache.cached("submodule_fits", _fits_key(exp, run), compute), run)


def _fits_key(exp, run: Blocks) -> dict:
    return {
        "what": "submodule_fits",
        "model": exp.adapter.identity,
        "train": samples_identity(exp.train),
        "rcond": linear.RCOND,
        "runner": run.version,
    }


def check_maps(maps: dict, run: Blocks) -> dict:
    """Refuse sub-module matrices that do not fit the model: every one of ln_1, attn, ln_2, ffn must be
    [L, d, d] with this model's L and d."""
    want = (run.n_layers, run.d, run.d)
    missing = set(PART_NAMES) - set(maps)
    if missing:
        raise ValueError(f"sub-module matrices are missing {sorted(missing)}; expected ln_1, attn, ln_2 and ffn")
    for name in PART_NAMES:
        shape = tuple(np.shape(maps[name]))
        if shape != want:
            raise ValueError(
                f"sub-module matrix {name!r} has shape {shape}, but this model needs {want} "
                f"(L={run.n_layers} blocks of width {run.d}); were they fitted on another model?"
            )
    return maps


def load_maps(path, exp) -> dict:
    """Sub-module matrices saved with ``np.savez(path, ln_1=..., attn=..., ln_2=..., ffn=...)``, checked against
    the experiment's model."""
    with np.load(path) as f:
        return check_maps({k: f[k] for k in f.files}, runner(exp))


def _replacements(maps: dict, mapping: str, dev):
    import torch

    if mapping not in REPLACED:
        raise ValueError(f"unknown sub-module mapping {mapping!r}; choose one of {', '.join(REPLACED)}")
    W = {part: torch.from_numpy(np.ascontiguousarray(maps[part])).to(dev) for part in REPLACED[mapping]}
    return lambda j: {part: w[j] for part, w in W.items()}


def _starts(L: int, start_layers) -> list[int]:
    """The start layers of a cast, sorted, within 0..L-1 (layer L is the model's own output)."""
    if start_layers is None:
        return list(range(L))
    starts = sorted({int(x) for x in start_layers if int(x) < L})
    if not starts or starts[0] < 0:
        raise ValueError(f"start layers must lie in 0..{L - 1}, got {list(start_layers)}")
    return starts


def cast_single(run: Blocks, maps: dict, X: np.ndarray, start_layers=None) -> np.ndarray:
    """``mat_attn`` from every start layer (or those in ``start_layers``) on single vectors: ``X`` [L+1, n, d] true
    states at the positions -> [L+1, n, d] raw final vectors (row l: started at layer l, NaN for a layer not
    started from; row L: h^L itself)."""
    import torch

    rep = _replacements(maps, "mat_attn", run.device)
    L, n = run.n_layers, X.shape[1]
    starts = _starts(L, start_layers)
    out = np.full((L + 1, n, X.shape[2]), np.nan, dtype=np.float32)
    with torch.inference_mode():
        cur = None
        for j in range(starts[0], L):  # wavefront: a start layer joins before its block
            if j in starts:
                new = torch.from_numpy(X[j]).to(run.device)
                cur = new if cur is None else torch.cat([cur, new])
            cur = run.block(cur, j, rep(j))
        out[starts] = cur.cpu().numpy().reshape(len(starts), n, -1)
    out[L] = X[L]
    return out


def cast_prefix(run: Blocks, maps: dict, exp, mapping: str, start_layers=None) -> np.ndarray:
    """A mapping from every start layer (or those in ``start_layers``) over whole prefixes (GPT-2, LLaMA) or
    sentences (BERT), with the real attention over the modified states, read at each validation sample's position:
    [L+1, n, d] final vectors (NaN rows for layers not started from)."""
    import torch

    rep = _replacements(maps, mapping, run.device)
    ad, s = exp.adapter, exp.val
    L = run.n_layers
    starts = _starts(L, start_layers)
    out = np.full((L + 1, len(s), run.d), np.nan, dtype=np.float32)
    with torch.inference_mode():
        for idx, inp, mask, pos in sample_batches(exp, s):
            S = ad.forward_states(inp, mask)  # true h^0..h^L at every position, on the device
            mask, pos = mask.to(run.device), pos.to(run.device)
            B = len(idx)
            cur, k = None, 0
            for j in range(starts[0], L):
                if j in starts:
                    cur = S[j] if cur is None else torch.cat([cur, S[j]])
                    k += 1
                cur = run.block(cur, j, rep(j), mask=mask.repeat(k, 1))
            rows = torch.arange(B, device=run.device)
            out[starts, idx[:, None]] = (
                cur.view(len(starts), B, *cur.shape[1:])[:, rows, pos].cpu().numpy().transpose(1, 0, 2)
            )
            out[L, idx] = S[L][rows, pos].cpu().numpy()
    return out


def growth(exp, mapping: str, start: int, n: int = 4) -> dict:
    """How a cast's states grow block by block (float32, as the cast runs): the largest ``|x|`` at the first position
    and at every other, after each block from ``start`` on, for the cast ``mapping`` (a prefix mapping) and for the
    model's own states, on the ``n`` validation samples with the longest prefixes; ``inf``/``nan`` once the cast
    overflows. What the instrument check of the sub-module claims (``instruments.state_check``) sees, traced to where
    it starts."""
    import torch

    run = runner(exp)
    rep = _replacements(fit(exp), mapping, run.device)
    *_, (_, inp, mask, _) = sample_batches(exp, exp.val, n)  # the longest prefixes: batches are sorted by length
    out = {"block": [], "cast_first": [], "cast_rest": [], "model_first": [], "model_rest": []}
    with torch.inference_mode():
        S = exp.adapter.forward_states(inp, mask)
        mask = mask.to(run.device)
        cur = S[start]
        for j in range(start, run.n_layers):
            cur = run.block(cur, j, rep(j), mask=mask)
            out["block"].append(j + 1)
            for who, x in (("cast", cur), ("model", S[j + 1])):
                out[f"{who}_first"].append(float(x[:, 0].abs().max()))
                out[f"{who}_rest"].append(float(x[:, 1:][mask[:, 1:].bool()].abs().max()))  # padding left out
    return out


def cast(exp, mapping: str, maps: dict | None = None) -> np.ndarray:
    """Final vectors [L+1, n, d] of a sub-module mapping from every start layer, on the validation samples."""
    run = runner(exp)
    maps = fit(exp) if maps is None else check_maps(maps, run)
    if mapping == "mat_attn":
        return cast_single(run, maps, exp.X_val)
    return cast_prefix(run, maps, exp, mapping)


def per_sample(exp, ks=readout.KS, start_layers=None) -> dict:
    """Precision@k and Surprisal of ``mat_attn``, ``mat_ln1_ln2``, ``mat_ffn`` (and ``mat`` for comparison) from
    every layer (or from ``start_layers``; the others are NaN), per validation sample, exactly as in section 4.
    Cached on disk (every start layer costs a run of the blocks above it and a vocabulary readout), keyed on the
    sub-module fits' key, the validation samples, the k values and the start layers."""
    run = runner(exp)
    ks = readout.check_ks(exp.adapter, ks)
    starts = _starts(run.n_layers, start_layers)
    key = {
        **_fits_key(exp, run),
        "what": "submodule_predictions",
        "val": samples_identity(exp.val),
        "ks": list(ks),
        "starts": starts,
    }
    flat = cache.cached("submodule_predictions", key, lambda: _flatten(_per_sample(exp, run, ks, starts)))
    out = {"top1": {}, "precision": {}, "surprisal": {}}
    for m in MAPPINGS:
        out["top1"][m], out["surprisal"][m] = flat[f"top1/{m}"], flat[f"surprisal/{m}"]
        out["precision"][m] = {k: flat[f"precision/{m}/{k}"] for k in ks}
    base = exp.predictions
    for what in out:
        out[what]["mat"] = base[what]["mat"]
    return out


def _flatten(r: dict) -> dict:
    flat = {}
    for m in MAPPINGS:
        flat[f"top1/{m}"], flat[f"surprisal/{m}"] = r["top1"][m], r["surprisal"][m]
        for k, v in r["precision"][m].items():
            flat[f"precision/{m}/{k}"] = v
    return flat


def _per_sample(exp, run: Blocks, ks, starts: list[int]) -> dict:
    maps = fit(exp)
    final = readout.final_stats(exp, ks)
    L = run.n_layers
    start_layers = None if starts == list(range(L)) else starts
    done = starts + [L]
    out = {"top1": {}, "precision": {}, "surprisal": {}}
    for m in MAPPINGS:
        V = (
            cast_single(run, maps, exp.X_val, start_layers)
            if m == "mat_attn"
            else cast_prefix(run, maps, exp, m, start_layers)
        )
        top1 = np.zeros(V.shape[:2], dtype=np.int64)
        for layer in done:
            top1[layer] = readout.readout_stats(exp.adapter, V[layer])[0][:, 0]
        ev = readout.evaluate(exp, top1, ks, final)
        skipped = [layer for layer in range(L + 1) if layer not in done]
        for k in ks:
            ev["precision"][k][skipped] = np.nan
        ev["surprisal"][skipped] = np.nan
        out["top1"][m], out["precision"][m], out["surprisal"][m] = top1, ev["precision"], ev["surprisal"]
    return out
