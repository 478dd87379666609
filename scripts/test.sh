#!/usr/bin/env bash
# Builds Kiln and runs every test suite: ctest (gtest unit tests) and lit (kiln-opt + FileCheck).
# Both suites always run, even when the first fails; a summary of each is printed at the end and
# the exit status is non-zero when the build or any suite failed.
#
# Environment (KILN_SKIP_ASAN, KILN_SKIP_FUZZ and KILN_SKIP_CONFORMANCE=1 skip those stages):
#   KILN_BUILD_DIR  build directory (default: build/ in the repository root)
#   KILN_JOBS       parallel build and test jobs (default: 2)
#   KILN_SANITIZE   forwarded as -DKILN_SANITIZE=... (e.g. address,undefined)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

BUILD="${KILN_BUILD_DIR:-build}"
JOBS="${KILN_JOBS:-2}"
LIT=/usr/lib/llvm-19/build/utils/lit/lit.py
# Debian's interpreter: a bare python3 on PATH may be another one (TOOLCHAIN.md).
PYTHON=/usr/bin/python3
[[ -x "$PYTHON" ]] || PYTHON=python3

bash "$ROOT/scripts/bootstrap.sh"

# Every stage header carries the time since the start: CI's limit is on the whole run.
elapsed() { printf '%dm%02ds' $((SECONDS / 60)) $((SECONDS % 60)); }

# KILN_SANITIZE is always passed (empty when unset) so a build dir never silently keeps the
# sanitizers of an earlier run. Line tables only (-g1): backtraces keep file:line, and a cold build
# takes about a third less time than with full debug info (template-heavy gtest and absl code).
configure_args=(-S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
  "-DKILN_SANITIZE=${KILN_SANITIZE:-}")

echo "== configure ($BUILD) at $(elapsed)"
if ! cmake "${configure_args[@]}"; then
  echo "== summary: configure FAILED" >&2
  exit 1
fi
echo "== build (-j$JOBS) at $(elapsed)"
if ! cmake --build "$BUILD" -j"$JOBS"; then
  echo "== summary: build FAILED" >&2
  exit 1
fi

mkdir -p "$BUILD/logs"
ctest_log="$BUILD/logs/ctest.log"
lit_log="$BUILD/logs/lit.log"

echo "== ctest at $(elapsed)"
set +e
ctest --test-dir "$BUILD" --output-on-failure -j"$JOBS" 2>&1 | tee "$ctest_log"
ctest_status=${PIPESTATUS[0]}
echo "== lit at $(elapsed)"
"$PYTHON" "$LIT" -sv "$BUILD/tests/lit" 2>&1 | tee "$lit_log"
lit_status=${PIPESTATUS[0]}
set -e

# The engine's core suites again under AddressSanitizer + UndefinedBehaviorSanitizer
# (any report fails): deep chains, iterative destruction and hostile parser input are
# where memory bugs hide. One clang build (scripts/fuzz.sh's, -O1 with line tables)
# serves these tests and the fuzzers below, so CI builds the engine instrumented once.
SAN_BUILD="$BUILD-san"
export KILN_FUZZ_BUILD_DIR="$SAN_BUILD"
asan_status=0
if [[ -z "${KILN_SANITIZE:-}" && "${KILN_SKIP_ASAN:-0}" != 1 ]]; then
  asan_targets=(kiln_ir_test kiln_printer_test kiln_parser_test kiln_roundtrip_test
    kiln_op_test kiln_frontend_test kiln_transform_test kiln_loop_test kiln_te_test
    kiln_op_compute_test kiln_lower_test kiln_driver_test kiln_codegen_test kiln_tools_test)
  echo "== sanitizers (address,undefined) in $SAN_BUILD at $(elapsed): ${asan_targets[*]}"
  if bash "$ROOT/scripts/configure_sanitized.sh" "$SAN_BUILD" >"$BUILD/logs/asan-configure.log" 2>&1 &&
     cmake --build "$SAN_BUILD" -j"$JOBS" --target "${asan_targets[@]}"; then
    for target in "${asan_targets[@]}"; do
      binary="$(find "$SAN_BUILD/tests" -type f -name "$target" | head -1)"
      # allocator_may_return_null: an allocation too large for memory fails as it would without
      # the sanitizer (NULL), which the runtime turns into KILN_ERROR_OUT_OF_MEMORY.
      if ! ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 "$binary" \
          --gtest_brief=1 >"$BUILD/logs/asan-$target.log" 2>&1; then
        echo "   $target FAILED under sanitizers (see $BUILD/logs/asan-$target.log)"
        tail -30 "$BUILD/logs/asan-$target.log"
        asan_status=1
      else
        echo "   $target ok"
      fi
    done
  else
    echo "   sanitizer build FAILED"
    tail -30 "$BUILD/logs/asan-configure.log"
    asan_status=1
  fi
fi

# The ONNX backend tests end to end (import, -O3, lowering, then native code through LLVM and
# LLJIT, and again with the loop-IR interpreter), each case isolated in a child process. A case
# listed in tests/conformance/native_expected.txt (interpreter_expected.txt) that fails natively
# (interpreted) is a regression, and the native list must hold every case the interpreter's does.
# The interpreted run also checks every graph pass of every passing case for numeric drift
# (--check_numerics): a pass that moves a case's outputs past its tolerance fails it, naming the
# pass and the first layer it changed.
conformance_status=0
if [[ "${KILN_SKIP_CONFORMANCE:-0}" != 1 ]]; then
  for backend in native interp; do
    expected="$ROOT/tests/conformance/native_expected.txt"
    drift=()
    if [[ $backend == interp ]]; then
      expected="$ROOT/tests/conformance/interpreter_expected.txt"
      drift=(--check_numerics)
    fi
    echo "== conformance (kiln-conformance --backend=$backend ${drift[*]}, -j$JOBS) at $(elapsed)"
    conformance_log="$BUILD/logs/conformance-$backend.log"
    if "$BUILD/tools/kiln-conformance/kiln-conformance" --jobs "$JOBS" --backend "$backend" \
        "${drift[@]}" \
        --expected "$expected" --tolerances "$ROOT/tests/conformance/tolerances.txt" \
        --json "$BUILD/logs/conformance-$backend.json" \
        >"$conformance_log" 2>&1; then
      sed -n '/^failures by stage:/,$p' "$conformance_log"
    else
      conformance_status=1
      sed -n '/^failures by stage:/,$p' "$conformance_log"
      echo "   conformance --backend=$backend FAILED (see $conformance_log)"
    fi
  done
  only_interpreted="$(comm -13 <(grep -v '^#' "$ROOT/tests/conformance/native_expected.txt" | sort) \
    <(grep -v '^#' "$ROOT/tests/conformance/interpreter_expected.txt" | sort))"
  if [[ -n "$only_interpreted" ]]; then
    echo "   cases the interpreter passes but native_expected.txt does not list:"
    echo "$only_interpreted" | sed 's/^/     /'
    conformance_status=1
  fi
fi

# The ONNX importer under libFuzzer for a bounded time (clang build).
fuzz_status=0
if [[ "${KILN_SKIP_FUZZ:-0}" != 1 ]]; then
  echo "== fuzz (${KILN_FUZZ_SECONDS:-30}s per target) at $(elapsed)"
  if ! KILN_FUZZ_SECONDS="${KILN_FUZZ_SECONDS:-30}" bash "$ROOT/scripts/fuzz.sh" \
      >"$BUILD/logs/fuzz.log" 2>&1; then
    echo "   fuzzing FAILED (see $BUILD/logs/fuzz.log)"
    tail -40 "$BUILD/logs/fuzz.log"
    fuzz_status=1
  else
    grep -E "^== |Done [0-9]+ runs" "$BUILD/logs/fuzz.log" || true
    echo "   fuzz ok"
  fi
fi

# The README's first command, end to end against the build above (it must keep working).
demo_status=0
if [[ "${KILN_SKIP_DEMO:-0}" != 1 ]]; then
  echo "== demo (scripts/demo.sh) at $(elapsed)"
  if KILN_BUILD_DIR="$BUILD" KILN_JOBS="$JOBS" bash "$ROOT/scripts/demo.sh" \
      >"$BUILD/logs/demo.log" 2>&1; then
    grep -E "^== " "$BUILD/logs/demo.log" | sed 's/^/   /'
    echo "   demo ok"
  else
    demo_status=1
    tail -30 "$BUILD/logs/demo.log"
    echo "   demo FAILED (see $BUILD/logs/demo.log)"
  fi
fi

# Counts for the summary. ctest: "N% tests passed, F tests failed out of T".
ctest_total=0 ctest_failed=0
if line="$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$ctest_log" | tail -1)"; then
  ctest_failed="$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")"
  ctest_total="$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\2/' <<<"$line")"
elif [[ $ctest_status -ne 0 ]]; then
  ctest_failed=1
fi
ctest_passed=$((ctest_total - ctest_failed))

# lit: "  Label: N (P%)" per result code, labels and counts padded.
lit_count() {
  grep -E "^  $1 *: *[0-9]+" "$lit_log" | sed -E 's/.*: *([0-9]+).*/\1/' | tail -1 || true
}
lit_passed=0 lit_failed=0 lit_skipped=0
for label in 'Passed' 'Passed With Retry' 'Expectedly Failed'; do
  n="$(lit_count "$label")"; lit_passed=$((lit_passed + ${n:-0}))
done
for label in 'Failed' 'Unresolved' 'Timed Out' 'Unexpectedly Passed'; do
  n="$(lit_count "$label")"; lit_failed=$((lit_failed + ${n:-0}))
done
for label in 'Unsupported' 'Skipped' 'Excluded'; do
  n="$(lit_count "$label")"; lit_skipped=$((lit_skipped + ${n:-0}))
done
if [[ $lit_status -ne 0 && $lit_failed -eq 0 ]]; then
  lit_failed=1  # lit itself failed (e.g. a config error or no tests discovered)
fi

verdict() { if [[ $1 -eq 0 ]]; then echo ok; else echo "FAILED (exit $1)"; fi; }
echo
echo "== summary at $(elapsed)"
echo "ctest: $ctest_passed passed, $ctest_failed failed -- $(verdict "$ctest_status")"
echo "lit:   $lit_passed passed, $lit_failed failed, $lit_skipped skipped -- $(verdict "$lit_status")"
echo "asan:  $(verdict "$asan_status")"
echo "fuzz:  $(verdict "$fuzz_status")"
echo "conformance: $(verdict "$conformance_status")"
echo "demo:  $(verdict "$demo_status")"
echo "total: $((ctest_passed + lit_passed)) passed, $((ctest_failed + lit_failed)) failed"

if [[ $ctest_status -ne 0 || $lit_status -ne 0 || $asan_status -ne 0 || $fuzz_status -ne 0 ||
      $conformance_status -ne 0 || $demo_status -ne 0 ]]; then
  exit 1
fi
