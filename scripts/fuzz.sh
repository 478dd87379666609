#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for a
# bounded time (KILN_FUZZ_SECONDS, default 60) from a seed corpus of real ONNX
# models. Exits non-zero when a fuzzer finds a crash (the reproducer is left
# in $BUILD/fuzz-artifacts).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD="${KILN_FUZZ_BUILD_DIR:-build-fuzz}"
SECONDS_PER_TARGET="${KILN_FUZZ_SECONDS:-60}"
CLANG="$(command -v clang++-14 || command -v clang++)"

cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_FUZZ=ON \
  -DCMAKE_CXX_COMPILER="$CLANG" >"$ROOT/$BUILD.configure.log" 2>&1 ||
  { cat "$ROOT/$BUILD.configure.log"; exit 1; }
cmake --build "$BUILD" -j"${KILN_JOBS:-2}" --target kiln_onnx_import_fuzzer

corpus="$BUILD/corpus/onnx_import"
mkdir -p "$corpus" "$BUILD/fuzz-artifacts"
# Seeds: small models of the ONNX backend test data (real files, many ops).
# (An array, not `| head`: under pipefail, head closing the pipe fails the script.)
mapfile -t seeds < <(find /usr/share/libonnx-testdata/data/node -name model.onnx -size -4k | sort)
for model in "${seeds[@]:0:300}"; do
  cp "$model" "$corpus/$(basename "$(dirname "$model")").onnx"
done
"$BUILD/tests/fuzz/kiln_onnx_import_fuzzer" "$corpus" -max_total_time="$SECONDS_PER_TARGET" \
  -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$BUILD/fuzz-artifacts/" -print_final_stats=1
