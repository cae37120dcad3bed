#!/usr/bin/env bash
# Installs the Debian 12 packages qkv needs, only those that are missing. Run as root.
# Set QKV_WITH_TORCH=1 to also install python3-torch (only needed to regenerate fixtures), and
# QKV_WITH_BROWSER=1 to install Chromium (headless) for the explorer page's browser test.
set -euo pipefail

packages=(build-essential pkg-config python3 libopenblas-dev doctest-dev libstb-dev libcli11-dev
          nlohmann-json3-dev libfmt-dev libharfbuzz-dev fonts-lohit-deva
          clang libclang-rt-14-dev  # clang and its libFuzzer/sanitizer runtimes: `make fuzz`
          clang-format  # `make format-check` in `make test`: the layout of .clang-format
          libopenmpi-dev openmpi-bin  # data-parallel training (mpirun ... qkv train --data-parallel)
          strace)  # tests/cli/kills.sh: a run killed at each file operation (fault injection)
if [ "${QKV_WITH_TORCH:-0}" = 1 ]; then packages+=(python3-torch python3-numpy); fi
if [ "${QKV_WITH_BROWSER:-0}" = 1 ]; then packages+=(chromium); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "setup: missing packages: ${missing[*]} (run this script as root to install them)" >&2
  exit 1
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
