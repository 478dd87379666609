#!/usr/bin/env bash
# Configures the sanitized build that scripts/test.sh (the core unit tests under
# ASan + UBSan) and scripts/fuzz.sh (the libFuzzer targets) share: clang with
# -DKILN_FUZZ=ON, -O1 with line tables only (reports need file:line, not locals;
# this is CI's largest build). Usage: configure_sanitized.sh BUILD_DIR
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLANG="$(command -v clang++-14 || command -v clang++)"
CLANG_C="$(command -v clang-14 || command -v clang)"
cmake -S "$ROOT" -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
  -DKILN_FUZZ=ON -DCMAKE_CXX_COMPILER="$CLANG" -DCMAKE_C_COMPILER="$CLANG_C"
