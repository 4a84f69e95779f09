"""Block runners built from a Hugging Face model's weights, step by step, so that any sub-module of a block can be
swapped for a fitted matrix (paper section 6; spec 7): GPT-2, the LLaMA family (LLaMA, Mistral, Phi-3), OPT and
BERT (:func:`runner_for`). Each runner names its replaceable sub-modules in ``PARTS``: ``name -> (input vector,
output vector)``, numbered as in :class:`PreNormBlocks` and :class:`BertBlocks`; a sub-module's matrix is the least
squares of its output on its input. The runners read the weights, use the model's own activation, norm epsilon,
``1/sqrt(d_head)`` scale and mask, call no private attention code of ``transformers``, and, unmodified, reproduce
the model's hidden states (tested to 1e-4).
"""

from __future__ import annotations

import math
from functools import partial

import torch
import torch.nn.functional as F

from jtc_utils.core.infra import device as devices

PART_NAMES = ("ln_1", "attn", "ln_2", "ffn")
# bump a runner's ``version`` whenever its arithmetic changes, even by rounding only: cached sub-module fits and FFN
# states recorded with an older runner are then recomputed (a classifier trained on them turns float noise into
# different accuracies, as GPT-2's fused GELU showed)
RUNNER_VERSION = 2
TANH_GELUS = ("gelu_new", "gelu_fast", "gelu_pytorch_tanh")  # three names of one function
SUPPORTED_FAMILIES = ("gpt2", "llama", "mistral", "phi3", "opt", "bert")


class UnsupportedModelError(ValueError):
    """A model whose blocks no runner here knows (see ``SUPPORTED_FAMILIES``)."""


def _unsupported(model_type: str) -> UnsupportedModelError:
    return UnsupportedModelError(
        f"sub-module shortcuts need a block runner, which exists for model families {', '.join(SUPPORTED_FAMILIES)} "
        f"(GPT2LMHeadModel, LlamaForCausalLM, MistralForCausalLM, Phi3ForCausalLM, OPTForCausalLM, BertForMaskedLM); "
        f"got model type {model_type!r}"
    )


def _attention(q, k, v, n_head: int, divisor: float, mask=None, causal: bool = False):
    """Multi-head attention on [B, T, d] projections, scores divided by ``divisor``; ``mask`` [B, 1, 1, T] is True
    where attending is allowed (None: everywhere); ``causal``: each position attends to itself and earlier ones
    (PyTorch's fused causal kernel, no [T, T] mask)."""
    B, T, d = q.shape
    dh = d // n_head
    q, k, v = (t.view(B, T, n_head, dh).transpose(1, 2) for t in (q, k, v))
    y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, scale=1 / divisor)
    return y.transpose(1, 2).reshape(B, T, d)


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Blocks:
    """What both runners share: ``block`` (one block with replacements), ``run`` (blocks start..L-1) and
    ``states`` (all hidden states from the embeddings)."""

    PARTS: dict[str, tuple[int, int]] = {}
    family = ""
    version = RUNNER_VERSION  # what cached results of this runner are keyed on

    def __init__(self, model):
        cfg = model.config
        if cfg.model_type != self.family:
            raise _unsupported(cfg.model_type)

        self.model = devices.on(model)  # on the current device (jtc_utils.core.infra.device)
        self.device = devices.of(model)
        self.d = cfg.hidden_size
        self.n_layers = cfg.num_hidden_layers

    def ln(self, x, ln):
        return F.layer_norm(x, (self.d,), ln.weight, ln.bias, ln.eps)

    def _steps(self, x, j: int, rep: dict, mask):
        raise NotImplementedError

    def block(self, x, j: int, replace: dict | None = None, record: bool = False, mask=None):
        """Block ``j`` (0-based) on ``x`` [B, T, d] (or [n, d] when attention is replaced, which needs no
        context). ``replace`` maps a part name (``ln_1``, ``attn``, ``ln_2``, ``ffn``) to a matrix W [d, d] that
        replaces it by ``input @ W``. ``mask`` [B, T] marks the real tokens of right-padded sequences (BERT; GPT-2's
        causal mask already keeps padding out). With ``record``, also returns the vectors 0-6 of the block."""
        rep = replace or {}
        unknown = set(rep) - set(PART_NAMES)
        if unknown:
            raise ValueError(f"unknown sub-module(s) {sorted(unknown)}; replaceable: {', '.join(PART_NAMES)}")
        if "attn" not in rep and x.dim() != 3:
            raise ValueError(
                "real attention needs whole sequences [B, T, d]; only a replaced attention ('attn') "
                "runs on single vectors"
            )
        vecs = self._steps(x, j, rep, mask)
        return (vecs[6], vecs) if record else vecs[6]

    def run(self, h, start: int = 0, replace=None, mask=None):
        """Blocks ``start`` .. L-1 (0-based) on ``h`` = h^start; ``replace`` is a function of the block index
        giving its replacements (or None). Returns h^L (raw, before ``ln_f``, for GPT-2)."""
        for j in range(start, self.n_layers):
            h = self.block(h, j, replace(j) if replace else None, mask=mask)
        return h

    def embed(self, input_ids):
        raise NotImplementedError

    def states(self, input_ids, mask=None):
        """All hidden states ``[L+1, B, T, d]`` computed by the runner, from the embeddings."""
        h = self.embed(input_ids)
        out = [h]
        for j in range(self.n_layers):
            h = self.block(h, j, mask=mask)
            out.append(h)
        return torch.stack(out)


class PreNormBlocks(Blocks):
    """Pre-norm blocks (GPT-2, LLaMA): ``h = r + mlp(ln_2(r))`` with ``r = x + attn(ln_1(x))``; a subclass gives
    ``norms(j)`` (the two normalisations of block j), ``attn`` and ``mlp``.

    A block maps its input ``x = h^{l-1}`` to ``h^l`` through the spec's vectors 0-6:

        0 x   1 ln_1(x)   2 a = attn(ln_1(x))   3 r = x + a   4 ln_2(r)   5 f = mlp(ln_2(r))   6 h = r + f

    GPT-2's ``Conv1D`` stores [in, out] (``y = x W + b``); LLaMA's ``ln_1``/``ln_2`` are its ``input_layernorm`` and
    ``post_attention_layernorm`` and ``mlp(x) = down(silu(gate(x)) * up(x))``; OPT's blocks are GPT-2's with ``Linear``
    weights and learned positions."""

    PARTS = {"ln_1": (0, 1), "attn": (1, 2), "ln_2": (3, 4), "ffn": (4, 5)}
    additive = True  # the FFN's output is added to the residual stream (Geva et al.'s sub-updates apply)

    def norms(self, j: int):
        raise NotImplementedError

    def ffn_weights(self, j: int) -> dict:
        """Block ``j``'s feed-forward network as matrices in float64, ``u -> act(u K + b_K) [* (u K_up)] V + b_V``:
        ``K`` [d, d_ff], ``b_K`` [d_ff], ``K_up`` [d, d_ff] (the gate's other half) or None, ``V`` [d_ff, d] (row i
        is value vector v_i), ``b_V`` [d]."""
        raise NotImplementedError

    def value_projection(self, j: int):
        """The module that multiplies block ``j``'s coefficients by its value vectors (its input is the
        coefficients ``m``: a forward pre-hook on it sees and can change them)."""
        raise NotImplementedError

    def _steps(self, x, j, rep, mask):
        ln_1, ln_2 = self.norms(j)
        s1 = x @ rep["ln_1"] if "ln_1" in rep else self.ln(x, ln_1)
        s2 = s1 @ rep["attn"] if "attn" in rep else self.attn(s1, j)
        s3 = x + s2
        s4 = s3 @ rep["ln_2"] if "ln_2" in rep else self.ln(s3, ln_2)
        s5 = s4 @ rep["ffn"] if "ffn" in rep else self.mlp(s4, j)
        return (x, s1, s2, s3, s4, s5, s3 + s5)


class GPT2Blocks(PreNormBlocks):
    """The blocks of a ``GPT2LMHeadModel`` (or ``GPT2Model``) as plain tensor functions."""

    family = "gpt2"
    version = 3  # 3: the fused tanh GELU and the fused causal attention kernel

    def __init__(self, model):
        super().__init__(model)
        cfg = model.config
        if getattr(cfg, "reorder_and_upcast_attn", False):
            raise UnsupportedModelError("GPT-2 configs with reorder_and_upcast_attn=True are not supported")
        from transformers.activations import ACT2FN

        tr = getattr(model, "transformer", model)
        self.tr = tr
        self.blocks = list(tr.h)
        self.n_head = cfg.n_head
        # GPT-2's gelu_new is GELU's tanh approximation: PyTorch's fused kernel computes the same function (to float
        # rounding) in one pass instead of seven, the largest single saving of section 6's runners
        self.act = (
            partial(F.gelu, approximate="tanh")
            if cfg.activation_function in TANH_GELUS
            else ACT2FN[cfg.activation_function]
        )
        self.scale = cfg.scale_attn_weights
        self.by_layer = cfg.scale_attn_by_inverse_layer_idx

    def attn(self, x, j: int):
        """Causal multi-head self-attention of block ``j`` on [B, T, d], including ``c_proj``."""
        at = self.blocks[j].attn
        q, k, v = (x @ at.c_attn.weight + at.c_attn.bias).split(self.d, dim=-1)
        div = (math.sqrt(self.d // self.n_head) if self.scale else 1.0) * (j + 1 if self.by_layer else 1)
        return _attention(q, k, v, self.n_head, div, causal=True) @ at.c_proj.weight + at.c_proj.bias

    def mlp(self, x, j: int):
        m = self.blocks[j].mlp
        return self.act(x @ m.c_fc.weight + m.c_fc.bias) @ m.c_proj.weight + m.c_proj.bias

    def ffn_weights(self, j: int) -> dict:
        m = self.blocks[j].mlp  # Conv1D stores [in, out]
        return {
            "K": m.c_fc.weight.detach().double(),
            "b_K": m.c_fc.bias.detach().double(),
            "K_up": None,
            "V": m.c_proj.weight.detach().double(),
            "b_V": m.c_proj.bias.detach().double(),
        }

    def value_projection(self, j: int):
        return self.blocks[j].mlp.c_proj

    def norms(self, j: int):
        return self.blocks[j].ln_1, self.blocks[j].ln_2

    def embed(self, input_ids):
        T = input_ids.shape[1]
        return self.tr.wte(input_ids) + self.tr.wpe(torch.arange(T, device=input_ids.device))[None]


class LlamaBlocks(PreNormBlocks):
    """The blocks of a ``LlamaForCausalLM`` (or ``LlamaModel``) as plain tensor functions: RMSNorm, rotary
    positions (0, 1, ... along each right-padded row, as the model uses without position ids), grouped-query causal
    attention and the gated SiLU feed-forward network. Mistral's and Phi-3's blocks are the same with a sliding
    attention window (their subclasses), and Phi-3's with fused projections and rotary positions on part of each
    head."""

    family = "llama"

    def __init__(self, model):
        super().__init__(model)
        cfg = model.config
        rope = getattr(cfg, "rope_parameters", None) or {}
        if (
            rope.get("rope_type", "default") != "default"
            or getattr(cfg, "attention_bias", False)
            or getattr(cfg, "mlp_bias", False)
        ):
            raise UnsupportedModelError(
                f"the {self.family} block runner supports default rotary positions and "
                f"projections without bias (LLaMA, SmolLM2, Mistral, Phi-3-mini)"
            )
        from transformers.activations import ACT2FN

        self.body = getattr(model, "model", model)
        self.blocks = list(self.body.layers)
        self.n_head = cfg.num_attention_heads
        self.n_kv = cfg.num_key_value_heads
        self.dh = getattr(cfg, "head_dim", None) or self.d // self.n_head
        self.act = ACT2FN[cfg.hidden_act]
        rot = self.body.rotary_emb
        self.inv_freq, self.rope_scale = rot.inv_freq, rot.attention_scaling
        # Mistral and Phi-3 attend to the last `sliding_window` positions only (LLaMA has no window)
        self.window = getattr(cfg, "sliding_window", None) if self.family != "llama" else None

    def ln(self, x, norm):
        """RMSNorm in float32, as the model computes it."""
        x32 = x.float()
        return norm.weight * (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + norm.variance_epsilon)).to(x.dtype)

    def qkv(self, at, x):
        """Block ``j``'s query, key and value projections of ``x``."""
        return F.linear(x, at.q_proj.weight), F.linear(x, at.k_proj.weight), F.linear(x, at.v_proj.weight)

    def attn(self, x, j: int):
        """Causal grouped-query self-attention of block ``j`` on [B, T, d], rotary positions, ``o_proj``."""
        at = self.blocks[j].self_attn
        B, T, _ = x.shape
        q, k, v = self.qkv(at, x)
        q = q.view(B, T, self.n_head, self.dh).transpose(1, 2)
        k = k.view(B, T, self.n_kv, self.dh).transpose(1, 2)
        v = v.view(B, T, self.n_kv, self.dh).transpose(1, 2)
        freqs = torch.arange(T, device=x.device, dtype=torch.float)[:, None] * self.inv_freq.float()[None]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = (emb.cos() * self.rope_scale).to(x.dtype), (emb.sin() * self.rope_scale).to(x.dtype)
        rd = emb.shape[-1]  # the rotated part of each head (all of it, but in Phi-3 with a partial rotary factor)
        if rd == self.dh:
            q, k = q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin
        else:
            q, k = (
                torch.cat((t[..., :rd] * cos + _rotate_half(t[..., :rd]) * sin, t[..., rd:]), dim=-1) for t in (q, k)
            )
        rep = self.n_head // self.n_kv
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        if self.window is not None and self.window < T:  # position i sees j when i - window < j <= i
            causal = causal.triu(-(self.window - 1))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=causal, scale=1 / math.sqrt(self.dh))
        return F.linear(y.transpose(1, 2).reshape(B, T, self.n_head * self.dh), at.o_proj.weight)

    def gate_up(self, m):
        """The weights of the gate and of its other half ([d_ff, d] each, as ``Linear`` stores them)."""
        return m.gate_proj.weight, m.up_proj.weight

    def mlp(self, x, j: int):
        m = self.blocks[j].mlp
        gate, up = self.gate_up(m)
        return F.linear(self.act(F.linear(x, gate)) * F.linear(x, up), m.down_proj.weight)

    def ffn_weights(self, j: int) -> dict:
        m = self.blocks[j].mlp  # Linear stores [out, in]; no biases
        gate, up = self.gate_up(m)
        K = gate.detach().double().T
        return {
            "K": K,
            "b_K": torch.zeros(K.shape[1], dtype=torch.float64),
            "K_up": up.detach().double().T,
            "V": m.down_proj.weight.detach().double().T,
            "b_V": torch.zeros(self.d, dtype=torch.float64),
        }

    def value_projection(self, j: int):
        return self.blocks[j].mlp.down_proj

    def norms(self, j: int):
        return self.blocks[j].input_layernorm, self.blocks[j].post_attention_layernorm

    def embed(self, input_ids):
        return self.body.embed_tokens(input_ids)


class MistralBlocks(LlamaBlocks):
    """The blocks of a ``MistralForCausalLM``: LLaMA's, with a sliding attention window."""

    family = "mistral"


class Phi3Blocks(LlamaBlocks):
    """The blocks of a ``Phi3ForCausalLM``: LLaMA's with one fused query-key-value projection, one fused gate-and-up
    projection (the gate is its first half) and, where the config says so, rotary positions on part of each head
    and a sliding window."""

    family = "phi3"

    def qkv(self, at, x):
        qkv = F.linear(x, at.qkv_proj.weight)
        nq, nkv = self.n_head * self.dh, self.n_kv * self.dh
        return qkv[..., :nq], qkv[..., nq : nq + nkv], qkv[..., nq + nkv :]

    def gate_up(self, m):
        return m.gate_up_proj.weight.chunk(2, dim=0)


class OPTBlocks(PreNormBlocks):
    """The blocks of an ``OPTForCausalLM`` with layer norms before each sub-module (every OPT but the 350m, whose
    post-norm blocks are refused): learned positions offset by 2, causal multi-head attention with biases (the
    query scaled before the product), and ``fc2(act(fc1(x)))``."""

    family = "opt"

    def __init__(self, model):
        super().__init__(model)
        cfg = model.config
        if not cfg.do_layer_norm_before:
            raise UnsupportedModelError(
                "the OPT block runner supports pre-norm OPT models (125m, 1.3b and up); "
                "OPT-350m normalises after each sub-module"
            )
        from transformers.activations import ACT2FN

        body = getattr(model, "model", model)
        self.dec = getattr(body, "decoder", body)
        self.blocks = list(self.dec.layers)
        self.n_head = cfg.num_attention_heads
        self.act = ACT2FN[cfg.activation_function]

    @staticmethod
    def _linear(x, lin):
        return F.linear(x, lin.weight, lin.bias)

    def attn(self, x, j: int):
        at = self.blocks[j].self_attn
        q, k, v = self._linear(x, at.q_proj) * at.scaling, self._linear(x, at.k_proj), self._linear(x, at.v_proj)
        return self._linear(_attention(q, k, v, self.n_head, 1.0, causal=True), at.out_proj)

    def mlp(self, x, j: int):
        b = self.blocks[j]
        return self._linear(self.act(self._linear(x, b.fc1)), b.fc2)

    def ffn_weights(self, j: int) -> dict:
        b = self.blocks[j]  # Linear stores [out, in]

        def bias(lin, n):
            return lin.bias.detach().double() if lin.bias is not None else torch.zeros(n, dtype=torch.float64)

        K = b.fc1.weight.detach().double().T
        return {
            "K": K,
            "b_K": bias(b.fc1, K.shape[1]),
            "K_up": None,
            "V": b.fc2.weight.detach().double().T,
            "b_V": bias(b.fc2, self.d),
        }

    def value_projection(self, j: int):
        return self.blocks[j].fc2

    def norms(self, j: int):
        return self.blocks[j].self_attn_layer_norm, self.blocks[j].final_layer_norm

    def embed(self, input_ids):
        """Token embeddings (through ``project_in`` where they are narrower) plus the learned positions 0, 1, ...
        of each right-padded row (stored at offset 2)."""
        h = self.dec.embed_tokens(input_ids)
        if self.dec.project_in is not None:
            h = self.dec.project_in(h)
        T = input_ids.shape[1]
        return h + self.dec.embed_positions.weight[torch.arange(T, device=input_ids.device) + 2][None]


class BertBlocks(Blocks):
    """The layers of a ``BertForMaskedLM`` (or ``BertModel``) encoder as plain tensor functions (an extension: the
    paper ran section 6 on GPT-2 only).

    A post-norm block goes through

        0 x   1 a = attn(x)   2 x + a   3 r = LN_attn(x + a)   4 f = ffn(r)   5 r + f   6 h = LN_out(r + f)

    with ``ln_1``/``ln_2`` the attention and output layer norms, so that section 6's mapping names carry over, and a
    padding mask instead of a causal one."""

    family = "bert"
    PARTS = {"attn": (0, 1), "ln_1": (2, 3), "ffn": (3, 4), "ln_2": (5, 6)}
    additive = False  # post-norm: the block output is LN(r + o), the FFN update is not added to the stream

    def __init__(self, model):
        super().__init__(model)
        cfg = model.config
        if getattr(cfg, "is_decoder", False) or getattr(cfg, "position_embedding_type", "absolute") != "absolute":
            raise UnsupportedModelError(
                "the BERT block runner supports encoder-only BERT with absolute position "
                "embeddings (bert-base/large-uncased)"
            )
        from transformers.activations import ACT2FN

        self.bert = getattr(model, "bert", model)
        self.blocks = list(self.bert.encoder.layer)
        self.n_head = cfg.num_attention_heads
        self.act = ACT2FN[cfg.hidden_act]

    def attn(self, x, j: int, mask):
        """Bidirectional multi-head self-attention of layer ``j`` including its output projection (before the
        residual and layer norm); padded keys (``mask`` False) are ignored."""
        sa, so = self.blocks[j].attention.self, self.blocks[j].attention.output
        q, k, v = (F.linear(x, m.weight, m.bias) for m in (sa.query, sa.key, sa.value))
        keep = None if mask is None else mask.bool()[:, None, None, :]
        return F.linear(
            _attention(q, k, v, self.n_head, math.sqrt(self.d // self.n_head), keep), so.dense.weight, so.dense.bias
        )

    def ffn(self, x, j: int):
        b = self.blocks[j]
        up = F.linear(x, b.intermediate.dense.weight, b.intermediate.dense.bias)
        return F.linear(self.act(up), b.output.dense.weight, b.output.dense.bias)

    def _steps(self, x, j, rep, mask):
        b = self.blocks[j]
        a = x @ rep["attn"] if "attn" in rep else self.attn(x, j, mask)
        s = x + a
        r = s @ rep["ln_1"] if "ln_1" in rep else self.ln(s, b.attention.output.LayerNorm)
        f = r @ rep["ffn"] if "ffn" in rep else self.ffn(r, j)
        t = r + f
        h = t @ rep["ln_2"] if "ln_2" in rep else self.ln(t, b.output.LayerNorm)
        return (x, a, s, r, f, t, h)

    def embed(self, input_ids):
        return self.bert.embeddings(input_ids=input_ids, token_type_ids=torch.zeros_like(input_ids))


def runner_for(model) -> Blocks:
    """The block runner of a model; a clear error for a family without one."""
    runners = {cls.family: cls for cls in (GPT2Blocks, LlamaBlocks, MistralBlocks, Phi3Blocks, OPTBlocks, BertBlocks)}
    t = model.config.model_type
    if t not in runners:
        raise _unsupported(t)
    return runners[t](model)


def norm_without_shift(norm, v):
    """A final normalisation without its additive part: LayerNorm's ``w * (v - mean) / std`` without ``+ b``;
    RMSNorm, which has no shift, as it is."""
    if isinstance(norm, torch.nn.LayerNorm):
        c = v - v.mean(-1, keepdim=True)
        return norm.weight * c / torch.sqrt(c.pow(2).mean(-1, keepdim=True) + norm.eps)
    return norm(v)
