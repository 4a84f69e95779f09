"""The FFN of a pre-norm decoder block as a sum of sub-updates (Geva et al. 2022 section 3; spec 1 and 2.1): in block
``l`` (index ``j = l - 1``), with the mid-block state ``r = h^{l-1} + attn(ln_1(h^{l-1}))``, the FFN reads
``u = ln_2(r)``, its coefficients are ``m = act(u K + b_K)`` (LLaMA: ``silu(u K_gate) * (u K_up)``) and its update
``o = m V + b_V = sum_i m_i v_i + b_V`` (value ``v_i`` = row i of ``V``), so ``h^l = r + o`` (:class:`FFN`).
BERT-style blocks are post-norm, not additive in the residual stream, and refused (:class:`NotAdditiveError`). The
mid-block states ``r`` are recorded once per experiment and cached beside the hidden states (:func:`mid_states`).
"""

from __future__ import annotations

import numpy as np

from jtc_utils.core.infra import cache
from jtc_utils.base import validate
from jtc_utils.core.models.batching import pad_id
from jtc_utils.core.models.blocks import runner_for
from jtc_utils.core.analysis.hidden import block_vectors, samples_identity
from jtc_utils.core.infra.progress import show_progress

BATCH = 64


class NotAdditiveError(ValueError):
    """Sub-updates were asked of a post-norm (BERT-style) block, whose FFN update is not additive."""


class FFN:
    """The feed-forward networks of a GPT-2 or LLaMA model as weights: ``values(j)``, ``coefficients(j, r)``,
    ``output(j, m)`` for block ``j`` (0-based)."""

    def __init__(self, adapter):
        self.adapter, self.family = adapter, adapter.family
        self.run = runner_for(adapter.model)
        if not self.run.additive:
            raise NotAdditiveError(
                f"{adapter.name} is a BERT-style (post-norm) model: its block output is LN(r + o), so the FFN update "
                f"o is not added to the residual stream and its sub-updates do not sum to the change of the logits "
                f"(Geva et al. study decoders; their Limitations name MLM encoders as open). Use a GPT-style model."
            )
        import torch

        self.n_layers, self.d = self.run.n_layers, self.run.d
        with torch.no_grad():  # the block runner knows where each family keeps its FFN weights
            self._w = [self.run.ffn_weights(j) for j in range(self.n_layers)]
        self.d_ff = self._w[0]["V"].shape[0]

    def __repr__(self) -> str:
        return f"FFN({self.adapter.name!r}, {self.n_layers} blocks, d={self.d}, d_ff={self.d_ff})"

    def check_block(self, j) -> int:
        return validate.integer(
            j,
            "block index j",
            minimum=0,
            maximum=self.n_layers - 1,
            example=f"j between 0 and {self.n_layers - 1} (block l = j + 1)",
        )

    def check_neuron(self, i) -> int:
        return validate.integer(
            i, "neuron index i", minimum=0, maximum=self.d_ff - 1, example=f"i between 0 and {self.d_ff - 1}"
        )

    def values(self, j: int) -> np.ndarray:
        """V of block j, [d_ff, d] float64: row i is value vector v_i."""
        return self._w[self.check_block(j)]["V"].cpu().numpy()

    def value_bias(self, j: int) -> np.ndarray:
        return self._w[self.check_block(j)]["b_V"].cpu().numpy()

    def all_values(self) -> np.ndarray:
        """Every value vector of the model, [L * d_ff, d] float64, block by block."""
        return np.concatenate([self.values(j) for j in range(self.n_layers)])

    def ffn_input(self, j: int, r):
        """u = ln_2(r) of block j for mid-block states r [n, d], in the model's precision (torch float32)."""
        import torch

        with torch.no_grad():
            r = torch.as_tensor(np.asarray(r, dtype=np.float32)).to(self.run.device)
            return self.run.ln(r, self.run.norms(self.check_block(j))[1])

    def coefficients(self, j: int, r) -> np.ndarray:
        """m [n, d_ff] (float64) of block j for mid-block states r [n, d]."""
        import torch

        j = self.check_block(j)
        u = self.ffn_input(j, r).double()
        w = self._w[j]
        with torch.no_grad():
            if w["K_up"] is None:
                m = self.run.act(u @ w["K"] + w["b_K"])
            else:  # a gated FFN (LLaMA): act(u K) * (u K_up), no bias
                m = self.run.act(u @ w["K"]) * (u @ w["K_up"])
        return m.cpu().numpy()

    def output(self, j: int, m) -> np.ndarray:
        """o = m V + b_V [n, d] from coefficients m."""
        j = self.check_block(j)
        return np.asarray(m, dtype=np.float64) @ self._w[j]["V"].cpu().numpy() + self._w[j]["b_V"].cpu().numpy()

    def module_output(self, j: int, r) -> np.ndarray:
        """The model's own FFN (``mlp``) on ln_2(r), through the block runner in the model's precision."""
        import torch

        with torch.no_grad():
            return self.run.mlp(self.ffn_input(j, r), self.check_block(j)).double().cpu().numpy()


def record_mid(adapter, s, progress: bool = False) -> np.ndarray:
    """The mid-block states r^l of every block at each sample's position, [L, n, d] float32 (row j = block j)."""
    run = runner_for(adapter.model)
    if not run.additive:
        raise NotAdditiveError(f"{adapter.name} is BERT-style (post-norm); mid-block states of pre-norm decoders only")
    return block_vectors(run, s, (3,), BATCH, pad_id(adapter.tokenizer), progress, f"mid states {adapter.name}")[3]


def mid_states(exp, split: str = "validation") -> np.ndarray:
    """[L, n, d] mid-block states of ``exp``'s ``split`` samples (``train`` or ``validation``), cached on disk."""

    if split not in ("train", "validation"):
        raise ValueError(f"unknown split {split!r}; choose 'train' or 'validation'")
    s = exp.train if split == "train" else exp.val
    key = {
        "what": "mid",
        "model": exp.adapter.identity,
        "samples": samples_identity(s),
        "runner": runner_for(exp.adapter.model).version,
        "batch": BATCH,
    }
    return cache.cached("ffn_mid", key, lambda: {"R": record_mid(exp.adapter, s, show_progress())})["R"]


def check(exp, blocks=None) -> list[dict]:
    """The decomposition against the model, per block (default: all) on ``exp``'s validation samples: the largest
    deviation of ``sum_i m_i v_i + b_V`` from the model's own FFN output (``vs_module``) and of ``r + o`` from the
    block output h^l the rest of the book uses (``vs_hidden``), with the largest |h^l| for scale."""
    ffn = FFN(exp.adapter)
    R = mid_states(exp, "validation")
    out = []
    for j in range(ffn.n_layers) if blocks is None else blocks:
        o = ffn.output(j, ffn.coefficients(j, R[j]))
        out.append(
            {
                "block": j + 1,
                "vs_module": float(np.abs(o - ffn.module_output(j, R[j])).max()),
                "vs_hidden": float(np.abs(R[j] + o - exp.X_val[j + 1]).max()),
                "scale": float(np.abs(exp.X_val[j + 1]).max()),
            }
        )
    return out
