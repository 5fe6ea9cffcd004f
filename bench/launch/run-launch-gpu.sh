#!/usr/bin/env bash
# The autotuner's GPU tests and tessel-launch-bench on a GPU machine, in one call.
#
#   bash bench/launch/run-launch-gpu.sh              (from a checkout or .gpu-carry/src)
#   run(command="bash .gpu-carry/src/bench/launch/run-launch-gpu.sh", carry=[".gpu-carry"])
#
# Builds only the runtime, tessel-launch-bench and the autotune GPU tests (a small
# wrapper CMake project, so it needs neither LibTorch nor changes elsewhere), runs the
# tests, the launch-overhead benchmark and, when a softmax package was carried
# (.gpu-carry/kernels/softmax_f32.tslpkg), its first-call tuning and warm-cache start.
# Results go to $OUT (default ./gpu-results): autotune-gpu-tests.log, launch.json,
# launch.txt. Environment: SOFTMAX_PKG (default softmax_f32.tslpkg), SOFTMAX_ARGS
# (default: every integer scalar and the grid 4096, i.e. a 4096x4096 softmax; configs
# whose BLOCK cannot hold a row pruned, as long as the package has no prune= of its own).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
carry=$(cd "${TESSEL_CARRY:-$( [ -f "$src/COMMIT" ] && echo "$src/.." || echo "$src/.gpu-carry")}" 2>/dev/null && pwd || echo "")
out=${OUT:-$PWD/gpu-results}
build=${BUILD_DIR:-$src/build-launch}
mkdir -p "$out" "$build/wrapper"

cat > "$build/wrapper/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(TesselLaunch VERSION 0.1.0 LANGUAGES C CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release)
endif()
set(TESSEL_WARNINGS -Wall -Wextra -Wno-unused-parameter)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY \${PROJECT_BINARY_DIR}/bin)
find_path(CUDA_DRIVER_INCLUDE_DIR cuda.h
  HINTS \$ENV{CUDA_HOME}/include /usr/local/cuda/include /usr/local/cuda/targets/x86_64-linux/include)
include_directories($src)
enable_testing()
find_package(GTest QUIET)
if(NOT GTest_FOUND)
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  add_subdirectory($carry/googletest \${PROJECT_BINARY_DIR}/googletest EXCLUDE_FROM_ALL)
  add_library(GTest::gtest ALIAS gtest)
  add_library(GTest::gtest_main ALIAS gtest_main)
endif()
function(tessel_add_gtest name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" \${ARGN})
  add_executable(\${name} \${ARG_SOURCES})
  target_link_libraries(\${name} PRIVATE \${ARG_LIBS} GTest::gtest GTest::gtest_main)
  target_compile_options(\${name} PRIVATE \${TESSEL_WARNINGS})
endfunction()
add_subdirectory($src/runtime runtime)
add_subdirectory($src/bench/launch launch)
add_subdirectory($src/test/gpu/autotune autotune)
CMAKE

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(cat "$src/COMMIT" 2>/dev/null || git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
} | tee "$out/launch-device.txt"

cmake -G Ninja -S "$build/wrapper" -B "$build" > "$out/launch-configure.log" 2>&1 ||
  { tail -n 40 "$out/launch-configure.log"; exit 1; }
ninja -C "$build" -j"$(nproc)" tessel-launch-bench tessel-autotune-gpu-tests > "$out/launch-build.log" 2>&1 ||
  { grep -E "error|FAILED" -A5 "$out/launch-build.log" | head -n 60; exit 1; }

echo "=== autotune GPU tests ==="
"$build/bin/tessel-autotune-gpu-tests" > "$out/autotune-gpu-tests.log" 2>&1 || true
grep -E "^\[ (measured|tuning) |OK \]|FAILED|SKIPPED|PASSED|tessel:" "$out/autotune-gpu-tests.log" | head -n 40

echo "=== launch overhead ==="
pkg_args=()
pkg=${SOFTMAX_PKG:-softmax_f32.tslpkg}
if [ -n "$carry" ] && [ -f "$carry/kernels/$pkg" ]; then
  read -r -a extra <<< "${SOFTMAX_ARGS:---default-int 4096 --grid 4096}"
  pkg_args=(--package "$carry/kernels/$pkg" --prune "BLOCK < n_cols" "${extra[@]}")
fi
"$build/bin/tessel-launch-bench" --json "${pkg_args[@]}" > "$out/launch.json" 2> "$out/launch.stderr" ||
  { cat "$out/launch.stderr"; exit 1; }
"$build/bin/tessel-launch-bench" --launches 100000 "${pkg_args[@]}" 2>&1 | tee "$out/launch.txt"
