#!/usr/bin/env bash
# Installs what mrct needs from Debian 12 packages, skipping what is present.
# Idempotent; runs as root (or through sudo). Used by both README commands.
set -euo pipefail

PACKAGES=(
  # toolchain
  g++ cmake ninja-build pkg-config clang libclang-rt-14-dev
  # the RTL stage (dut_adapters/rtl, docs/rtl.md)
  verilator
  # libraries (docs/architecture.md lists who uses what)
  libdpdk-dev libboost-dev libyaml-cpp-dev catch2 libspdlog-dev libfmt-dev libpcap-dev
  libcli11-dev nlohmann-json3-dev zlib1g-dev libisal-dev libxml2-dev
  # independent checkers used by the tests
  tshark python3 python3-scapy python3-jsonschema libxml2-utils chromium
  # the real-wire labs (network namespaces, veths; ethtool turns off the DUT
  # veths' checksum offload, which a bump in the wire cannot complete)
  iproute2 ethtool
  # waveforms of the RTL DUT (fst2vcd reads them in tests; gtkwave shows them)
  gtkwave
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
# tshark asks whether non-root users may capture; answer for it.
echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
