#!/usr/bin/env bash
# The main job: compile kernels/softmax.tsl to a package, show what the compiler made,
# then (on a machine with a GPU) check it and benchmark it against torch.softmax.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
if [ ! -f "$build/bin/tesselc" ]; then
  echo "== first build: compiler, runtime, harness, tests and every kernel package;"
  echo "   about 17 minutes on 2 cores, measured from a fresh clone (later builds are"
  echo "   incremental). ninja's progress:"
fi
bash tools/build.sh
echo "== tesselc kernels/softmax.tsl -D T=f32 -o $build/softmax_f32.tslpkg"
"$build/bin/tesselc" kernels/softmax.tsl -D T=f32 -o "$build/softmax_f32.tslpkg"
echo
echo "== the aligned variant's memory and warp instructions (BLOCK=1024):"
"$build/bin/tesselc" --emit=ptx --specialize --config 1 kernels/softmax.tsl |
  grep -E "ld.global|st.global|shfl.sync|ex2.approx|bar.sync" | sort | uniq -c
echo
if "$build/bin/tessel-bench" softmax --packages "$build/kernels" --rows 4096 --cols 1024,4096,16384; then
  exit 0
fi
echo
echo "No GPU here: the package above is ready. On a machine with an NVIDIA GPU run"
echo "  bash tools/demo.sh               (benchmark), or"
echo "  bash tools/gpu-check.sh prepare && bash .gpu-carry/src/tools/gpu-check.sh run"
echo "to run the GPU tests and benchmarks."
