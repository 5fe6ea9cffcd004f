#!/usr/bin/env python3
"""The PyTorch reference for `tessel-bench model`: the same CS336 Transformer LM,
the same timing protocol and the same JSON/CSV records, in eager PyTorch and
under torch.compile.

The model mirrors bench/model/TransformerLM.cpp op for op: token embedding,
pre-norm blocks (RMSNorm eps 1e-5 -> causal multi-head attention with RoPE
theta 10000 on interleaved pairs -> residual, RMSNorm -> SwiGLU -> residual),
final RMSNorm, LM head; no biases; fused q/k/v and W1/W3 weights; CS336's
truncated-normal initialisation.

Timing: w warm-up steps (which also absorb torch.compile's compilation), then n
measured steps, each phase (forward, backward, optimizer) followed by
torch.cuda.synchronize(); mean and sample standard deviation in ms.

    python3 bench/reference/transformer_lm.py --model small,xl --context-length 512 \\
        --precision bf16 --impl eager,compile --json ref.json
"""

import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PRESETS = {
    "small": dict(d_model=768, d_ff=3072, num_layers=12, num_heads=12),
    "medium": dict(d_model=1024, d_ff=4096, num_layers=24, num_heads=16),
    "large": dict(d_model=1280, d_ff=5120, num_layers=36, num_heads=20),
    "xl": dict(d_model=1600, d_ff=6400, num_layers=48, num_heads=25),
    "2.7B": dict(d_model=2560, d_ff=10240, num_layers=32, num_heads=32),
    "10B": dict(d_model=4096, d_ff=16384, num_layers=36, num_heads=32),
}
VERSION = "0.1.0"


def trunc_normal_(t, std, bound):
    nn.init.trunc_normal_(t, mean=0.0, std=std, a=-bound, b=bound)


class Linear(nn.Module):
    """y = x W^T; a weight fusing `blocks` linears is initialised per block."""

    def __init__(self, d_in, d_out, device=None, blocks=1):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(d_out, d_in, device=device))
        std = math.sqrt(2.0 / (d_in + d_out // blocks))
        trunc_normal_(self.weight, std, 3 * std)

    def forward(self, x):
        return F.linear(x, self.weight)


class Embedding(nn.Module):
    def __init__(self, vocab, d_model, device=None):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(vocab, d_model, device=device))
        trunc_normal_(self.weight, 1.0, 3.0)

    def forward(self, tokens):
        return F.embedding(tokens, self.weight)


class RMSNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5, device=None):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model, device=device))
        self.eps = eps

    def forward(self, x):
        xf = x.to(torch.float32)
        rms = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (xf * rms * self.weight).to(x.dtype)


class RotaryEmbedding(nn.Module):
    def __init__(self, theta, d_head, max_seq_len, device=None):
        super().__init__()
        inv = theta ** (-torch.arange(0, d_head, 2, dtype=torch.float64, device=device) / d_head)
        angles = torch.outer(torch.arange(max_seq_len, dtype=torch.float64, device=device), inv)
        self.register_buffer("cos", angles.cos().float(), persistent=False)
        self.register_buffer("sin", angles.sin().float(), persistent=False)

    def forward(self, x):
        seq, half = x.shape[-2], x.shape[-1] // 2
        cos, sin = self.cos[:seq], self.sin[:seq]
        pairs = x.unflatten(-1, (half, 2))
        x0, x1 = pairs[..., 0], pairs[..., 1]
        out = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)
        return out.flatten(-2).to(x.dtype)


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg, device=None):
        super().__init__()
        d = cfg["d_model"]
        self.num_heads = cfg["num_heads"]
        self.attention = cfg["attention"]
        self.qkv_proj = Linear(d, 3 * d, device, blocks=3)
        self.output_proj = Linear(d, d, device)
        self.rope = RotaryEmbedding(cfg["rope_theta"], d // self.num_heads, cfg["context_length"], device)

    def forward(self, x):
        b, s, d = x.shape
        h, dh = self.num_heads, d // self.num_heads
        qkv = self.qkv_proj(x)
        qk = self.rope(qkv[..., : 2 * d].view(b, s, 2, h, dh).permute(2, 0, 3, 1, 4))
        q, k = qk[0], qk[1]
        v = qkv[..., 2 * d :].view(b, s, h, dh).transpose(1, 2)
        if self.attention == "naive":
            scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(dh)
            future = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
            out = torch.matmul(torch.softmax(scores.masked_fill(future, float("-inf")), -1), v)
        else:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.output_proj(out.transpose(1, 2).reshape(b, s, d))


class SwiGLU(nn.Module):
    def __init__(self, d_model, d_ff, device=None):
        super().__init__()
        self.d_ff = d_ff
        self.w13 = Linear(d_model, 2 * d_ff, device, blocks=2)
        self.w2 = Linear(d_ff, d_model, device)

    def forward(self, x):
        a, b = self.w13(x).split(self.d_ff, dim=-1)
        return self.w2(F.silu(a) * b)


class TransformerBlock(nn.Module):
    def __init__(self, cfg, device=None):
        super().__init__()
        self.ln1 = RMSNorm(cfg["d_model"], device=device)
        self.attn = CausalSelfAttention(cfg, device)
        self.ln2 = RMSNorm(cfg["d_model"], device=device)
        self.ffn = SwiGLU(cfg["d_model"], cfg["d_ff"], device)

    def forward(self, x):
        h = x + self.attn(self.ln1(x))
        return h + self.ffn(self.ln2(h))


class TransformerLM(nn.Module):
    def __init__(self, cfg, device=None):
        super().__init__()
        self.token_embeddings = Embedding(cfg["vocab_size"], cfg["d_model"], device)
        self.layers = nn.ModuleList(TransformerBlock(cfg, device) for _ in range(cfg["num_layers"]))
        self.ln_final = RMSNorm(cfg["d_model"], device=device)
        self.lm_head = Linear(cfg["d_model"], cfg["vocab_size"], device)

    def forward(self, tokens):
        x = self.token_embeddings(tokens)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.ln_final(x))


def parameter_count(cfg):
    d, f, v = cfg["d_model"], cfg["d_ff"], cfg["vocab_size"]
    return 2 * v * d + cfg["num_layers"] * (4 * d * d + 3 * d * f + 2 * d) + d


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def mean_std(samples):
    if not samples:
        return None, None
    return statistics.fmean(samples), statistics.stdev(samples) if len(samples) > 1 else 0.0


def run_config(args, cfg, context, mode, precision, impl, device):
    """Builds, warms up and times one configuration; returns its record."""
    rec = dict(model=cfg["name"], params=parameter_count(cfg), d_model=cfg["d_model"], d_ff=cfg["d_ff"],
               num_layers=cfg["num_layers"], num_heads=cfg["num_heads"], vocab_size=cfg["vocab_size"],
               batch=args.batch_size, context=context, mode=mode, precision=precision,
               attention=cfg["attention"], kernels="eager", impl="pytorch-" + impl,
               adamw=args.adamw if mode == "train-step" else "", device=str(device),
               warmup=args.warmup, steps=args.steps, status="ok")
    model = optimizer = None
    try:
        if device.type == "cuda":
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        torch.manual_seed(args.seed)
        model_cfg = dict(cfg, context_length=context)
        model = TransformerLM(model_cfg, device)
        tokens = torch.randint(cfg["vocab_size"], (args.batch_size, context), device=device)
        targets = torch.randint(cfg["vocab_size"], (args.batch_size, context), device=device)
        if mode == "train-step":
            kw = {"foreach": True} if args.adamw == "foreach" else {"fused": True} if args.adamw == "fused" else {}
            optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01, **kw)
        if args.memory and device.type == "cuda":
            sync(device)
            rec["mem_init_peak_mib"] = torch.cuda.max_memory_allocated() / 2**20
        run = torch.compile(model) if impl == "compile" else model
        autocast = precision == "bf16"

        def forward_loss():
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
                logits = run(tokens)
                return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1))

        times = {"forward": [], "backward": [], "optimizer": [], "step": []}
        losses = []
        for i in range(args.warmup + args.steps):
            measured = i >= args.warmup
            last = i + 1 == args.warmup + args.steps
            if args.memory and last and device.type == "cuda":
                torch.cuda.reset_peak_memory_stats()
            model.zero_grad(set_to_none=True)
            t0 = time.perf_counter()
            if mode == "forward":
                with torch.no_grad():
                    loss = forward_loss()
            else:
                loss = forward_loss()
            sync(device)
            t1 = time.perf_counter()
            if i == 0:
                rec["first_step_s"] = t1 - t0  # includes torch.compile's compilation
            if args.memory and last and device.type == "cuda":
                rec["mem_forward_peak_mib"] = torch.cuda.max_memory_allocated() / 2**20
            t2 = t1
            if mode != "forward":
                loss.backward()
                sync(device)
                t2 = time.perf_counter()
                if args.memory and last and device.type == "cuda":
                    rec["mem_before_optimizer_peak_mib"] = torch.cuda.max_memory_allocated() / 2**20
            t3 = t2
            if optimizer is not None:
                optimizer.step()
                sync(device)
                t3 = time.perf_counter()
                if args.memory and last and device.type == "cuda":
                    rec["mem_after_optimizer_peak_mib"] = torch.cuda.max_memory_allocated() / 2**20
            losses.append(loss.item())
            if measured:
                times["forward"].append((t1 - t0) * 1e3)
                if mode != "forward":
                    times["backward"].append((t2 - t1) * 1e3)
                if optimizer is not None:
                    times["optimizer"].append((t3 - t2) * 1e3)
                times["step"].append((t3 - t0) * 1e3)
            if args.progress:
                print(f"\r\033[K  {cfg['name']} ctx {context} {mode} {precision} {impl}: step {i + 1}/"
                      f"{args.warmup + args.steps}", end="", file=sys.stderr, flush=True)
        for key, samples in times.items():
            mean, std = mean_std(samples)
            if mean is not None:
                rec[f"{key}_ms_mean"], rec[f"{key}_ms_std"] = mean, std
        rec["loss_first"], rec["loss_last"] = losses[0], losses[-1]
        rec["tokens_per_s"] = args.batch_size * context / (rec["step_ms_mean"] / 1e3)
    except torch.cuda.OutOfMemoryError:
        rec["status"] = "OOM"
    except Exception as e:  # noqa: BLE001 - one failing configuration must not end the sweep
        rec["status"] = "error: " + str(e).splitlines()[0] if str(e) else "error: " + type(e).__name__
    finally:
        del model, optimizer
        if impl == "compile":
            torch._dynamo.reset()
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return rec


def fmt_ms(rec, key):
    mean, std = rec.get(key + "_ms_mean"), rec.get(key + "_ms_std")
    return "-" if mean is None else f"{mean:.2f} ± {std:.2f}"


def table(records, markdown=False):
    cols = [("model", lambda r: r["model"], True), ("ctx", lambda r: str(r["context"]), False),
            ("mode", lambda r: r["mode"], True), ("prec", lambda r: r["precision"], True),
            ("attention", lambda r: r["attention"], True), ("impl", lambda r: r["impl"], True),
            ("forward ms", lambda r: fmt_ms(r, "forward"), False),
            ("backward ms", lambda r: fmt_ms(r, "backward"), False),
            ("optimizer ms", lambda r: fmt_ms(r, "optimizer"), False),
            ("step ms", lambda r: fmt_ms(r, "step"), False),
            ("tokens/s", lambda r: f"{r['tokens_per_s']:.0f}" if "tokens_per_s" in r else "", False)]
    if any("mem_forward_peak_mib" in r for r in records):
        for head, key in [("init MiB", "mem_init_peak_mib"), ("fwd peak MiB", "mem_forward_peak_mib"),
                          ("bwd peak MiB", "mem_before_optimizer_peak_mib"),
                          ("opt peak MiB", "mem_after_optimizer_peak_mib")]:
            cols.append((head, lambda r, k=key: f"{r[k]:.0f}" if k in r else "", False))
    cols.append(("status", lambda r: r["status"], True))
    rows = [[c[1](r) for c in cols] for r in records]
    widths = [max([len(c[0])] + [len(row[i]) for row in rows]) for i, c in enumerate(cols)]

    def line(cells):
        padded = [cell.ljust(w) if c[2] else cell.rjust(w) for cell, w, c in zip(cells, widths, cols)]
        return "| " + " | ".join(padded) + " |" if markdown else "  ".join(padded).rstrip()

    rule = ("| " + " | ".join((":" + "-" * (w - 1)) if c[2] else ("-" * (w - 1) + ":")
                               for w, c in zip(widths, cols)) + " |") if markdown \
        else "  ".join("-" * w for w in widths)
    return "\n".join([line([c[0] for c in cols]), rule] + [line(r) for r in rows]) + "\n"


def split_list(text):
    return [t for t in text.split(",") if t]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="small", help="presets: " + ", ".join(PRESETS) + " (list)")
    p.add_argument("--context-length", default="512", help="sequence lengths (list)")
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--mode", default="train-step", help="forward | forward-backward | train-step (list)")
    p.add_argument("--precision", default="fp32", help="fp32 | bf16 (list)")
    p.add_argument("--attention", default="sdpa", help="naive | sdpa (list)")
    p.add_argument("--impl", default="eager", help="eager | compile (list)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--d-model", type=int, default=0)
    p.add_argument("--d-ff", type=int, default=0)
    p.add_argument("--num-layers", type=int, default=0)
    p.add_argument("--num-heads", type=int, default=0)
    p.add_argument("--vocab-size", type=int, default=0)
    p.add_argument("--device", default="auto", choices=["auto", "cuda", "cpu"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--adamw", default="default", choices=["default", "foreach", "fused"],
                   help="torch.optim.AdamW implementation (default: PyTorch's choice, foreach on CUDA)")
    p.add_argument("--memory", action="store_true", help="report peak allocated memory")
    p.add_argument("--json")
    p.add_argument("--csv")
    p.add_argument("--markdown-file")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--version", action="version", version="bench/reference/transformer_lm.py " + VERSION)
    args = p.parse_args(argv)
    args.progress = not args.quiet and sys.stderr.isatty()

    try:
        models = []
        for name in split_list(args.model):
            if name != "custom" and name not in PRESETS:
                raise ValueError(f"unknown model preset '{name}' (known: {', '.join(PRESETS)})")
            cfg = dict(PRESETS["small" if name == "custom" else name], name=name, vocab_size=10000,
                       rope_theta=10000.0)
            for key in ("d_model", "d_ff", "num_layers", "num_heads", "vocab_size"):
                if getattr(args, key):
                    cfg[key] = getattr(args, key)
                    cfg["name"] = name if name == "custom" else name + "-custom"
            if cfg["d_model"] % cfg["num_heads"] or (cfg["d_model"] // cfg["num_heads"]) % 2:
                raise ValueError(f"bad model config '{name}': d_model must be a multiple of num_heads "
                                 "with an even head dimension")
            models.append(cfg)
        contexts = [int(c) for c in split_list(args.context_length)]
        modes, precisions = split_list(args.mode), split_list(args.precision)
        attentions, impls = split_list(args.attention), split_list(args.impl)
        for value, allowed in [(modes, {"forward", "forward-backward", "train-step"}),
                               (precisions, {"fp32", "bf16"}), (attentions, {"naive", "sdpa"}),
                               (impls, {"eager", "compile"})]:
            bad = [v for v in value if v not in allowed]
            if bad or not value:
                raise ValueError(f"unknown value {bad} (expected {', '.join(sorted(allowed))})")
    except ValueError as e:
        p.error(str(e))

    if args.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: no usable CUDA GPU")
    device = torch.device("cuda" if args.device != "cpu" and torch.cuda.is_available() else "cpu")

    records = []
    configs = [(cfg, ctx, mode, prec, attn, impl) for cfg in models for ctx in contexts for mode in modes
               for prec in precisions for attn in attentions for impl in impls]
    for i, (cfg, ctx, mode, prec, attn, impl) in enumerate(configs):
        rec = run_config(args, dict(cfg, attention=attn), ctx, mode, prec, impl, device)
        records.append(rec)
        if not args.quiet:
            summary = f"{rec['step_ms_mean']:.2f} ms/step" if "step_ms_mean" in rec else rec["status"]
            print(f"{chr(13) + chr(27) + '[K' if args.progress else ''}[{i + 1}/{len(configs)}] "
                  f"{cfg['name']} ctx {ctx} {mode} {prec} {attn} {impl}: {summary}", file=sys.stderr)

    device_name = torch.cuda.get_device_name(0) if device.type == "cuda" else "cpu"
    print(f"bench/reference/transformer_lm.py: batch {args.batch_size}, {args.warmup} warm-up + {args.steps} "
          f"measured steps, device {device_name}, torch {torch.__version__}\n")
    print(table(records, args.markdown), end="")
    meta = {"tool": "bench/reference/transformer_lm.py", "version": VERSION, "device": device_name,
            "torch": torch.__version__}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(meta, results=records), f, indent=2)
            f.write("\n")
    if args.csv:
        keys = list(dict.fromkeys(k for r in records for k in r))
        with open(args.csv, "w") as f:
            f.write(",".join(keys) + "\n")
            for r in records:
                cells = []
                for k in keys:
                    v = r.get(k, "")
                    v = "" if v is None else str(v)
                    cells.append('"' + v.replace('"', '""') + '"' if any(c in v for c in ',"\n') else v)
                f.write(",".join(cells) + "\n")
    if args.markdown_file:
        with open(args.markdown_file, "w") as f:
            f.write(table(records, True))
    return 1 if any(r["status"].startswith("error") for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
