#!/bin/sh
# Independent check of the PFC encoder: Wireshark's MAC control dissector must read the frames
# pfc_frame_pcap writes as PFC (opcode 0x0101) with the class-enable vectors and quanta we meant.
# Usage: pfc_frame_tshark.sh PATH/TO/pfc_frame_pcap. Exit 77 (meson: skipped) without tshark.
set -eu
helper=$1
command -v tshark >/dev/null 2>&1 || { echo "tshark not installed: skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$helper" "$dir/pfc.pcap"
# tshark wants a writable home for its profile; keep it out of the user's.
HOME=$dir tshark -n -r "$dir/pfc.pcap" -T fields -E separator=' ' \
  -e eth.dst -e eth.type -e macc.opcode -e macc.cbfc.enbv \
  -e macc.cbfc.pause_time.c0 -e macc.cbfc.pause_time.c1 -e macc.cbfc.pause_time.c2 -e macc.cbfc.pause_time.c3 \
  -e macc.cbfc.pause_time.c4 -e macc.cbfc.pause_time.c5 -e macc.cbfc.pause_time.c6 -e macc.cbfc.pause_time.c7 \
  >"$dir/got.txt" 2>"$dir/err.txt" || { cat "$dir/err.txt"; exit 1; }
cat >"$dir/want.txt" <<'WANT'
01:80:c2:00:00:01 0x8808 0x0101 0x0018 0 0 0 65535 4660 0 0 0
01:80:c2:00:00:01 0x8808 0x0101 0x0081 1 0 0 0 0 0 0 65535
01:80:c2:00:00:01 0x8808 0x0101 0x0008 0 0 0 0 0 0 0 0
01:80:c2:00:00:01 0x8808 0x0101 0x00ff 1 2 3 4 5 6 7 8
WANT
if ! diff -u "$dir/want.txt" "$dir/got.txt"; then
  echo "FAIL: tshark decodes the encoded PFC frames differently (diff above: - wanted, + tshark)"
  exit 1
fi
echo "OK: tshark decodes $(wc -l <"$dir/got.txt") PFC frames as expected"
