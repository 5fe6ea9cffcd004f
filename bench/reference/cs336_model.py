"""An independent CS336-style Transformer LM, written as the assignment asks rather than as
a mirror of bench/model/TransformerLM.cpp: separate q, k, v and output projections, separate
W1, W2, W3 for SwiGLU, RoPE as complex rotation of (even, odd) pairs, attention as an
explicit masked softmax. `from_fused(state)` copies weights in the C++ model's names and
fused layouts (qkv_proj = [W_q; W_k; W_v], w13 = [W1; W3]) into this model's, so that
check_same_model.py can run both on the same weights.
"""
import math

import torch
import torch.nn as nn


class RMSNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(d_model))
        self.eps = eps

    def forward(self, x):
        x32 = x.float()
        return (x32 / torch.sqrt(x32.square().mean(-1, keepdim=True) + self.eps) * self.gain).to(x.dtype)


def rope(x, theta):
    """Rotates each (even, odd) pair of the last dim of x (..., seq, d) by position * freq."""
    seq, d = x.shape[-2], x.shape[-1]
    freqs = 1.0 / theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    angle = torch.arange(seq, dtype=torch.float64)[:, None] * freqs[None, :]
    rotation = torch.polar(torch.ones_like(angle), angle).to(torch.complex64)
    pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], d // 2, 2).contiguous())
    return torch.view_as_real(pairs * rotation).reshape(x.shape).to(x.dtype)


class Attention(nn.Module):
    def __init__(self, d_model, num_heads, theta):
        super().__init__()
        self.h, self.theta = num_heads, theta
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.output_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        heads = lambda t: t.reshape(b, s, self.h, d // self.h).transpose(1, 2)
        q = rope(heads(self.q_proj(x)), self.theta)
        k = rope(heads(self.k_proj(x)), self.theta)
        v = heads(self.v_proj(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // self.h)
        causal = torch.tril(torch.ones(s, s, dtype=torch.bool))
        weights = torch.softmax(torch.where(causal, scores, torch.tensor(float("-inf"))), dim=-1)
        return self.output_proj((weights @ v).transpose(1, 2).reshape(b, s, d))


class SwiGLU(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w1 = nn.Linear(d_model, d_ff, bias=False)
        self.w2 = nn.Linear(d_ff, d_model, bias=False)
        self.w3 = nn.Linear(d_model, d_ff, bias=False)

    def forward(self, x):
        gate = self.w1(x)
        return self.w2(gate * torch.sigmoid(gate) * self.w3(x))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln1 = RMSNorm(cfg["d_model"])
        self.attn = Attention(cfg["d_model"], cfg["num_heads"], cfg["rope_theta"])
        self.ln2 = RMSNorm(cfg["d_model"])
        self.ffn = SwiGLU(cfg["d_model"], cfg["d_ff"])

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.ffn(self.ln2(x))


class CS336TransformerLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.token_embeddings = nn.Embedding(cfg["vocab_size"], cfg["d_model"])
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg["num_layers"]))
        self.ln_final = RMSNorm(cfg["d_model"])
        self.lm_head = nn.Linear(cfg["d_model"], cfg["vocab_size"], bias=False)

    def forward(self, tokens):
        x = self.token_embeddings(tokens)
        for block in self.layers:
            x = block(x)
        return self.lm_head(self.ln_final(x))

    @torch.no_grad()
    def from_fused(self, state):
        """Copies the C++ model's weights (fused qkv_proj and w13) into this model's.
        Every tensor of `state` must be used once; returns the names left over."""
        left = dict(state)
        take = lambda name: left.pop(name)
        self.token_embeddings.weight.copy_(take("token_embeddings.weight"))
        self.ln_final.gain.copy_(take("ln_final.weight"))
        self.lm_head.weight.copy_(take("lm_head.weight"))
        for i, block in enumerate(self.layers):
            p = f"layers.{i}."
            block.ln1.gain.copy_(take(p + "ln1.weight"))
            block.ln2.gain.copy_(take(p + "ln2.weight"))
            wq, wk, wv = take(p + "attn.qkv_proj.weight").chunk(3, dim=0)
            block.attn.q_proj.weight.copy_(wq)
            block.attn.k_proj.weight.copy_(wk)
            block.attn.v_proj.weight.copy_(wv)
            block.attn.output_proj.weight.copy_(take(p + "attn.output_proj.weight"))
            w1, w3 = take(p + "ffn.w13.weight").chunk(2, dim=0)
            block.ffn.w1.weight.copy_(w1)
            block.ffn.w3.weight.copy_(w3)
            block.ffn.w2.weight.copy_(take(p + "ffn.w2.weight"))
        return sorted(left)
