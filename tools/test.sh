#!/usr/bin/env bash
# The test command: builds, then runs every test that needs no GPU — lit (compiler),
# GoogleTest (frontend, runtime, autotuner, interpreter, harness, distributed on Gloo).
# GPU tests are built too and count as skipped here; tools/gpu-check.sh runs them on a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh
build=${BUILD_DIR:-build}
ctest --test-dir "$build" --output-on-failure -j"${JOBS:-$(nproc)}" --timeout 600
