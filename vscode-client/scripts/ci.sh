#!/usr/bin/env bash
# The extension's CI from a fresh clone: tools (apt packages only when a command is missing; Node 24
# and code-server under ${CODEBURN_TOOLS_DIR:-/var/cache/codeburn-tools}, reused when present; none
# with CODEBURN_SKIP_EDITOR_TEST=1 on Node >= 20),
# npm ci, type check + unit tests, the .vsix, and the real-editor test in code-server.
# Env: CODEBURN_PYTHON (Python >= 3.11 for bundling and the fixture; default python3),
#      CODEBURN_TOOLS_DIR, CODEBURN_SKIP_EDITOR_TEST=1 (unit tests and packaging only).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { echo "== vscode-client ci: $*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v npm >/dev/null 2>&1; then
  step "apt-get install npm"
  as_root apt-get update -q >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q npm >&2
fi
PYTHON="${CODEBURN_PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "vscode-client ci: $PYTHON is not Python 3.11 or newer (set CODEBURN_PYTHON)" >&2
  exit 1
fi
export CODEBURN_PYTHON="$PYTHON"

node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if [ "${CODEBURN_SKIP_EDITOR_TEST:-0}" = 1 ] && [ "$node_major" -ge 20 ]; then
  step "tools: none needed (node $(node --version) packages the .vsix)"
else
  step "tools"
  if [ "${CODEBURN_SKIP_EDITOR_TEST:-0}" = 1 ]; then
    tools="$(scripts/install-tools.sh --node-only)"
  else
    tools="$(scripts/install-tools.sh)"
  fi
  node24="$(printf '%s\n' "$tools" | sed -n 's/^NODE24=//p')"
  # Node 24 first on PATH: code-server needs it (packaging alone runs on Node >= 20).
  export PATH="$(dirname "$node24"):$PATH"
fi

step "npm ci (node $(node --version))"
npm ci --no-audit --no-fund --loglevel=error

step "npm test"
npm test

step "npm run package"
npm run package

if [ "${CODEBURN_SKIP_EDITOR_TEST:-0}" = 1 ]; then
  step "real-editor test skipped (CODEBURN_SKIP_EDITOR_TEST=1)"
  exit 0
fi
step "npm run test:editor"
npm run test:editor
