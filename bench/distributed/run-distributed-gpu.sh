#!/usr/bin/env bash
# Runs the distributed studies of issue 6 on a machine with 2 GPUs (PyTorch 2.11 + LibTorch,
# NCCL, cmake, ninja; no network) and writes results under $OUT (default ./distributed-out):
#   allreduce-nccl.json/.md      tessel-bench allreduce, NCCL + GPU, 2 ranks, 1MB..1GB, all-reduce,
#                                all-gather and reduce-scatter (tessel-plan fits each: --plan-allreduce)
#   allreduce-gloo-N.json/.md    the same over Gloo + CPU, N = 2, 4, 6 ranks
#   ddp.json/.md                 tessel-bench ddp: naive, flat, overlapped, bucketed 1/10/100/1000 MB
#                                and auto, xl, ctx 128, global batch 4, fp32 + bf16
#   ddp-tuned.json/.md           bucketed 100 MB and auto with NCCL on high-priority streams and the
#                                last bucket's worth of gradients in 25 MB buckets (TUNED=0: skip)
#   ddp-hook.json/.md            bucketed 25 MB with and without the bf16 compression hook (fp32)
#                                (HOOK=0: skip)
#   shard.json/.md               tessel-bench shard: none / broadcast / zero1, memory breakdown
#   pytorch.json/.md             bench/reference/distributed/ddp_reference.py: DistributedDataParallel,
#                                ZeroRedundancyOptimizer, torch.distributed all_reduce (same call);
#                                torch.optim.AdamW(fused=True) by default (PY_ADAMW), the same
#                                AdamW implementation as tessel-bench on CUDA
#   matrix-*.json/.md            (stage matrix) the study of issue 23: for each context in CONTEXTS and
#                                global batch in BATCHES, tessel-bench ddp (MATRIX_VARIANTS, bucketed
#                                with the auto bucket size) and shard (MATRIX_SHARDING: zero1, and
#                                zero1-prefetch, its all-gather overlapped with the next forward),
#                                tessel-bench runs with BENCH_FLAGS, once per kernel set in
#                                KERNEL_SETS (eager; tessel = --kernels tessel --attention tessel, whose
#                                AdamW is Tessel's), and ddp_reference.py (DDP, ZeroRedundancyOptimizer)
#                                for the same shape; files matrix-{ddp,zero1}-KERNELS-cCTX-bBATCH.json
#                                and matrix-pytorch-cCTX-bBATCH.json
#   summary.md                   everything side by side, with the issue's targets checked
#   ddp-overlap.nsys-rep         (stage nsys, optional) a bucketed-DDP run showing the overlap
#   log-*.txt                    each stage's full output
#
# "comm wait" (ddp and the reference): GPU time on the compute stream from the end of the last
# backward kernel until the averaged gradients are usable, from CUDA events; see docs/distributed.md.
#
# The tessel kernel set needs the kernel packages: TESSEL_PACKAGE_DIR=DIR (compiled on a CPU
# machine, see docs/gpu.md) is passed to the build.
# usage: bench/distributed/run-distributed-gpu.sh [STAGE...]     (default: all but nsys)
#   stages: build allreduce ddp shard python matrix summary nsys | all (all: not matrix)
# Budget on 2 H200s: build ~2-3 min, allreduce ~1 min (GLOO_RANKS="" skips Gloo), ddp ~2 min plus
# ~1 min for ddp-tuned and ddp-hook, shard ~1 min, python ~1.5 min. To stay under ~8 minutes per
# call, set BUILD outside the carried tree (a warm machine keeps it) and split:
#   BUILD=/somewhere/build-dist bench/distributed/run-distributed-gpu.sh build ddp summary
#   BUILD=/somewhere/build-dist bench/distributed/run-distributed-gpu.sh shard python summary
# Results accumulate in $BUILD/distributed-results, so the second call's summary (and its $OUT)
# has both calls' results.
set -euo pipefail
case ${1:-} in
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  --version) echo "run-distributed-gpu.sh 0.2.0"; exit 0 ;;
esac
for s in "$@"; do
  case $s in
    all | build | allreduce | ddp | shard | python | matrix | summary | nsys) ;;
    *) echo "unknown stage '$s' (build allreduce ddp shard python matrix summary nsys | all)" >&2; exit 2 ;;
  esac
done

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build-gpu}
RESULTS=$BUILD/distributed-results
OUT=${OUT:-$ROOT/distributed-out}
REF=$ROOT/bench/reference/distributed
mkdir -p "$RESULTS" "$OUT"
START=$(date +%s)

# NVLink multicast (NVLS) stays off on these machines.
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
export TORCH_SYMM_MEM_DISABLE_MULTICAST=${TORCH_SYMM_MEM_DISABLE_MULTICAST:-1}
export NVSHMEM_DISABLE_NVLS=${NVSHMEM_DISABLE_NVLS:-1}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}

NGPU=${NGPU:-2}
MODEL=${MODEL:-xl}
CONTEXT=${CONTEXT:-128}
BATCH=${BATCH:-4}
PRECISIONS=${PRECISIONS:-fp32,bf16}
WARMUP=${WARMUP:-5}
STEPS=${STEPS:-10}
GLOO_RANKS=${GLOO_RANKS-2 4 6}
TUNED=${TUNED:-1}
HOOK=${HOOK:-1}
PY_ADAMW=${PY_ADAMW:-fused}
PY_ALLREDUCE_SIZES=${PY_ALLREDUCE_SIZES-1MB,10MB,100MB,1GB}
CONTEXTS=${CONTEXTS:-128 512}
BATCHES=${BATCHES:-4 16}
KERNEL_SETS=${KERNEL_SETS:-eager tessel}
MATRIX_VARIANTS=${MATRIX_VARIANTS-naive,flat,overlapped,bucketed}  # empty: no DDP runs
MATRIX_SHARDING=${MATRIX_SHARDING-zero1,zero1-prefetch}  # empty: no ZeRO-1 runs
MATRIX_PYTORCH=${MATRIX_PYTORCH:-1}  # 0: the matrix without PyTorch's runs (e.g. eager kernels only)
PY_VARIANTS=${PY_VARIANTS:-ddp,zero}  # the matrix's PyTorch runs: DDP and ZeroRedundancyOptimizer
# BENCH_FLAGS: extra flags for every tessel-bench training run of the matrix (e.g.
# "--nccl-high-priority"); the PyTorch reference does not take them.
read -r -a BENCH_FLAGS <<<"${BENCH_FLAGS:-}"
# DDP_FLAGS: extra flags for the matrix's tessel-bench ddp runs only (e.g. "--weight-cast
# autocast,optimizer"); PYTORCH_FLAGS: for the matrix's PyTorch reference runs (e.g.
# "--comm-hook bf16", the like-for-like reference of --weight-cast optimizer).
read -r -a DDP_FLAGS <<<"${DDP_FLAGS:-}"
read -r -a PYTORCH_FLAGS <<<"${PYTORCH_FLAGS:-}"
# MODEL_FLAGS: extra model flags for every training run (e.g. "--num-layers 2" for a smoke test).
read -r -a MODEL_FLAGS <<<"${MODEL_FLAGS:-}"
TRAIN=(--model "$MODEL" --context-length "$CONTEXT" --batch-size "$BATCH" --precision "$PRECISIONS"
       --warmup "$WARMUP" --steps "$STEPS" "${MODEL_FLAGS[@]}")

say() { echo "== [$(($(date +%s) - START))s] $*" >&2; }
# run NAME CMD...: logs to $RESULTS/log-NAME.txt; a failing stage does not stop the others.
run() {
  local name=$1
  shift
  say "$name: $*"
  if "$@" >"$RESULTS/log-$name.txt" 2>&1; then
    tail -n 30 "$RESULTS/log-$name.txt"
  else
    local rc=$?
    tail -n 60 "$RESULTS/log-$name.txt"
    say "$name FAILED (exit $rc)"
  fi
}
find_bin() {
  for b in "$BUILD/bin/$1" "$BUILD/bench/tools/$1" "$BUILD/tools/tessel-run/$1"; do
    if [[ -x $b ]]; then echo "$b"; return; fi
  done
  echo "$BUILD/bin/$1"
}
tools() {
  BENCH=$(find_bin tessel-bench)
  RUN=$(find_bin tessel-run)
  [[ -x $BENCH && -x $RUN ]] || { say "no tessel-bench / tessel-run in $BUILD: run the build stage"; return 1; }
}

stage_build() {
  local prefix
  prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)
  export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
  say "build: configure ($prefix)"
  cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DTESSEL_ENABLE_COMPILER=OFF \
    -DTESSEL_ENABLE_TESTS=OFF -DCMAKE_PREFIX_PATH="$prefix" \
    ${TESSEL_PACKAGE_DIR:+-DTESSEL_PACKAGE_DIR="$TESSEL_PACKAGE_DIR"} >"$RESULTS/log-configure.txt" 2>&1 ||
    { tail -n 60 "$RESULTS/log-configure.txt"; return 1; }
  grep -E 'TesselDistributed|LibTorch' "$RESULTS/log-configure.txt" >&2 || true
  say "build: tessel-bench tessel-run"
  ninja -C "$BUILD" -j "$(nproc)" tessel-bench tessel-run >"$RESULTS/log-build.txt" 2>&1 ||
    { tail -n 80 "$RESULTS/log-build.txt"; return 1; }
  say "build: done"
}

stage_allreduce() {
  tools || return 1
  run allreduce-nccl "$RUN" -n "$NGPU" -- "$BENCH" allreduce --backend nccl \
    --sizes 1MB,10MB,100MB,1GB --collectives all-reduce,all-gather,reduce-scatter --warmup 5 --iters 20 \
    --json "$RESULTS/allreduce-nccl.json" --markdown-file "$RESULTS/allreduce-nccl.md"
  for n in $GLOO_RANKS; do
    run "allreduce-gloo-$n" "$RUN" -n "$n" -- "$BENCH" allreduce --backend gloo \
      --sizes 1MB,10MB,100MB,1GB --warmup 2 --iters 5 \
      --json "$RESULTS/allreduce-gloo-$n.json" --markdown-file "$RESULTS/allreduce-gloo-$n.md"
  done
}

stage_ddp() {
  tools || return 1
  run ddp "$RUN" -n "$NGPU" -- "$BENCH" ddp "${TRAIN[@]}" \
    --variants naive,flat,overlapped,bucketed --bucket-mb 1,10,100,1000,auto \
    --json "$RESULTS/ddp.json" --markdown-file "$RESULTS/ddp.md"
  if [[ $TUNED == 1 ]]; then
    run ddp-tuned "$RUN" -n "$NGPU" -- "$BENCH" ddp "${TRAIN[@]}" --nccl-high-priority \
      --variants bucketed --bucket-mb 100,auto --last-bucket-mb 25 \
      --json "$RESULTS/ddp-tuned.json" --markdown-file "$RESULTS/ddp-tuned.md"
  fi
  if [[ $HOOK == 1 ]]; then
    run ddp-hook "$RUN" -n "$NGPU" -- "$BENCH" ddp --model "$MODEL" --context-length "$CONTEXT" \
      --batch-size "$BATCH" --precision fp32 --warmup "$WARMUP" --steps "$STEPS" "${MODEL_FLAGS[@]}" \
      --variants bucketed --bucket-mb 25 --hook none,bf16 \
      --json "$RESULTS/ddp-hook.json" --markdown-file "$RESULTS/ddp-hook.md"
  fi
}

stage_shard() {
  tools || return 1
  run shard "$RUN" -n "$NGPU" -- "$BENCH" shard "${TRAIN[@]}" --sharding none,broadcast,zero1 \
    --json "$RESULTS/shard.json" --markdown-file "$RESULTS/shard.md"
}

stage_python() {
  tools || return 1
  run python "$RUN" -n "$NGPU" -- python3 "$REF/ddp_reference.py" "${TRAIN[@]}" --variants ddp,zero \
    --adamw "$PY_ADAMW" --allreduce-sizes "$PY_ALLREDUCE_SIZES" \
    --json "$RESULTS/pytorch.json" --markdown-file "$RESULTS/pytorch.md"
}

# The study's matrix: every shape, each kernel set, Tessel's strategies and PyTorch's.
stage_matrix() {
  tools || return 1
  local c b k tag sizes=$PY_ALLREDUCE_SIZES  # torch.distributed's all-reduce: with the first shape
  for c in $CONTEXTS; do
    for b in $BATCHES; do
      local shape=(--model "$MODEL" --context-length "$c" --batch-size "$b" --precision "$PRECISIONS"
                   --warmup "$WARMUP" --steps "$STEPS" "${MODEL_FLAGS[@]}")
      for k in $KERNEL_SETS; do
        local kernels=(--kernels "$k")
        [[ $k == tessel ]] && kernels+=(--attention tessel)
        tag=$k-c$c-b$b
        [[ -z $MATRIX_VARIANTS ]] ||
          run "matrix-ddp-$tag" "$RUN" -n "$NGPU" -- "$BENCH" ddp "${shape[@]}" "${kernels[@]}" \
            "${BENCH_FLAGS[@]}" "${DDP_FLAGS[@]}" --variants "$MATRIX_VARIANTS" --bucket-mb auto \
            --json "$RESULTS/matrix-ddp-$tag.json" --markdown-file "$RESULTS/matrix-ddp-$tag.md"
        [[ -z $MATRIX_SHARDING ]] ||
          run "matrix-zero1-$tag" "$RUN" -n "$NGPU" -- "$BENCH" shard "${shape[@]}" "${kernels[@]}" \
            "${BENCH_FLAGS[@]}" --sharding "$MATRIX_SHARDING" --json "$RESULTS/matrix-zero1-$tag.json" \
            --markdown-file "$RESULTS/matrix-zero1-$tag.md"
      done
      [[ $MATRIX_PYTORCH == 1 ]] || continue
      run "matrix-pytorch-c$c-b$b" "$RUN" -n "$NGPU" -- python3 "$REF/ddp_reference.py" "${shape[@]}" \
        --variants "$PY_VARIANTS" --adamw "$PY_ADAMW" "${PYTORCH_FLAGS[@]}" --allreduce-sizes "$sizes" \
        --json "$RESULTS/matrix-pytorch-c$c-b$b.json" \
        --markdown-file "$RESULTS/matrix-pytorch-c$c-b$b.md"
      sizes=""
    done
  done
}

stage_summary() {
  run summary python3 "$REF/summarize_distributed.py" "$RESULTS" --output "$RESULTS/summary.md"
  cat "$RESULTS/summary.md" 2>/dev/null || true
}

# Optional: one nsys capture of bucketed DDP; the timeline shows the NCCL kernels of each
# bucket running on their own stream under the "backward" NVTX range.
stage_nsys() {
  tools || return 1
  command -v nsys >/dev/null || { say "nsys: not installed, skipped"; return 0; }
  run nsys nsys profile --trace=cuda,nvtx,osrt --force-overwrite true -o "$RESULTS/ddp-overlap" \
    "$RUN" -n "$NGPU" -- "$BENCH" ddp --model "$MODEL" --context-length "$CONTEXT" \
    --batch-size "$BATCH" --variants bucketed --bucket-mb 25 --warmup 2 --steps 3 "${MODEL_FLAGS[@]}"
  run nsys-stats nsys stats --report nvtx_sum,cuda_gpu_kern_sum --format csv \
    --output "$RESULTS/ddp-overlap" "$RESULTS/ddp-overlap.nsys-rep"
}

copy_out() {
  cp -f "$RESULTS"/*.json "$RESULTS"/*.md "$RESULTS"/log-*.txt "$OUT"/ 2>/dev/null || true
  cp -f "$RESULTS"/*.nsys-rep "$RESULTS"/ddp-overlap_*.csv "$OUT"/ 2>/dev/null || true
}
trap copy_out EXIT

stages=("$@")
[[ ${#stages[@]} -eq 0 || ${stages[0]} == all ]] && stages=(build allreduce ddp shard python summary)
if command -v nvidia-smi >/dev/null; then nvidia-smi --query-gpu=name,memory.total --format=csv,noheader >&2 || true; fi
for s in "${stages[@]}"; do
  case $s in
    build) stage_build || { say "build failed"; exit 1; } ;;
    allreduce | ddp | shard | python | matrix | summary | nsys) "stage_$s" || say "$s failed" ;;
  esac
done
say "done; results in $OUT"
