#!/usr/bin/env bash
# Installs the Debian packages roceswitch builds and tests with, only those that are missing.
# Sourced or run by tools/demo.sh and tools/test.sh; needs root (or sudo) on Debian 12.
set -euo pipefail

# libcivetweb-dev serves /metrics (app/metrics_http.cc); prometheus (the server) and curl scrape
# it in tests/integration/metrics_test.sh, which starts its own server: the service Debian
# enables on install is stopped below when this script installed the package. clang and its
# runtimes build the sanitizer tree with libFuzzer (tests/fuzz). arping and traceroute are the
# hosts' tools in tests/e2e/router_interfaces_test.sh (the switch's ARP and ICMP time exceeded).
RS_PACKAGES=(dpdk dpdk-dev libdpdk-dev rdma-core libibverbs-dev libfmt-dev nlohmann-json3-dev
  libyaml-cpp-dev libisal-dev libgtest-dev libgmock-dev libbenchmark-dev meson ninja-build pkg-config g++
  libpcap-dev tshark python3-scapy python3-yaml python3-matplotlib iproute2 iputils-ping iputils-arping traceroute ethtool
  libcivetweb-dev prometheus curl clang libclang-rt-14-dev)

missing=()
for p in "${RS_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#RS_PACKAGES[@]} Debian packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "deps: installing ${#missing[@]} Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; the answer does not matter here.
echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections 2>/dev/null || true
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
if [[ " ${missing[*]} " == *" prometheus "* ]] && command -v systemctl >/dev/null; then
  $SUDO systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
echo "deps: done"
