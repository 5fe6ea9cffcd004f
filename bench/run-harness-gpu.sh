#!/usr/bin/env bash
# Runs the harness studies of issue 4 on a GPU machine (PyTorch 2.11 + LibTorch, nvcc, cmake,
# ninja; no network) and writes results under $OUT (default ./harness-out):
#   cpp-eager.json/.csv/.md      tessel-bench model: small..2.7B x ctx 128,512 x fp32,bf16, train step
#   cpp-graph.json/.csv/.md      the same with --cuda-graph (whole train step captured and replayed)
#   cpp-graph-verify.json        --cuda-graph --verify: captured vs uncaptured losses and parameters
#   cpp-memory.json/.md          2.7B peak memory, forward and train step, ctx 128,256,512, fp32,bf16
#   memory_*.pickle.gz           allocator snapshots (ctx 512) for pytorch.org/memory_viz (gunzip first)
#   py-eager.json, py-compile.json   bench/reference/transformer_lm.py, eager and torch.compile
#   precision.json               tessel-bench precision
#   summary.md, all.csv          everything side by side (bench/reference/summarize.py)
#   log-*.txt                    each stage's full output
#
# usage: bench/run-harness-gpu.sh [STAGE...]     (default: all)
#   stages: build cpp graph memory precision python compile summary nsys(optional) | all
# Stages keep their JSON in build-gpu/harness-results/, so a later call on the same (warm)
# machine can run more stages and `summary` still sees everything; every call copies all
# results found so far to $OUT.
# Budget: build ~2-3 min, cpp ~1 min, graph ~1 min, memory ~1 min, python ~1 min, compile ~2-3 min
# (H100). Two calls that each stay well under 10 minutes:
#   bench/run-harness-gpu.sh build cpp graph memory precision summary
#   bench/run-harness-gpu.sh build python compile summary
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build-gpu}
RESULTS=$BUILD/harness-results
OUT=${OUT:-$ROOT/harness-out}
# The top-level CMake may put executables in bin/; older trees leave them beside their sources.
find_bench() {
  for b in "$BUILD/bin/tessel-bench" "$BUILD/bench/tools/tessel-bench"; do
    if [[ -x $b ]]; then echo "$b"; return; fi
  done
  echo "$BUILD/bin/tessel-bench"
}
BENCH=$(find_bench)
REF=$ROOT/bench/reference
mkdir -p "$RESULTS" "$OUT"
START=$(date +%s)

# Common sweep settings (issue 4: small..2.7B, ctx 128 and 512, batch 4, fp32 and bf16).
MODELS=${MODELS:-small,medium,large,xl,2.7B}
CONTEXTS=${CONTEXTS:-128,512}
PRECISIONS=${PRECISIONS:-fp32,bf16}
WARMUP=${WARMUP:-3}
STEPS=${STEPS:-10}
SWEEP=(--model "$MODELS" --context-length "$CONTEXTS" --batch-size 4 --mode train-step
       --precision "$PRECISIONS" --attention sdpa --warmup "$WARMUP" --steps "$STEPS")

say() { echo "== [$(($(date +%s) - START))s] $*" >&2; }
# run NAME CMD...: runs a stage command, logging to $RESULTS/log-NAME.txt; a failing stage
# does not stop the others (its status is in the log and in the summary's status column).
run() {
  local name=$1
  shift
  say "$name: $*"
  if "$@" >"$RESULTS/log-$name.txt" 2>&1; then
    tail -n 40 "$RESULTS/log-$name.txt"
  else
    local rc=$?
    tail -n 60 "$RESULTS/log-$name.txt"
    say "$name FAILED (exit $rc)"
  fi
}
need_bench() {
  BENCH=$(find_bench)
  [[ -x $BENCH ]] || { say "no $BENCH: run the build stage first"; return 1; }
}

stage_build() {
  local prefix
  prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)
  say "build: configure ($prefix)"
  export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
  cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DTESSEL_ENABLE_COMPILER=OFF \
    -DTESSEL_ENABLE_TESTS=OFF -DCMAKE_PREFIX_PATH="$prefix" >"$RESULTS/log-configure.txt" 2>&1 ||
    { tail -n 60 "$RESULTS/log-configure.txt"; return 1; }
  say "build: tessel-bench"
  ninja -C "$BUILD" -j "$(nproc)" tessel-bench >"$RESULTS/log-build.txt" 2>&1 ||
    { tail -n 80 "$RESULTS/log-build.txt"; return 1; }
  BENCH=$(find_bench)
  "$BENCH" --version
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
}

stage_cpp() {
  need_bench || return 1
  run cpp-eager "$BENCH" model "${SWEEP[@]}" --json "$RESULTS/cpp-eager.json" \
    --csv "$RESULTS/cpp-eager.csv" --markdown-file "$RESULTS/cpp-eager.md"
}

stage_graph() {
  need_bench || return 1
  run cpp-graph "$BENCH" model "${SWEEP[@]}" --cuda-graph --json "$RESULTS/cpp-graph.json" \
    --csv "$RESULTS/cpp-graph.csv" --markdown-file "$RESULTS/cpp-graph.md"
  # Captured and uncaptured training from the same seed must give the same losses.
  run cpp-graph-verify "$BENCH" model --model small,medium --context-length 512 --precision fp32,bf16 \
    --mode train-step,forward-backward --cuda-graph --verify --warmup 3 --steps 5 \
    --json "$RESULTS/cpp-graph-verify.json"
}

stage_memory() {
  need_bench || return 1
  local snaps=$BUILD/harness-snapshots
  rm -rf "$snaps" && mkdir -p "$snaps"
  run cpp-memory "$BENCH" model --model 2.7B --context-length 128,256,512 --batch-size 4 \
    --mode forward,train-step --precision fp32,bf16 --warmup 1 --steps 2 --memory \
    --snapshot-dir "$snaps" --json "$RESULTS/cpp-memory.json" --markdown-file "$RESULTS/cpp-memory.md"
  # The ctx-512 snapshots come back (compressed); the others stay on the machine.
  for f in "$snaps"/memory_*ctx512*.pickle; do
    if [[ -f $f ]]; then gzip -c "$f" >"$RESULTS/$(basename "$f").gz"; fi
  done
  ls -la "$snaps" >&2 || true
}

stage_precision() {
  need_bench || return 1
  run precision "$BENCH" precision --json "$RESULTS/precision.json"
}

stage_python() {
  run py-eager python3 "$REF/transformer_lm.py" "${SWEEP[@]}" --impl eager --json "$RESULTS/py-eager.json" \
    --csv "$RESULTS/py-eager.csv" --markdown-file "$RESULTS/py-eager.md"
}

stage_compile() {
  # torch.compile takes ~1 min per model to compile: the sizes the issue quotes (small, xl; ctx 512, bf16).
  run py-compile python3 "$REF/transformer_lm.py" --model "${COMPILE_MODELS:-small,xl}" --context-length 512 \
    --batch-size 4 --mode train-step --precision bf16 --impl compile --warmup 3 --steps "$STEPS" \
    --json "$RESULTS/py-compile.json" --markdown-file "$RESULTS/py-compile.md"
}

stage_nsys() {
  need_bench || return 1
  command -v nsys >/dev/null || { say "nsys: not installed, skipped"; return 0; }
  run nsys nsys profile -t cuda,nvtx -o "$RESULTS/small-train-step" --force-overwrite true \
    "$BENCH" model --model small --context-length 512 --precision bf16 --warmup 2 --steps 3 --quiet
  run nsys-stats nsys stats --report nvtx_sum "$RESULTS/small-train-step.nsys-rep"
  rm -f "$RESULTS"/small-train-step.sqlite
}

stage_summary() {
  local files=()
  for f in cpp-eager cpp-graph cpp-graph-verify cpp-memory py-eager py-compile precision; do
    [[ -f $RESULTS/$f.json ]] && files+=("$RESULTS/$f.json")
  done
  ((${#files[@]})) || { say "summary: no results yet"; return 0; }
  python3 "$REF/summarize.py" "${files[@]}" --markdown "$RESULTS/summary.md" --csv "$RESULTS/all.csv"
  cat "$RESULTS/summary.md"
}

stages=("$@")
((${#stages[@]})) || stages=(all)
if [[ ${stages[*]} == all ]]; then
  stages=(build cpp graph memory precision python compile summary)
fi
for s in "${stages[@]}"; do
  case $s in
  build | cpp | graph | memory | precision | python | compile | summary | nsys)
    "stage_$s" || say "stage $s failed" ;;
  *)
    echo "unknown stage '$s' (build cpp graph memory precision python compile summary nsys all)" >&2
    exit 2 ;;
  esac
done
cp -r "$RESULTS"/. "$OUT"/
say "done; results in $OUT"
