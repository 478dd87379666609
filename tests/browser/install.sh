#!/usr/bin/env bash
# Installs playwright-core (pinned in package.json) into DIR (default build/browser-tools), once.
# It drives Debian's Chromium (/usr/bin/chromium, from scripts/bootstrap.sh); nothing runs at
# install (--ignore-scripts) and no browser is downloaded.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DIR="${1:-$HERE/../../build/browser-tools}"
command -v npm >/dev/null || { echo "install.sh: npm is needed (Node.js 20 and npm come with this machine kind)" >&2; exit 1; }
[[ -x /usr/bin/chromium ]] || { echo "install.sh: /usr/bin/chromium is missing (scripts/bootstrap.sh installs it)" >&2; exit 1; }
mkdir -p "$DIR"
if ! cmp -s "$HERE/package.json" "$DIR/package.json" || [[ ! -d "$DIR/node_modules/playwright-core" ]]; then
  cp "$HERE/package.json" "$DIR/package.json"
  (cd "$DIR" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
echo "browser tools in $DIR"
