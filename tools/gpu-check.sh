#!/usr/bin/env bash
# Tessel's GPU tests and benchmarks in one call on a GPU machine (which has no MLIR).
#
#   here:   bash tools/gpu-check.sh prepare        compile the kernel packages with this
#                                                  machine's tesselc and snapshot the
#                                                  committed tree (HEAD) into .gpu-carry/
#   there:  bash .gpu-carry/src/tools/gpu-check.sh run [STAGE..]
#                                                  build the runtime, tests and harness
#                                                  against the machine's LibTorch, run the
#                                                  GPU tests and benchmarks; results in $OUT
#
# Stages of `run`: build tests softmax (the default), launch (launch overhead, tuning),
# matmul (matmul GPU tests, tessel-bench matmul vs cuBLAS, ptxas resources per config),
# wgmma (the same for the sm_90a packages only, bf16, f16 and tf32: a shorter call),
# multicast (the packages whose programs share B tiles in clusters of two, _mc2: GPU tests,
# and the benchmark alternating with the packages without),
# ceilings (hardware ceilings the targets are judged against: mma.sync's bf16 and tf32 peaks,
# and its matmul inner loop fed from shared memory alone),
# triton (Triton's matmul next to cuBLAS, on wgmma and with DISABLE_MMA_V3=1 on mma.sync).
# attention (the FlashAttention op's GPU tests, tessel-bench attention's studies, Triton's FA2),
# model-attention (tessel-bench model with --attention sdpa,tessel: small, xl; context 512, 2048).
# fused (the training step's kernels: GPU tests, tessel-bench fused with torch.compile and
# Triton beside it, the train step with --kernels eager,tessel and torch.compile's).
# sanitize (compute-sanitizer over the GPU tests: memcheck for every kernel, racecheck and
# synccheck for those that use shared memory and barriers; SANITIZE_FILTER narrows the
# attention tests, which take minutes under the tool).
# TESSEL_GPU_TARGETS="a b" builds only those targets (default: everything).
# With the device tool: run(command="bash .gpu-carry/src/tools/gpu-check.sh run",
#                           carry=[".gpu-carry"]).
# The snapshot makes the GPU run reproducible: exactly the commit named in device.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-prepare}
# Stages keep going past a failing test or benchmark (so the rest still runs) but the run
# exits non-zero at the end, naming each failure.
failures=""
failed() { failures="$failures; $1"; echo "FAILED: $1" >&2; }
shift || true

# ptxas's registers, shared memory, spills and wgmma notes for every variant of the
# matmul packages named (matmul_<name>.tslpkg), into $out/matmul-resources.txt.
matmul_resources() {
  mkdir -p "$out/matmul-ptx"
  python3 - "$carry/kernels" "$out/matmul-ptx" "$@" <<'PY'
import json, sys
for name in sys.argv[3:]:
    pkg = json.load(open(f"{sys.argv[1]}/matmul_{name}.tslpkg"))
    for i, v in enumerate(pkg["kernels"][0]["variants"]):
        open(f"{sys.argv[2]}/matmul_{name}_{i}.{v['arch']}.ptx", "w").write(v["ptx"])
PY
  local ptxas
  ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
  for ptx in "$out"/matmul-ptx/*.ptx; do
    local arch=${ptx%.ptx}; arch=${arch##*.}
    echo "$(basename "$ptx"): $("$ptxas" -arch="$arch" -v "$ptx" -o /dev/null 2>&1 | grep -E 'registers|spill|wgmma' | tr '\n' ' ')"
  done | tee "$out/matmul-resources.txt"
  rm -rf "$out/matmul-ptx" # more files than the results folder should hold
}

# SM clock, power and throttle reasons every 200 ms while a benchmark runs, into
# $out/clocks-<name>.csv (on an H100 a long tf32 or bf16 matmul meets the 700 W cap:
# reason 0x4, SW power cap, and the clock drops from 1980 MHz towards 1300-1600).
start_clocks() {
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv,noheader -lms 200 > "$out/clocks-$1.csv" 2>&1 &
  clocks_pid=$!
}
stop_clocks() {
  kill "$clocks_pid" 2> /dev/null || true
  wait "$clocks_pid" 2> /dev/null || true
}

case "$mode" in
prepare)
  build=${BUILD_DIR:-build}
  cmake --build "$build" --target tessel-kernels tessel-attention-variants
  rm -rf .gpu-carry
  mkdir -p .gpu-carry/src
  # Compressed: the packages' PTX is ~700 MB, over what a device call carries (64 MiB); xz
  # takes the attention packages' repetitive PTX down far more than gzip (107 MB).
  tar -cf - -C "$build"/kernels $(cd "$build"/kernels && ls *.tslpkg) | xz -T0 -6 > .gpu-carry/kernels.tar.xz
  git archive HEAD | tar -x -C .gpu-carry/src
  # The CPU interpreter's outputs for the same launches (test/gpu/agreement compares).
  cmake --build "$build" --target tessel-agreement-data > /dev/null
  "$build"/bin/tessel-agreement-data "$build"/kernels .gpu-carry/agreement > /dev/null
  git rev-parse --short HEAD > .gpu-carry/src/COMMIT
  # GoogleTest sources (Debian's libgtest-dev) for the GPU machine, which has none.
  cp -r /usr/src/googletest .gpu-carry/googletest
  echo "prepared .gpu-carry ($(du -sh .gpu-carry | cut -f1)); on the GPU machine: bash .gpu-carry/src/tools/gpu-check.sh run"
  ;;
run)
  # Packages and GoogleTest sit next to the snapshot (../) or in the checkout's .gpu-carry.
  carry=$(cd "${TESSEL_CARRY:-$( [ -f COMMIT ] && echo .. || echo .gpu-carry)}" && pwd)
  out=${OUT:-$PWD/gpu-results}
  if [ -f "$carry/kernels.tar.xz" ] && [ ! -d "$carry/kernels" ]; then
    mkdir -p "$carry/kernels" && tar -xJf "$carry/kernels.tar.xz" -C "$carry/kernels"
  fi
  # Outside the carried folder, so a warm machine keeps it between calls.
  build=${TESSEL_GPU_BUILD:-$carry/../build-gpu}
  mkdir -p "$out"
  stages=${*:-build tests softmax}
  # The snapshot's COMMIT, or one the caller wrote into the carry (a working-tree copy's
  # .git may name an older HEAD than the files it holds).
  commit=$(cat COMMIT "$carry/COMMIT" 2>/dev/null | head -n 1 || true)
  commit=${commit:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $commit"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  } | tee "$out/device.txt"
  for stage in $stages; do
    echo "=== $stage ==="
    case "$stage" in
    build)
      torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
      cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=Release \
        -DTESSEL_ENABLE_COMPILER=OFF \
        -DTESSEL_PACKAGE_DIR="$carry/kernels" \
        -DTESSEL_GTEST_SOURCE_DIR="$carry/googletest" \
        -DCMAKE_PREFIX_PATH="$torch_prefix" > "$out/configure.log" 2>&1 ||
        { tail -n 40 "$out/configure.log"; exit 1; }
      # Keep going past a broken target so the rest still gets tested; report it.
      # shellcheck disable=SC2086
      if ninja -C "$build" -k 0 -j"$(nproc)" ${TESSEL_GPU_TARGETS:-} > "$out/build.log" 2>&1; then
        echo "built"
      else
        failed "build"
        echo "BUILD FAILED for some targets:"
        grep -E "error|FAILED" -A5 "$out/build.log" | head -n 60
      fi
      ;;
    tests)
      # Only the GPU subtree: the rest is CI's (and runs without a GPU).
      TESSEL_AGREEMENT_DIR="$carry/agreement" ctest --test-dir "$build/test/gpu" -L gpu --output-on-failure -j4 > "$out/gpu-tests.log" 2>&1 || failed "gpu tests"
      tail -n 25 "$out/gpu-tests.log"
      ;;
    softmax)
      "$build"/bin/tessel-bench softmax --json "$out/softmax.json" --markdown "$out/softmax.md" 2>&1 |
        tee "$out/softmax.txt"
      ;;
    matmul)
      # The matmul GPU tests, the benchmark against cuBLAS, and ptxas's registers, shared
      # memory and spills for every config of the bf16 and f32 packages.
      "$build"/bin/tessel-matmul-gpu-tests > "$out/matmul-tests.log" 2>&1 || failed "matmul tests"
      tail -n 20 "$out/matmul-tests.log"
      start_clocks matmul
      "$build"/bin/tessel-bench matmul --json "$out/matmul.json" --markdown "$out/matmul.md" 2>&1 |
        tee "$out/matmul.txt" || failed "matmul bench"
      stop_clocks
      # The sm_90a (wgmma) build, bf16 and tf32.
      "$build"/bin/tessel-bench matmul --suffix _sm90a --dtype bf16,f32 --json "$out/matmul-sm90a.json" \
        --markdown "$out/matmul-sm90a.md" 2>&1 | tee "$out/matmul-sm90a.txt" || failed "sm90a matmul bench"
      matmul_resources bf16 f32 bf16_sm90a f32_sm90a
      ;;
    wgmma)
      # The sm_90a (wgmma) packages: their GPU tests, the benchmark, ptxas resources.
      "$build"/bin/tessel-matmul-gpu-tests --gtest_filter='*sm90a*' > "$out/matmul-tests.log" 2>&1 || failed "wgmma matmul tests"
      tail -n 12 "$out/matmul-tests.log"
      "$build"/bin/tessel-bench matmul --suffix _sm90a --dtype bf16,f16,f32 --samples 50 \
        --json "$out/matmul-sm90a.json" --markdown "$out/matmul-sm90a.md" 2>&1 |
        tee "$out/matmul-sm90a.txt" || failed "sm90a matmul bench"
      matmul_resources bf16_sm90a f32_sm90a
      ;;
    multicast)
      # Programs sharing B tiles in clusters of two (TMA multicast, the _mc2 packages):
      # their GPU tests, then the benchmark of each package beside the one without,
      # alternating (plain, _mc2, plain, _mc2) so that both meet the same board.
      "$build"/bin/tessel-matmul-gpu-tests --gtest_filter='*mc2*' > "$out/multicast-tests.log" 2>&1 || failed "multicast tests"
      tail -n 12 "$out/multicast-tests.log"
      start_clocks multicast
      for round in 1 2; do
        for suffix in "" _mc2; do
          "$build"/bin/tessel-bench matmul --suffix "$suffix" --dtype f32,bf16 --sizes 4096,8192 \
            --json "$out/multicast${suffix:-_plain}-$round.json" 2>&1 |
            tee -a "$out/multicast-bench.txt" || failed "multicast bench"
        done
      done
      stop_clocks
      matmul_resources f32_mc2 bf16_mc2
      ;;
    ceilings)
      mkdir -p "$build"
      nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
      "$nvcc" -O3 -arch=sm_90 bench/ceilings/mma_sync_peak.cu -o "$build/mma_sync_peak" &&
        "$build/mma_sync_peak" | tee "$out/mma-sync-peak.txt"
      "$nvcc" -O3 -arch=sm_90 bench/ceilings/mma_sync_loop.cu -o "$build/mma_sync_loop" &&
        "$build/mma_sync_loop" | tee "$out/mma-sync-loop.txt"
      ;;
    triton)
      # Triton's own matmul on both Hopper paths, cuBLAS in the same process; each mode in
      # its own process and kernel cache (the switch is read when Triton compiles).
      for mode in wgmma mma-sync; do
        env $([ "$mode" = mma-sync ] && echo DISABLE_MMA_V3=1) TRITON_CACHE_DIR="$build/triton-$mode" \
          python3 bench/reference/triton_matmul.py --dtype f32,bf16 --json "$out/triton-$mode.json" 2>&1 |
          grep -v Warning | tee "$out/triton-$mode.txt" || failed "triton matmul"
      done
      ;;
    attention)
      # FlashAttention: the op's GPU tests (ATTENTION_TESTS=0 skips them), then the studies of
      # tessel-bench attention (ATTENTION_STUDIES, default all three) with their plots, and
      # Triton's FA2 at the realistic shapes.
      if [ "${ATTENTION_TESTS:-1}" != 0 ]; then
        timeout "${ATTENTION_TEST_TIMEOUT:-400}" "$build"/bin/tessel-attention-gpu-tests \
          > "$out/attention-tests.log" 2>&1 || failed "attention tests"
        # (display only: a log cut short by the timeout has no summary line)
        { grep -E "FAILED|PASSED|SKIPPED \]|tests ran" "$out/attention-tests.log" || true; } | tail -n 30
      fi
      for study in ${ATTENTION_STUDIES:-realistic flash naive}; do
        [ "$study" = none ] && continue # ATTENTION_STUDIES=none: the tests alone
        "$build"/bin/tessel-bench attention --study "$study" --json "$out/attention-$study.json" \
          --csv "$out/attention-$study.csv" --plot "$out/attention-$study.png" 2>&1 |
          tee "$out/attention-$study.txt" || failed "attention $study"
        if [ "$study" = realistic ]; then
          python3 bench/reference/triton_attention.py --json "$out/attention-triton.json" 2>&1 |
            grep -v Warning | tee "$out/attention-triton.txt" || failed "triton attention"
          # The realistic study's causal-only shapes (short context, long context).
          python3 bench/reference/triton_attention.py --shapes 16x12x1024x64,1x16x16384x128 \
            --causal 1 --json "$out/attention-triton-causal.json" 2>&1 |
            grep -v Warning | tee -a "$out/attention-triton.txt" || failed "triton attention"
        fi
      done
      ;;
    fused)
      # The training step's fused kernels: their GPU tests (every op and gradient against
      # float64, AdamW against torch::optim::AdamW, the model against eager), tessel-bench
      # fused next to torch.compile and Triton (bench/reference/fused_ops.py), then the
      # train step with --kernels eager,tessel (and every switch on Tessel, --matmul tessel)
      # against torch.compile in Python, fused AdamW, and tessel-bench linear against cuBLAS.
      timeout 600 "$build"/bin/tessel-ops-gpu-tests > "$out/ops-tests.log" 2>&1 || failed "ops tests"
      { grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran" "$out/ops-tests.log" || true; } | tail -n 20
      "$build"/bin/tessel-bench fused --json "$out/fused.json" --markdown "$out/fused.md" 2>&1 |
        tee "$out/fused.txt" || failed "fused bench"
      python3 bench/reference/fused_ops.py --json "$out/fused-reference.json" 2>&1 |
        grep -v Warning | tail -n 14 | tee "$out/fused-reference.txt" || failed "fused reference"
      for graph in "" --cuda-graph; do
        "$build"/bin/tessel-bench model --model ${FUSED_MODELS:-small,xl} --context-length 512 \
          --batch-size 4 --mode train-step --precision bf16 --attention sdpa,tessel \
          --kernels eager,tessel $graph --warmup 3 --steps 10 \
          --json "$out/step${graph:+-graph}.json" 2>&1 | tail -n 12 | tee "$out/step${graph:+-graph}.txt" ||
          failed "model step $graph"
        # Every switch on Tessel: the linears on Tessel's matmul too (--matmul tessel).
        "$build"/bin/tessel-bench model --model ${FUSED_MODELS:-small,xl} --context-length 512 \
          --batch-size 4 --mode train-step --precision bf16 --attention tessel --kernels tessel \
          --matmul tessel $graph --warmup 3 --steps 10 \
          --json "$out/step-matmul${graph:+-graph}.json" 2>&1 | tail -n 6 |
          tee "$out/step-matmul${graph:+-graph}.txt" || failed "model step --matmul tessel $graph"
      done
      "$build"/bin/tessel-bench linear --model ${FUSED_MODELS:-small,xl} --json "$out/linear.json" \
        --markdown "$out/linear.md" 2>&1 | tail -n 32 | tee "$out/linear.txt" || failed "linear bench"
      python3 bench/reference/transformer_lm.py --model ${FUSED_MODELS:-small,xl} --context-length 512 \
        --batch-size 4 --mode train-step --precision bf16 --attention sdpa --impl eager,compile \
        --adamw fused --warmup 3 --steps 10 --json "$out/step-python.json" 2>&1 |
        grep -v Warning | tail -n 8 | tee "$out/step-python.txt" || failed "python step"
      ;;
    model-attention)
      # The model with Tessel's attention against SDPA: small and xl, context 512 and 2048.
      "$build"/bin/tessel-bench model --model small,xl --context-length 512,2048 --batch-size 4 \
        --mode train-step --precision bf16 --attention sdpa,tessel --warmup 3 --steps 10 \
        --json "$out/model-attention.json" --markdown-file "$out/model-attention.md" 2>&1 |
        tee "$out/model-attention.txt" || failed "model-attention"
      ;;
    sanitize)
      sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
      [ -x "$sanitizer" ] || { failed "sanitize: no compute-sanitizer"; continue; }
      # tool binary gtest-filter: each line one run; the log says ERROR SUMMARY per run.
      # API errors are not reported: the tests provoke some on purpose (bad PTX, bad
      # launches) and check the runtime's messages; memory and race errors still are.
      # TESSEL_AUTOTUNE=0: launches take the first fitting configuration instead of timing
      # every one under the tool (tests that name configurations still run each); the
      # 4 GiB tensors of LargeTensorTest are left to the plain run.
      attention_filter=${SANITIZE_FILTER:-'*bf16_d64*:*bf16_generic_d128*:*f32_d32*:FlashAttentionViews*'}
      while read -r tool binary filter; do
        log="$out/sanitize-$tool-$binary.log"
        rc=0
        TESSEL_AUTOTUNE=0 TESSEL_AGREEMENT_DIR="$carry/agreement" timeout "${SANITIZE_TIMEOUT:-600}" "$sanitizer" --tool "$tool" \
          --error-exitcode 99 --print-limit 20 --report-api-errors no "$build/bin/$binary" --gtest_filter="$filter" \
          > "$log" 2>&1 || rc=$?
        summary=$({ grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" || true; } | tail -n 1)
        [ "$rc" = 124 ] && summary="timed out after ${SANITIZE_TIMEOUT:-600} s"
        echo "$tool $binary ($filter): exit $rc, ${summary:-no summary}" | tee -a "$out/sanitize.txt"
        [ "$rc" = 0 ] || failed "sanitize $tool $binary"
      done <<LIST
memcheck tessel-runtime-smoke *
memcheck tessel-kernel-gpu-tests *:-LargeTensorTest.*
memcheck tessel-agreement-gpu-tests *
memcheck tessel-matmul-gpu-tests *SmallAndRaggedSizes*
memcheck tessel-attention-gpu-tests $attention_filter
memcheck tessel-ops-gpu-tests *
racecheck tessel-kernel-gpu-tests *:-LargeTensorTest.*
racecheck tessel-matmul-gpu-tests *SmallAndRaggedSizes*
racecheck tessel-attention-gpu-tests *QueryAndKeyLengthsDiffer*/bf16_d64:FlashAttentionViews*
racecheck tessel-ops-gpu-tests DTypes/*
synccheck tessel-kernel-gpu-tests *:-LargeTensorTest.*
synccheck tessel-matmul-gpu-tests *SmallAndRaggedSizes*
synccheck tessel-attention-gpu-tests *MatchesFloat64*/bf16_d64
synccheck tessel-ops-gpu-tests DTypes/*
LIST
      ;;
    launch)
      # Launch overhead and first-call tuning (the autotuner's own small build).
      OUT="$out" BUILD_DIR="$build-launch" TESSEL_CARRY="$carry" bash bench/launch/run-launch-gpu.sh
      ;;
    *)
      echo "unknown stage $stage" >&2
      exit 2
      ;;
    esac
  done
  # Every result in one small archive too: the device tool brings back at most 8 files of
  # $OUT (so far the first 8 by name, hence the leading zeros).
  archive=$(mktemp)
  tar -czf "$archive" -C "$out" --exclude 00-results.tar.gz . &&
    mv "$archive" "$out/00-results.tar.gz" && echo "all results: $out/00-results.tar.gz"
  if [ -n "$failures" ]; then
    echo "gpu-check: failed: ${failures#; }" >&2
    exit 1
  fi
  ;;
*)
  echo "usage: $0 prepare | run [build tests softmax ...]" >&2
  exit 2
  ;;
esac
