#!/usr/bin/env python3
"""The PyTorch reference for `tessel-bench ddp` / `shard` / `allreduce`: the same
Transformer LM (bench/reference/transformer_lm.py), batch and timing protocol,
trained with torch.nn.parallel.DistributedDataParallel, with and without
torch.distributed.optim.ZeroRedundancyOptimizer, plus a torch.distributed
all-reduce timing. One process per rank, started by any launcher that sets
MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE and LOCAL_RANK:

    tessel-run -n 2 -- python3 bench/reference/distributed/ddp_reference.py \\
        --model xl --context-length 128 --batch-size 4 --precision fp32,bf16 --json py-ddp.json
    torchrun --nproc-per-node 2 bench/reference/distributed/ddp_reference.py ...

Each step: zero_grad, forward (bf16 autocast when asked), backward (DDP's
bucketed all-reduce overlaps it), optimizer step, torch.cuda.synchronize();
a step's time is the slowest rank's. Records use the field names of
tessel-bench ddp/shard (variant "pytorch-ddp" / "pytorch-zero"), so the
results sit side by side in one table.

comm wait: the same definition as tessel-bench ddp. DDP waits for its buckets
inside loss.backward() (a final autograd callback the reducer queues when its
last bucket is launched: the compute stream waits for NCCL, then the averaged
buckets are copied into .grad, since gradient_as_bucket_view is off by
default). A hook on the loss queues an earlier final callback that records a
CUDA event on the compute stream once every backward kernel is enqueued (it
completes when the last backward kernel has run); a second event is recorded
when backward() returns. comm wait is the GPU time between the two: waiting for
gradient communication plus DDP's copy-out. On the CPU the same points are host
times.

--adamw picks torch.optim.AdamW's implementation (default: PyTorch's choice,
foreach on CUDA); tessel-bench uses the fused one on CUDA, so run with
--adamw fused for a like-for-like optimizer.
"""

import argparse
import gc
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import transformer_lm as tlm  # noqa: E402

GiB = 1024.0 ** 3


def summary(samples):
    mean = statistics.fmean(samples)
    std = statistics.stdev(samples) if len(samples) > 1 else 0.0
    return mean, std, statistics.median(samples)


def slowest(values, device):
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.cpu().tolist()


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def model_config(args):
    cfg = dict(tlm.PRESETS[args.model])
    cfg["vocab_size"] = args.vocab_size or 10000
    for key in ("d_model", "d_ff", "num_layers", "num_heads"):
        if getattr(args, key):
            cfg[key] = getattr(args, key)
    cfg["context_length"] = args.context_length
    cfg["name"] = args.model
    cfg.setdefault("rope_theta", 10000.0)
    cfg.setdefault("attention", "sdpa")
    return cfg


def build_model(args, cfg, device):
    torch.manual_seed(args.seed)
    try:
        return tlm.TransformerLM(cfg, device)
    except TypeError:  # older signature
        return tlm.TransformerLM(cfg).to(device)


def fully_shard_model(model, precision, bf16_gradients):
    """FSDP2: fully_shard per block, then the root (embeddings, final norm, LM head);
    bf16 parameters for compute and all-gather under bf16, gradients reduced in f32 or bf16."""
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16 if precision == "bf16" else None,
                              reduce_dtype=torch.bfloat16 if bf16_gradients else torch.float32)
    for block in model.layers:
        fully_shard(block, mp_policy=mp)
    fully_shard(model, mp_policy=mp)
    return model


def local_tensor(t):
    return t.to_local() if hasattr(t, "to_local") else t  # FSDP2's DTensors: this rank's shard


def train(args, cfg, device, precision, variant):
    rank, world = dist.get_rank(), dist.get_world_size()
    zero = variant == "zero"
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
    model = build_model(args, cfg, device)
    if variant.startswith("fsdp"):
        ddp = fully_shard_model(model, precision, variant == "fsdp-bf16grad")
    else:
        ddp = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[device.index] if device.type == "cuda" else None)
    if args.comm_hook == "bf16" and not variant.startswith("fsdp"):  # gradients on the wire in bf16, averaged back into f32
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        ddp.register_comm_hook(None, default_hooks.bf16_compress_hook)
    impl = {"foreach": {"foreach": True}, "fused": {"fused": True}}.get(args.adamw, {})
    if zero:
        from torch.distributed.optim import ZeroRedundancyOptimizer
        opt = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=torch.optim.AdamW, lr=args.lr,
                                      **impl)
    else:
        opt = torch.optim.AdamW(ddp.parameters(), lr=args.lr, **impl)
    cuda = device.type == "cuda"
    marks = {}

    def mark(name):
        if cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            marks[name] = event
        else:
            marks[name] = time.perf_counter()

    def on_loss_grad(grad):
        # Runs first in backward; the callback it queues runs before DDP's (queued later).
        torch.autograd.Variable._execution_engine.queue_callback(lambda: mark("backward_done"))
        return grad

    def elapsed_ms(a, b):
        if cuda:
            return marks[a].elapsed_time(marks[b])
        return (marks[b] - marks[a]) * 1e3
    local = args.batch_size // world
    g = torch.Generator(device="cpu").manual_seed(args.seed + 1 + rank)
    tokens = torch.randint(cfg["vocab_size"], (local, args.context_length), generator=g).to(device)
    targets = torch.randint(cfg["vocab_size"], (local, args.context_length), generator=g).to(device)
    sync(device)
    init = torch.cuda.memory_allocated(device) / GiB if device.type == "cuda" else 0.0
    steps, waits, peak_fb, peak_opt = [], [], 0.0, 0.0
    for step in range(args.warmup + args.steps):
        memory_step = step == args.warmup
        opt.zero_grad(set_to_none=True)
        if device.type == "cuda" and memory_step:
            torch.cuda.reset_peak_memory_stats(device)
        sync(device)
        start = time.perf_counter()
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bf16"):
            logits = ddp(tokens)
            loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.register_hook(on_loss_grad)
        loss.backward()
        mark("gradients_synchronised")
        # The caching allocator counts at launch time: no synchronisation needed.
        if device.type == "cuda" and memory_step:
            peak_fb = torch.cuda.max_memory_allocated(device) / GiB
            torch.cuda.reset_peak_memory_stats(device)
        opt.step()
        sync(device)
        elapsed = (time.perf_counter() - start) * 1e3
        if device.type == "cuda" and memory_step:
            peak_opt = torch.cuda.max_memory_allocated(device) / GiB
        if step >= args.warmup:
            steps.append(elapsed)
            waits.append(elapsed_ms("backward_done", "gradients_synchronised"))
    steps = slowest(steps, device)
    waits = slowest(waits, device)
    mean, std, median = summary(steps)
    wait_mean, wait_std, wait_median = summary(waits)
    params = sum(local_tensor(p).numel() * p.element_size() for p in model.parameters()) / GiB
    grads = sum(local_tensor(p.grad).numel() * p.grad.element_size() for p in model.parameters()
                if p.grad is not None) / GiB
    state_opt = opt.optim if zero else opt
    state = sum(local_tensor(t).numel() * t.element_size() for s in state_opt.state.values()
                for t in s.values() if torch.is_tensor(t)) / GiB
    hook = " +bf16 hook" if args.comm_hook == "bf16" and not variant.startswith("fsdp") else ""
    variant = "pytorch-" + variant + hook
    rec = dict(variant=variant, model=args.model, precision=precision,
               context=args.context_length, global_batch=args.batch_size, world_size=world,
               backend=dist.get_backend(), status="ok", step_ms_mean=mean, step_ms_std=std,
               step_ms_median=median, comm_wait_ms_mean=wait_mean, comm_wait_ms_std=wait_std,
               comm_wait_ms_median=wait_median, comm_wait_pct=100.0 * wait_mean / mean if mean else 0.0,
               comm_wait_pct_median=100.0 * wait_median / median if median else 0.0,
               comm_wait_timing="cuda events on the compute stream" if cuda else "host clock (cpu)",
               adamw=args.adamw, mem_init_GiB=init, peak_before_step_GiB=peak_fb,
               peak_optimizer_step_GiB=peak_opt, peak_GiB=max(init, peak_fb, peak_opt),
               params_GiB=params, grads_GiB=grads, optimizer_state_GiB=state)
    del ddp, model, opt
    return rec


def allreduce(args, device):
    rank, world = dist.get_rank(), dist.get_world_size()
    records = []
    for label in args.allreduce_sizes.split(","):
        if not label:
            continue
        nbytes = int(float(label[:-2]) * {"KB": 1e3, "MB": 1e6, "GB": 1e9}[label[-2:]])
        t = torch.ones(nbytes // 4, dtype=torch.float32, device=device)
        times = []
        for i in range(args.allreduce_warmup + args.allreduce_iters):
            sync(device)
            start = time.perf_counter()
            dist.all_reduce(t)
            sync(device)
            if i >= args.allreduce_warmup:
                times.append(time.perf_counter() - start)
        times = [x * 1e3 for x in slowest(times, device)]
        mean, std, median = summary(times)
        algbw = nbytes / (mean / 1e3) / 1e9
        records.append(dict(backend=dist.get_backend(), world_size=world, size=label, bytes=nbytes,
                            mean_ms=mean, median_ms=median, std_ms=std, min_ms=min(times),
                            algbw_GBs=algbw, busbw_GBs=algbw * 2 * (world - 1) / world,
                            source="pytorch"))
        if rank == 0:
            print(f"pytorch all_reduce {label}: {mean:.3f} ms", file=sys.stderr)
    return records


def table(records):
    cols = [("variant", "variant"), ("prec", "precision"), ("adamw", "adamw"), ("step ms", None),
            ("comm wait ms", "comm_wait_ms_mean"), ("wait %", "comm_wait_pct"),
            ("peak fwd+bwd GiB", "peak_before_step_GiB"), ("peak optim GiB", "peak_optimizer_step_GiB"),
            ("optim state GiB", "optimizer_state_GiB")]
    lines = ["| " + " | ".join(c[0] for c in cols) + " |", "|" + "---|" * len(cols)]
    for r in records:
        cells = []
        for _, key in cols:
            if r["status"] != "ok" and key not in ("variant", "precision", "adamw"):
                cells.append(r["status"] if key is None else "-")
            elif key is None:
                cells.append(f"{r['step_ms_mean']:.2f} ± {r['step_ms_std']:.2f}")
            elif isinstance(r.get(key), float):
                cells.append(f"{r[key]:.2f}")
            else:
                cells.append(str(r[key]))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="xl", choices=sorted(tlm.PRESETS))
    p.add_argument("--context-length", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=4, help="global batch, split over the ranks")
    p.add_argument("--precision", default="fp32", help="fp32 | bf16 (list)")
    p.add_argument("--variants", default="ddp,zero",
                   help="ddp | zero | fsdp | fsdp-bf16grad (list; FSDP2's fully_shard per block)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--d-model", dest="d_model", type=int, default=0)
    p.add_argument("--d-ff", dest="d_ff", type=int, default=0)
    p.add_argument("--num-layers", dest="num_layers", type=int, default=0)
    p.add_argument("--num-heads", dest="num_heads", type=int, default=0)
    p.add_argument("--vocab-size", dest="vocab_size", type=int, default=0)
    p.add_argument("--backend", default="auto", choices=["auto", "nccl", "gloo"])
    p.add_argument("--adamw", default="default", choices=["default", "foreach", "fused"],
                   help="torch.optim.AdamW implementation (default: PyTorch's choice, foreach on CUDA;"
                        " tessel-bench uses fused on CUDA)")
    p.add_argument("--comm-hook", default="none", choices=["none", "bf16"],
                   help="DDP communication hook: bf16 is bf16_compress_hook (half the bytes; the"
                        " like-for-like reference of tessel-bench ddp --weight-cast optimizer)")
    p.add_argument("--allreduce-sizes", default="", help="also time dist.all_reduce, e.g. 1MB,1GB")
    p.add_argument("--allreduce-warmup", type=int, default=5)
    p.add_argument("--allreduce-iters", type=int, default=20)
    p.add_argument("--json", help="write the records as JSON (rank 0)")
    p.add_argument("--markdown-file", help="write the table as markdown (rank 0)")
    p.add_argument("--version", action="version", version="ddp_reference.py " + tlm.VERSION)
    args = p.parse_args(argv)
    backend = args.backend
    if backend == "auto":
        backend = "nccl" if torch.cuda.is_available() else "gloo"
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if backend == "nccl":
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    dist.init_process_group(backend, device_id=device if backend == "nccl" else None)
    if args.batch_size % dist.get_world_size():
        p.error("--batch-size must be divisible by the world size")
    cfg = model_config(args)
    records = []
    for precision in args.precision.split(","):
        for variant in args.variants.split(","):
            if variant not in ("ddp", "zero", "fsdp", "fsdp-bf16grad"):
                p.error(f"unknown variant {variant!r} (expected ddp, zero, fsdp or fsdp-bf16grad)")
            if variant == "fsdp-bf16grad" and precision != "bf16":
                continue  # as tessel-bench shard: bf16 gradients with bf16 training only
            try:
                rec = train(args, cfg, device, precision, variant)
            except torch.OutOfMemoryError:
                # A row, and the sweep goes on (as tessel-bench's): the ranks run the same
                # shapes, so they run out together.
                rec = dict(variant="pytorch-" + variant, model=args.model, precision=precision,
                           context=args.context_length, global_batch=args.batch_size,
                           world_size=dist.get_world_size(), backend=dist.get_backend(),
                           adamw=args.adamw, status="OOM")
            if rec["status"] != "ok":  # the failed step's tensors went with the exception
                gc.collect()
                torch.cuda.empty_cache()
            records.append(rec)
            if dist.get_rank() == 0 and rec["status"] != "ok":
                print(f"{rec['variant']} {precision}: {rec['status']}", file=sys.stderr)
            elif dist.get_rank() == 0:
                print(f"{rec['variant']} {precision}: {rec['step_ms_mean']:.2f} ± {rec['step_ms_std']:.2f} ms,"
                      f" peak {rec['peak_GiB']:.2f} GiB", file=sys.stderr)
    allreduce_records = allreduce(args, device) if args.allreduce_sizes else []
    if dist.get_rank() == 0:
        text = table(records)
        print(text)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(dict(tool="ddp_reference.py", version=tlm.VERSION, torch=torch.__version__,
                               study="pytorch-reference", world_size=dist.get_world_size(),
                               results=records, allreduce=allreduce_records), f, indent=2)
        if args.markdown_file:
            with open(args.markdown_file, "w") as f:
                f.write(text)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
