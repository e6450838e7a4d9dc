#!/usr/bin/env bash
# Installs the pinned agent CLIs that `make test-clients` drives, from the npm
# registry, into a cache outside the repository, and prints that directory.
# A cache that already holds exactly these versions is reused as it is.
#
#   CCLOAD_CLIENTS_DIR   the cache (default ${XDG_CACHE_HOME:-$HOME/.cache}/ccload-clients)
set -euo pipefail

# The versions verified in docs/clients.md ("Which clients through which upstreams").
PINS=(
  "@anthropic-ai/claude-code@2.1.197"
  "@openai/codex@0.171.0"
  "@google/gemini-cli@0.61.0"
)

dir="${CCLOAD_CLIENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ccload-clients}"
mkdir -p "$dir"

# installed PKG prints the version of PKG in the cache, or nothing.
installed() {
  local f="$dir/node_modules/$1/package.json"
  [ -f "$f" ] && node -p "require(process.argv[1]).version" "$f" 2>/dev/null || true
}

missing=()
for pin in "${PINS[@]}"; do
  pkg="${pin%@*}" want="${pin##*@}"
  [ "$(installed "$pkg")" = "$want" ] || missing+=("$pin")
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing ${missing[*]} into $dir" >&2
  # All pins at once, exact versions, so npm keeps one consistent tree.
  # Install scripts stay off (node-pty and keytar would compile native
  # code the tests do not use); Claude Code's own one is run below.
  npm install --prefix "$dir" --save-exact --no-audit --no-fund --ignore-scripts \
    --loglevel=error "${PINS[@]}" >&2
fi

# Claude Code's postinstall puts the platform binary (an optional dependency
# already in node_modules; nothing is downloaded) in place of its bin stub.
if ! "$dir/node_modules/.bin/claude" --version >/dev/null 2>&1; then
  (cd "$dir" && node node_modules/@anthropic-ai/claude-code/install.cjs) >&2
fi

# Codex's binary is an optional dependency (an npm alias of a platform
# build of @openai/codex, tens of MB). npm skips an optional dependency it
# failed to fetch without failing the install, and codex then refuses to
# start ("Missing optional dependency"); fetch it on its own, a few times.
codex_version="$(installed @openai/codex)"
if [ -n "$codex_version" ] && ! "$dir/node_modules/.bin/codex" --version >/dev/null 2>&1; then
  plat="$(node -p 'process.platform + "-" + process.arch')"
  for try in 1 2 3; do
    echo "fetching codex's $plat binary (try $try)" >&2
    npm install --prefix "$dir" --no-save --no-audit --no-fund --ignore-scripts --loglevel=error \
      "@openai/codex-$plat@npm:@openai/codex@$codex_version-$plat" >&2 || true
    "$dir/node_modules/.bin/codex" --version >/dev/null 2>&1 && break
  done
fi

for pin in "${PINS[@]}"; do
  pkg="${pin%@*}" want="${pin##*@}"
  got="$(installed "$pkg")"
  if [ "$got" != "$want" ]; then
    echo "ccloadtest/clients/install.sh: $pkg is ${got:-missing} in $dir, want $want" >&2
    exit 1
  fi
done
for bin in claude codex gemini; do
  [ -x "$dir/node_modules/.bin/$bin" ] || { echo "ccloadtest/clients/install.sh: no $bin in $dir/node_modules/.bin" >&2; exit 1; }
  "$dir/node_modules/.bin/$bin" --version >/dev/null 2>&1 || { echo "ccloadtest/clients/install.sh: $bin --version fails in $dir" >&2; exit 1; }
done
echo "$dir"
