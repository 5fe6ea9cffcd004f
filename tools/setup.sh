#!/usr/bin/env bash
# Installs what Tessel's build needs on a fresh Debian 12 machine (idempotent):
# LLVM/MLIR 22, lit/FileCheck, GoogleTest, ninja, ccache, and LibTorch (the torch wheel).
set -euo pipefail
need_apt=()
for pkg in llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools libzstd-dev zlib1g-dev \
           libedit-dev libxml2-dev libcurl4-openssl-dev libgtest-dev ninja-build ccache cmake g++; do
  dpkg -s "$pkg" > /dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: apt-get install ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" > /dev/null
fi
if ! python3 -c "import torch" > /dev/null 2>&1; then
  echo "setup: pip install torch==2.11.0 (LibTorch for the harness)"
  python3 -m pip install -q torch==2.11.0
fi
if [ ! -f /usr/local/cuda/include/cuda.h ]; then
  echo "setup: warning: no CUDA toolkit headers at /usr/local/cuda/include (cuda.h); set CUDA_HOME" >&2
fi
echo "setup: done"
