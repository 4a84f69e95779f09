"""A GPT-2 block runner built from a Hugging Face model's weights, step by step, so that any step can be swapped
for a fitted matrix (paper section 6; spec 7).

A GPT-2 block maps its input ``x = h^{l-1}`` to ``h^l`` in six steps (the spec's vectors 1-6):

    1 ln_1(x)   2 a = attn(ln_1(x))   3 r = x + a   4 ln_2(r)   5 f = mlp(ln_2(r))   6 h = r + f

The runner reads the weights (``Conv1D`` stores [in, out], so ``y = x W + b``), uses the model's own activation
function and layer-norm epsilon, a causal mask and the ``1/sqrt(d_head)`` scale, and calls no private attention
code of ``transformers``. With right padding the causal mask alone is enough: a position never attends to the
padding after it. Unmodified it reproduces the model's hidden states (tested to 1e-4).
"""

from __future__ import annotations

import math

import torch

STEPS = {1: "ln_1", 2: "attn", 4: "ln_2", 5: "ffn"}  # the replaceable steps (3 and 6 are the residual sums)
SUPPORTED_FAMILIES = ("gpt2",)


class UnsupportedModelError(ValueError):
    """The block runner only knows GPT-2 blocks."""


class GPT2Blocks:
    """The blocks of a ``GPT2LMHeadModel`` (or ``GPT2Model``) as plain tensor functions."""

    def __init__(self, model):
        cfg = model.config
        if cfg.model_type not in SUPPORTED_FAMILIES:
            raise UnsupportedModelError(
                f"sub-module shortcuts need a block runner, which exists for model families "
                f"{', '.join(SUPPORTED_FAMILIES)} (GPT2LMHeadModel); got model type {cfg.model_type!r}")
        if getattr(cfg, "reorder_and_upcast_attn", False):
            raise UnsupportedModelError("GPT-2 configs with reorder_and_upcast_attn=True are not supported")
        from transformers.activations import ACT2FN

        tr = getattr(model, "transformer", model)
        self.model = model
        self.blocks = list(tr.h)
        self.ln_f = tr.ln_f
        self.n_layers = len(self.blocks)
        self.d = cfg.hidden_size
        self.n_head = cfg.n_head
        self.eps = cfg.layer_norm_epsilon
        self.act = ACT2FN[cfg.activation_function]
        self.scale = cfg.scale_attn_weights
        self.by_layer = cfg.scale_attn_by_inverse_layer_idx

    def ln(self, x, ln):
        return torch.nn.functional.layer_norm(x, (self.d,), ln.weight, ln.bias, self.eps)

    def attn(self, x, j: int):
        """Causal multi-head self-attention of block ``j`` (0-based) on [B, T, d], including ``c_proj``."""
        at = self.blocks[j].attn
        B, T, _ = x.shape
        q, k, v = (x @ at.c_attn.weight + at.c_attn.bias).split(self.d, dim=-1)
        dh = self.d // self.n_head
        q, k, v = (t.view(B, T, self.n_head, dh).transpose(1, 2) for t in (q, k, v))
        w = q @ k.transpose(-1, -2)
        if self.scale:
            w = w / math.sqrt(dh)
        if self.by_layer:
            w = w / float(j + 1)
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        w = w.masked_fill(~causal, torch.finfo(w.dtype).min).softmax(-1)
        y = (w @ v).transpose(1, 2).reshape(B, T, self.d)
        return y @ at.c_proj.weight + at.c_proj.bias

    def mlp(self, x, j: int):
        m = self.blocks[j].mlp
        return self.act(x @ m.c_fc.weight + m.c_fc.bias) @ m.c_proj.weight + m.c_proj.bias

    def block(self, x, j: int, replace: dict | None = None, record: bool = False):
        """Block ``j`` on ``x`` [..., T, d] (or [n, d] when attention is replaced, which needs no context).
        ``replace`` maps a step (1, 2, 4, 5) to a matrix W [d, d] that replaces it by ``input @ W``. With
        ``record``, also returns the six vectors of the spec's table (plus the input)."""
        rep = replace or {}
        b = self.blocks[j]
        s1 = x @ rep[1] if 1 in rep else self.ln(x, b.ln_1)
        if 2 in rep:
            s2 = s1 @ rep[2]
        elif x.dim() != 3:
            raise ValueError("real attention needs whole prefixes [B, T, d]; only a replaced attention (step 2) "
                             "runs on single vectors")
        else:
            s2 = self.attn(s1, j)
        s3 = x + s2
        s4 = s3 @ rep[4] if 4 in rep else self.ln(s3, b.ln_2)
        s5 = s4 @ rep[5] if 5 in rep else self.mlp(s4, j)
        s6 = s3 + s5
        return (s6, (x, s1, s2, s3, s4, s5, s6)) if record else s6

    def run(self, h, start: int = 0, replace=None):
        """Blocks ``start`` .. L-1 (0-based) on ``h`` = h^start [B, T, d]; ``replace`` is a function of the block
        index giving its replacements (or None). Returns raw h^L (before ``ln_f``)."""
        for j in range(start, self.n_layers):
            h = self.block(h, j, replace(j) if replace else None)
        return h

    def states(self, input_ids):
        """All hidden states ``[L+1, B, T, d]`` computed by the runner (raw h^L), from the embeddings."""
        tr = getattr(self.model, "transformer", self.model)
        T = input_ids.shape[1]
        h = tr.wte(input_ids) + tr.wpe(torch.arange(T, device=input_ids.device))[None]
        out = [h]
        for j in range(self.n_layers):
            h = self.block(h, j)
            out.append(h)
        return torch.stack(out)
