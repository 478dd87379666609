#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for a
# bounded time (KILN_FUZZ_SECONDS per target, default 60): ONNX bytes, graph
# text, pipeline text and a whole CompileRequest, every text a request can
# carry. Seeds: the committed corpora in tests/fuzz/corpus/ (and, for ONNX,
# small models of the ONNX backend test data). The fuzzers run with kilnd's
# production limits. Exits non-zero when a fuzzer finds a crash (the
# reproducer is left in $BUILD/fuzz-artifacts).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD="${KILN_FUZZ_BUILD_DIR:-build-san}"
SECONDS_PER_TARGET="${KILN_FUZZ_SECONDS:-60}"
TARGETS=(onnx_import graph_text pipeline compile_request)

bash "$ROOT/scripts/configure_sanitized.sh" "$BUILD" >"$BUILD.configure.log" 2>&1 ||
  { cat "$BUILD.configure.log"; exit 1; }
fuzzers=()
for target in "${TARGETS[@]}"; do fuzzers+=("kiln_${target}_fuzzer"); done
cmake --build "$BUILD" -j"${KILN_JOBS:-2}" --target "${fuzzers[@]}"

mkdir -p "$BUILD/fuzz-artifacts"
for target in "${TARGETS[@]}"; do
  corpus="$BUILD/corpus/$target"
  mkdir -p "$corpus"
  if [[ -d "tests/fuzz/corpus/$target" ]]; then cp tests/fuzz/corpus/"$target"/* "$corpus/"; fi
  if [[ "$target" == onnx_import ]]; then
    # Small models of the ONNX backend test data (real files, many ops).
    # (An array, not `| head`: under pipefail, head closing the pipe fails the script.)
    mapfile -t seeds < <(find /usr/share/libonnx-testdata/data/node -name model.onnx -size -4k | sort)
    for model in "${seeds[@]:0:300}"; do
      cp "$model" "$corpus/$(basename "$(dirname "$model")").onnx"
    done
  fi
  # The compile budget allows 4 GiB of tensors per compile (kilnd's
  # default): the whole-request fuzzer may use that much, and a compile may
  # run until its 5 s deadline (slower under the sanitizers).
  rss_limit=2048 timeout=10
  if [[ "$target" == compile_request ]]; then rss_limit=6144 timeout=60; fi
  echo "== $target (${SECONDS_PER_TARGET}s)"
  "$BUILD/tests/fuzz/kiln_${target}_fuzzer" "$corpus" -max_total_time="$SECONDS_PER_TARGET" \
    -rss_limit_mb="$rss_limit" -malloc_limit_mb="$rss_limit" -timeout="$timeout" \
    -artifact_prefix="$BUILD/fuzz-artifacts/${target}-" -print_final_stats=1
done
