#!/usr/bin/env bash
# Builds tape in release mode and installs it: bin/tape, its manual pages (tape.1 and one per
# subcommand, generated from the argument parser) and its bash, zsh and fish completions.
#
#   scripts/install.sh [--prefix DIR] [--binary PATH]    install (default prefix /usr/local)
#   scripts/install.sh [--prefix DIR] --uninstall        remove exactly what was installed
#
# DESTDIR is honoured, for packagers: files go under $DESTDIR$PREFIX. --binary installs an
# already built tape instead of building one. What was installed (and the folders it made) is
# listed in PREFIX/share/tape/installed-files, which --uninstall reads.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=/usr/local
binary=""
uninstall=false
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="${2:?--prefix needs a folder}"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --binary) binary="${2:?--binary needs a path}"; shift 2 ;;
    --uninstall) uninstall=true; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install: unknown option $1; see scripts/install.sh --help" >&2; exit 64 ;;
  esac
done
case "$prefix" in
  /*) ;;
  *) echo "install: --prefix must be an absolute path (got $prefix)" >&2; exit 64 ;;
esac
root="${DESTDIR:-}$prefix"
manifest="$root/share/tape/installed-files"

if $uninstall; then
  if [ ! -f "$manifest" ]; then
    echo "install: nothing to uninstall: $manifest is not there" >&2
    exit 66
  fi
  # Files first (the lists last), then the folders this install made, deepest first, each
  # only if nothing else was put in it since.
  mapfile -t installed < <(grep '^file ' "$manifest" | cut -c6-)
  mapfile -t made < <(grep '^dir ' "$manifest" | cut -c5- | sort -r)
  for path in "${installed[@]}"; do rm -f "${DESTDIR:-}$path"; done
  rm -f "$manifest"
  for path in "${made[@]}"; do rmdir "${DESTDIR:-}$path" 2>/dev/null || true; done
  echo "install: removed tape from $root (${#installed[@]} files)"
  exit 0
fi

# The folders of the prefix this install makes (a packager's DESTDIR/opt/tape): removed too.
dirs=()
probe="$prefix"
while [ -n "$probe" ] && [ ! -d "${DESTDIR:-}$probe" ]; do dirs+=("$probe"); probe="${probe%/*}"; done
mkdir -p "$root" 2>/dev/null || true
if [ ! -w "$root" ]; then
  echo "install: $root cannot be written; run it as root (sudo scripts/install.sh) or choose --prefix \$HOME/.local" >&2
  exit 77
fi

if [ -z "$binary" ]; then
  echo "install: swift build -c release (the first build takes a few minutes)" >&2
  swift build -c release --product tape
  binary="$(swift build -c release --show-bin-path)/tape"
fi
[ -x "$binary" ] || { echo "install: $binary is not an executable" >&2; exit 66; }

staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
python3 scripts/manpages.py "$binary" "$staging/man1" >/dev/null
"$binary" --generate-completion-script bash >"$staging/tape.bash"
"$binary" --generate-completion-script zsh >"$staging/_tape"
"$binary" --generate-completion-script fish >"$staging/tape.fish"

files=()
# Installs $1 as $2 (a path under the prefix) with mode $3, noting the folders it makes.
place() {
  local folder="${2%/*}" missing=() probe
  probe="$folder"
  while [ ! -d "${DESTDIR:-}$probe" ]; do missing+=("$probe"); probe="${probe%/*}"; done
  dirs+=("${missing[@]}")
  install -D -m "$3" "$1" "${DESTDIR:-}$2"
  files+=("$2")
}
place "$binary" "$prefix/bin/tape" 755
for page in "$staging"/man1/*.1; do place "$page" "$prefix/share/man/man1/${page##*/}" 644; done
place "$staging/tape.bash" "$prefix/share/bash-completion/completions/tape" 644
place "$staging/_tape" "$prefix/share/zsh/site-functions/_tape" 644
place "$staging/tape.fish" "$prefix/share/fish/vendor_completions.d/tape.fish" 644

# The list of what was installed, itself in a folder this install may make.
[ -d "$root/share/tape" ] || dirs+=("$prefix/share/tape")
mkdir -p "$root/share/tape"
{
  printf 'file %s\n' "${files[@]}"
  [ ${#dirs[@]} -eq 0 ] || printf 'dir %s\n' "${dirs[@]}"
} >"$manifest"
echo "install: tape, ${#files[@]} files in all, installed under $root (scripts/install.sh --prefix $prefix --uninstall removes them)"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "install: add $prefix/bin to PATH: export PATH=\"$prefix/bin:\$PATH\"" ;;
esac
