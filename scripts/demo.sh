#!/usr/bin/env bash
# Kiln demo: bootstraps, builds, starts kilnd on a free loopback port, and uses it as a client
# would: health, a compile of a bundled example ONNX model (artifacts with digests), the pass
# trace (every pass, the IR diff of each that changed the model, every node's ONNX layer), the
# schedule record of the first layer's kernel, native code (an object and a C header from kilnd, linked
# into examples/run_model.c with the system compiler and libkiln_rt, run beside the
# interpreter), the same trace from the Python client, the Prometheus pass-timing metrics, and the
# Kiln Explorer (kiln-explorer: the web app over this kilnd; run from a terminal, the demo waits
# while you use it at the printed URL, until Ctrl-C). Then it stops the servers with SIGTERM.
#
# Environment: KILN_BUILD_DIR (default build/), KILN_JOBS (default 2), KILN_EXPLORER_LISTEN
# (default 127.0.0.1:0, a free port; e.g. 0.0.0.0:8080 to open it from another machine).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

BUILD="${KILN_BUILD_DIR:-build}"
JOBS="${KILN_JOBS:-2}"
PYTHON=/usr/bin/python3

bash "$ROOT/scripts/bootstrap.sh"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" -j"$JOBS" --target kilnd kiln kiln_client_python kiln-run kiln_rt_dist kiln-explorer

KILN="$BUILD/clients/cli/kiln"
DEMO="$BUILD/demo"
mkdir -p "$DEMO"
MODEL="$DEMO/small_cnn.onnx"
SHAPE=(--input-shape=input=1,3,16,16)

echo
echo "== the example model: examples/make_small_cnn.py writes a small ONNX CNN"
echo "   (conv, batch norm, relu, a residual add, pooling, a dense layer)"
"$PYTHON" examples/make_small_cnn.py "$MODEL"

echo
echo "== start kilnd on free loopback ports"
"$BUILD/service/kilnd" --listen=127.0.0.1:0 --metrics-listen=127.0.0.1:0 --workers=2 \
  >"$DEMO/kilnd.out" 2>"$DEMO/kilnd.log" &
KILND_PID=$!
trap 'kill "$KILND_PID" 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
  grep -q '^kilnd: grpc=' "$DEMO/kilnd.out" 2>/dev/null && break
  sleep 0.1
done
cat "$DEMO/kilnd.out"
SERVER=$(sed -n 's/^kilnd: grpc=\([^ ]*\) .*/\1/p' "$DEMO/kilnd.out")
METRICS=$(sed -n 's/.* metrics=\([^ ]*\)$/\1/p' "$DEMO/kilnd.out")
export KILN_SERVER="$SERVER"

echo
echo "== kiln health"
"$KILN" health

echo
echo "== kiln compile: the artifacts, each with its SHA-256 (equal requests give equal bytes)"
"$KILN" compile "$MODEL" "${SHAPE[@]}" --out="$DEMO/artifacts"
echo "-- the first kernel of model.loop.py (every statement names its ONNX layers: # si=...)"
sed -n '1,14p' "$DEMO/artifacts/model.loop.py"

echo
echo "== native code: kilnd compiles the model to an object and a C header for this machine"
"$KILN" compile "$MODEL" "${SHAPE[@]}" --artifacts=object,header --out="$DEMO/native"
sed -n '/NUM_INPUTS/,/kiln_model_run/p' "$DEMO/native/kiln_model.h"
echo "-- linked into examples/run_model.c (ten lines) with cc and libkiln_rt, and run:"
cc -std=c11 -O2 -I"$DEMO/native" -Iengine/runtime examples/run_model.c "$DEMO/native/kiln_model.o" \
  "$BUILD/engine/libkiln_rt_dist.a" -lmvec -lm -lpthread -o "$DEMO/run_model"
echo "native:      $("$DEMO/run_model")"
"$PYTHON" -c "import numpy as np; np.save('$DEMO/input.npy', ((np.arange(3*16*16) % 17) / np.float32(17) - np.float32(0.5)).astype(np.float32).reshape(1, 3, 16, 16))"
"$BUILD/tools/kiln-run/kiln-run" "$MODEL" --input_shape=input=1x3x16x16 --input="$DEMO/input.npy" \
  --backend=interp --output_dir="$DEMO/interp" >/dev/null
echo "interpreter: $("$PYTHON" -c "import numpy as np; print(' '.join('%.6f' % v for v in np.load('$DEMO/interp/out.npy').ravel()))")"

echo
echo "== kiln trace: every pass as it finishes, with the IR diff of each pass that changed the model"
"$KILN" trace "$MODEL" "${SHAPE[@]}" >"$DEMO/trace.txt"
grep -E '^ *\[?[0-9]+' "$DEMO/trace.txt" | head -40 || true
echo "-- the diff FoldScaleAxis made (BatchNorm's scale folded into the conv weights):"
awk '/FoldScaleAxis/{show=1; n=0} show{print; if (++n > 24) exit}' "$DEMO/trace.txt"
echo "-- ..."
tail -3 "$DEMO/trace.txt"

echo
echo "== kiln schedule: the schedule record of the kernel computing ONNX layer /conv1/Conv, each step verified"
"$KILN" schedule "$MODEL" "${SHAPE[@]}" --selector=/conv1/Conv --verify >"$DEMO/schedule.txt"
grep -E '^(step|#|==|[0-9]+[ :])' "$DEMO/schedule.txt" | head -30 || head -30 "$DEMO/schedule.txt"

echo
echo "== the Python client: python3 -m kiln_client trace (one line per pass)"
PYTHONPATH="$BUILD/python" "$PYTHON" -m kiln_client trace "$MODEL" --input-shape input=1,3,16,16 \
  --server "$SERVER" >"$DEMO/python_trace.txt"
head -8 "$DEMO/python_trace.txt"
echo "-- ..."
tail -2 "$DEMO/python_trace.txt"

echo
echo "== Prometheus metrics at http://$METRICS/metrics (pass timings, requests, workers)"
"$PYTHON" - "$METRICS" <<'PY'
import sys, urllib.request
text = urllib.request.urlopen(f"http://{sys.argv[1]}/metrics", timeout=10).read().decode()
lines = [l for l in text.splitlines() if not l.startswith("#")]
passes = [l for l in lines if l.startswith("kiln_pass_duration_seconds_sum") and not l.endswith(" 0")]
for l in passes[:12]:
    print(l)
print(f"... {len(passes)} pass series with samples")
for l in lines:
    if (l.startswith("kiln_requests_total") and not l.endswith(" 0")) or l.startswith(
            ("kiln_workers_busy", "kiln_queue_depth", "kiln_cache_", "kiln_build_info")):
        print(l)
PY

echo
echo "== the Kiln Explorer: kiln-explorer serves the web app and its HTTP API over this kilnd"
mkdir -p "$DEMO/examples/small_cnn"
cp "$MODEL" "$DEMO/examples/small_cnn/model.onnx"
"$BUILD/clients/web/kiln-explorer" --listen="${KILN_EXPLORER_LISTEN:-127.0.0.1:0}" \
  --server="$SERVER" --examples-dir="$DEMO/examples" >"$DEMO/explorer.out" 2>"$DEMO/explorer.log" &
EXPLORER_PID=$!
trap 'kill "$KILND_PID" "$EXPLORER_PID" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  grep -q '^kiln-explorer: http=' "$DEMO/explorer.out" 2>/dev/null && break
  sleep 0.1
done
URL=$(sed -n 's/^kiln-explorer: http=\([^ ]*\) .*/\1/p' "$DEMO/explorer.out")
"$PYTHON" - "$URL" <<'PY'
import json, sys, urllib.request
url = sys.argv[1]
page = urllib.request.urlopen(url, timeout=10).read().decode()
health = json.load(urllib.request.urlopen(url + "api/health", timeout=10))
examples = json.load(urllib.request.urlopen(url + "api/examples", timeout=10))
assert "Kiln Explorer" in page and health["serving"], (page[:200], health)
print(f"Explorer at {url}: kilnd {health['kilnd']} serving; examples: "
      f"{', '.join(e['name'] for e in examples)}")
PY
if [[ -t 0 && -t 1 ]]; then
  echo "Open $URL in a browser: pick the example small_cnn/model.onnx, press Trace."
  echo "(press Ctrl-C to stop kilnd and the Explorer)"
  trap 'echo' INT
  wait "$EXPLORER_PID" || true
fi
kill -TERM "$EXPLORER_PID" 2>/dev/null || true
wait "$EXPLORER_PID" 2>/dev/null || true

echo
echo "== stop kilnd (SIGTERM: health flips, calls in flight drain, exit 0); its request log:"
kill -TERM "$KILND_PID"
wait "$KILND_PID"
echo "kilnd exited with status $?"
trap - EXIT
grep '^{' "$DEMO/kilnd.log" | head -8
