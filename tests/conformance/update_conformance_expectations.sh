#!/usr/bin/env bash
# Rewrites tests/conformance/native_expected.txt and interpreter_expected.txt with the ONNX
# backend tests that pass end to end through kiln-conformance now (natively, and with the
# interpreter). Run after an improvement; CI fails when a listed test stops passing.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
"$BUILD/tools/kiln-conformance/kiln-conformance" --jobs "${KILN_JOBS:-2}" --backend native \
  --tolerances "$ROOT/tests/conformance/tolerances.txt" --record "$ROOT/tests/conformance/native_expected.txt" | tail -12
"$BUILD/tools/kiln-conformance/kiln-conformance" --jobs "${KILN_JOBS:-2}" --backend interp \
  --tolerances "$ROOT/tests/conformance/tolerances.txt" --record "$ROOT/tests/conformance/interpreter_expected.txt" | tail -12
