#!/usr/bin/env bash
# tools/gpu_deps.sh — qkv's libraries for a GPU machine that has a compiler and CUDA but none of
# our Debian packages and no network (the lent device machine). Two steps:
#   bash tools/gpu_deps.sh fetch            here, on Debian 12: downloads the .deb files into
#                                           .gpu-debs/ (git-ignored, about 22 MB)
#   eval "$(bash tools/gpu_deps.sh env)"    there: unpacks them under /tmp/qkv-deps and prints
#                                           the exports that make `make` and the programs use them
# Nothing is installed system-wide. Where the machine already has a runtime library (same
# soname), its own copy is used instead of the unpacked one (QKV_DEPS_PRUNE=0 keeps ours).
set -euo pipefail
cd "$(dirname "$0")/.."

DEBS=.gpu-debs
PREFIX=${QKV_DEPS_PREFIX:-/tmp/qkv-deps}
# Headers and link-time libraries (what tools/setup.sh installs, minus the compiler), their
# runtime libraries, and the runtime libraries those need that a CUDA image may lack.
PACKAGES=(
  libopenblas-pthread-dev libopenblas0-pthread libgfortran5 libquadmath0
  libfmt-dev libfmt9 libstb-dev libstb0 doctest-dev libcli11-dev nlohmann-json3-dev
  libharfbuzz-dev libharfbuzz0b libfreetype6 libglib2.0-0 libgraphite2-3 libbrotli1 libpng16-16
  libpcre2-8-0 libffi8 libmount1 libselinux1 libblkid1
  fonts-lohit-deva make
)

die() { echo "gpu_deps.sh $*" >&2; exit 1; }

fetch() {
  command -v apt-get >/dev/null || die "fetch: needs apt-get (run it on Debian 12)"
  rm -rf "$DEBS.tmp" && mkdir -p "$DEBS.tmp"
  (cd "$DEBS.tmp" && apt-get download "${PACKAGES[@]}" >/dev/null 2>&1) ||
    { rm -rf "$DEBS.tmp"; die "fetch: apt-get download failed (try: apt-get update)"; }
  rm -rf "$DEBS" && mv "$DEBS.tmp" "$DEBS"
  echo "fetched $(ls "$DEBS" | wc -l) packages ($(du -sh "$DEBS" | cut -f1)) into $DEBS/" >&2
}

unpack_env() {
  ls "$DEBS"/*.deb >/dev/null 2>&1 || die "env: no $DEBS/*.deb (run 'bash tools/gpu_deps.sh fetch' first)"
  command -v dpkg >/dev/null || die "env: needs dpkg to unpack $DEBS"
  rm -rf "$PREFIX" && mkdir -p "$PREFIX"
  for deb in "$DEBS"/*.deb; do dpkg -x "$deb" "$PREFIX"; done
  local lib="$PREFIX/usr/lib/x86_64-linux-gnu"
  if [ "${QKV_DEPS_PRUNE:-1}" = 1 ] && command -v ldconfig >/dev/null; then
    # Keep the machine's own (newer) copy of any runtime library it already has: drop our
    # soname link, so the loader falls through to the system one. Link-time files stay.
    local have so name kept=()
    have=$(ldconfig -p | awk '{print $1}' | sort -u)
    for so in "$lib"/*.so.* "$lib"/openblas-pthread/*.so.*; do
      [ -L "$so" ] || continue
      name=$(basename "$so")
      if grep -qxF "$name" <<<"$have"; then rm -f "$so"; kept+=("$name"); fi
    done
    [ ${#kept[@]} -eq 0 ] || echo "gpu_deps.sh: using the machine's own ${kept[*]}" >&2
  fi
  # -isystem: warnings inside third-party headers are not ours
  local inc="$PREFIX/usr/include"
  echo "export DEPS_CFLAGS='-isystem $inc -isystem $inc/x86_64-linux-gnu/openblas-pthread -isystem $inc/stb -isystem $inc/harfbuzz'"
  echo "export DEPS_LIBS='-L$lib -L$lib/openblas-pthread -Wl,-rpath-link,$lib -Wl,-rpath-link,$lib/openblas-pthread -lopenblas -lfmt -lstb -lharfbuzz'"
  echo "export LD_LIBRARY_PATH='$lib:$lib/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}'"
  echo "export QKV_FONT='$PREFIX/usr/share/fonts/truetype/lohit-devanagari/Lohit-Devanagari.ttf'"
  command -v make >/dev/null || echo "export PATH='$PREFIX/usr/bin:$PATH'"
}

case "${1:-}" in
  fetch) fetch ;;
  env) unpack_env ;;
  *) echo "usage: bash tools/gpu_deps.sh fetch | env" >&2; exit 2 ;;
esac
