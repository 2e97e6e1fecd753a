#!/usr/bin/env bash
# Builds sluice in release mode and installs it:
#   PREFIX/bin/sluice                      the command
#   PREFIX/share/man/man1/sluice.1         its manual page (docs/sluice.1)
#   bash, zsh and fish completion scripts  under PREFIX/share
#
#   scripts/install.sh [--prefix DIR]   default: /usr/local (or ~/.local without root)
#   scripts/install.sh --man-only       only write docs/sluice.1 anew (argument-parser's
#                                       generate-manual plugin), after a change of options
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=""
man_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --man-only) man_only=1; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument $1" >&2; exit 64 ;;
  esac
done

if [ "$man_only" = 1 ]; then
  out=$(mktemp -d)
  swift package --allow-writing-to-directory "$out" generate-manual --output-directory "$out" \
    --authors "the sluice developers" >/dev/null
  cp "$out/sluice.1" docs/sluice.1
  rm -rf "$out"
  echo "wrote docs/sluice.1"
  exit 0
fi

if [ -z "$prefix" ]; then
  if [ "$(id -u)" -eq 0 ]; then prefix=/usr/local; else prefix="$HOME/.local"; fi
fi
scripts/install-deps.sh
scripts/build.sh --product sluice
binary="$(scripts/build.sh --show-bin-path)/sluice"
install -d "$prefix/bin" "$prefix/share/man/man1" "$prefix/share/bash-completion/completions" \
  "$prefix/share/zsh/site-functions" "$prefix/share/fish/vendor_completions.d"
install -m 755 "$binary" "$prefix/bin/sluice"
install -m 644 docs/sluice.1 "$prefix/share/man/man1/sluice.1"
"$binary" --generate-completion-script bash > "$prefix/share/bash-completion/completions/sluice"
"$binary" --generate-completion-script zsh > "$prefix/share/zsh/site-functions/_sluice"
"$binary" --generate-completion-script fish > "$prefix/share/fish/vendor_completions.d/sluice.fish"
echo "installed $prefix/bin/sluice (manual: man sluice; completions for bash, zsh and fish)"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "note: $prefix/bin is not on PATH; add it, e.g. export PATH=\"$prefix/bin:\$PATH\"" ;;
esac
