# shellcheck shell=bash
# Source it, do not run it: `. scripts/toolchain.sh` (used by .ci/run).
# Puts Node 24 and pnpm 10 first on PATH. When the machine's are missing or older, installs them
# from the npm registry under $FLOWBOX_TOOLS_DIR (default ~/.cache/flowbox) and links them into
# $FLOWBOX_TOOLS_DIR/bin. Installs redis-server (which `pnpm dev` and the tests start) from the OS
# packages when it is missing and this user may (root, or sudo without a password); otherwise
# prints the one command to run. Idempotent, quick once installed, and safe under
# `set -euo pipefail`.

FLOWBOX_TOOLS_DIR="${FLOWBOX_TOOLS_DIR:-${HOME:-/root}/.cache/flowbox}"
export FLOWBOX_TOOLS_DIR

_flowbox_node_major=24
_flowbox_pnpm_version=10.34.8
_flowbox_bin="$FLOWBOX_TOOLS_DIR/bin"

case ":$PATH:" in
  *":$_flowbox_bin:"*) ;;
  *) PATH="$_flowbox_bin:$PATH" ;;
esac
export PATH

# Prints the major version of the `node` on PATH, or 0 when there is none.
_flowbox_current_node_major() {
  local version
  version="$(node --version 2>/dev/null || true)"
  version="${version#v}"
  version="${version%%.*}"
  case "$version" in
    '' | *[!0-9]*) echo 0 ;;
    *) echo "$version" ;;
  esac
}

# npm (any version) is needed to install Node 24; a bare Debian machine may have none.
_flowbox_ensure_npm() {
  command -v npm >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "toolchain: npm is missing; installing Debian's nodejs and npm to bootstrap Node $_flowbox_node_major" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  fi
  command -v npm >/dev/null 2>&1 && return 0
  echo "toolchain: npm is needed to install Node $_flowbox_node_major: sudo apt-get install -y nodejs npm" >&2
  return 1
}

# redis-server from Debian's or Ubuntu's packages, saying what it runs; never fatal (a REDIS_URL
# works without one), and never prompts for a password.
_flowbox_ensure_redis() {
  command -v redis-server >/dev/null 2>&1 && return 0
  local as_root=''
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then as_root='sudo -n'; else as_root='-'; fi
  fi
  if [ "$as_root" != '-' ] && command -v apt-get >/dev/null 2>&1; then
    echo "toolchain: redis-server is missing; running: ${as_root:+$as_root }apt-get update && ${as_root:+$as_root }apt-get install -y redis-server" >&2
    # shellcheck disable=SC2086 # as_root is empty or `sudo -n`: two words on purpose
    $as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 &&
      $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null ||
      true
    hash -r
  fi
  command -v redis-server >/dev/null 2>&1 && return 0
  echo "toolchain: pnpm dev and the tests need redis-server; install it with: sudo apt-get install -y redis-server" >&2
  return 0
}

_flowbox_toolchain() {
  mkdir -p "$_flowbox_bin"
  _flowbox_ensure_redis

  if [ "$(_flowbox_current_node_major)" -lt "$_flowbox_node_major" ]; then
    echo "toolchain: node $(node --version 2>/dev/null || echo missing) is older than v$_flowbox_node_major; installing node@$_flowbox_node_major into $FLOWBOX_TOOLS_DIR/node24" >&2
    _flowbox_ensure_npm || return 1
    npm install --prefix "$FLOWBOX_TOOLS_DIR/node24" --no-audit --no-fund --loglevel=error "node@$_flowbox_node_major" >&2 || return 1
    ln -sfn "$FLOWBOX_TOOLS_DIR/node24/node_modules/.bin/node" "$_flowbox_bin/node"
    hash -r
    if [ "$(_flowbox_current_node_major)" -lt "$_flowbox_node_major" ]; then
      echo "toolchain: Node $_flowbox_node_major did not install; PATH has $(command -v node || echo 'no node')" >&2
      return 1
    fi
  fi

  if [ "$(pnpm --version 2>/dev/null || true)" != "$_flowbox_pnpm_version" ]; then
    echo "toolchain: installing pnpm@$_flowbox_pnpm_version into $FLOWBOX_TOOLS_DIR/pnpm10" >&2
    npm install --prefix "$FLOWBOX_TOOLS_DIR/pnpm10" --no-audit --no-fund --loglevel=error "pnpm@$_flowbox_pnpm_version" >&2 || return 1
    ln -sfn "$FLOWBOX_TOOLS_DIR/pnpm10/node_modules/.bin/pnpm" "$_flowbox_bin/pnpm"
    hash -r
    if [ "$(pnpm --version 2>/dev/null || true)" != "$_flowbox_pnpm_version" ]; then
      echo "toolchain: pnpm $_flowbox_pnpm_version did not install; PATH has $(command -v pnpm || echo 'no pnpm')" >&2
      return 1
    fi
  fi
}

_flowbox_toolchain_status=0
_flowbox_toolchain || _flowbox_toolchain_status=$?
unset -f _flowbox_current_node_major _flowbox_ensure_npm _flowbox_ensure_redis _flowbox_toolchain
unset _flowbox_node_major _flowbox_pnpm_version _flowbox_bin
# `return` ends a sourced script; `(exit N)` sets the status when the file is executed instead.
return "$_flowbox_toolchain_status" 2>/dev/null || (exit "$_flowbox_toolchain_status")
