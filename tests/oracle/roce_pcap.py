#!/usr/bin/python3
"""roce_pcap: the test oracle. Generates and checks RoCEv2 pcaps, independently of roceswitch's
C++ code.

Subcommands
  gen valid      well-formed RoCEv2 (IPv4/IPv6) and plain UDP packets
  gen malformed  one malformed frame per case, plus FILE.cases.json
  check          compare a switch's output pcap against its input pcap
  icrc           verify the RoCE ICRC of every packet of a pcap
  mutate         a tiny reference "switch" (TTL decrement, MAC rewrite, ECN CE,
                 corruption) used to self-test `check`
  count, empty, split, merge, ecmp
                 pcap helpers for the integration scripts

Frames are built, and pcaps read and written, with scapy. Decoding is done twice,
independently: by the oracle's own byte-level parser and checks (wire.py, checks.py: IPv4
checksum, ICRC, TTL, MACs) and by scapy (scapy.contrib.roce; its BTH.compute_icrc is the second
opinion on the ICRC for IPv4, scapy has none for IPv6). `check --tshark` adds Wireshark's
decoders as a third opinion.

Run with Debian's /usr/bin/python3 (it has scapy).
"""

import argparse
import logging
import os
import sys

sys.dont_write_bytecode = True     # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
logging.getLogger('scapy.runtime').setLevel(logging.ERROR)

import gen_malformed  # noqa: E402
import gen_valid  # noqa: E402
import mutate  # noqa: E402
import pcap_tools  # noqa: E402
import verify  # noqa: E402


def parser():
    ap = argparse.ArgumentParser(prog='roce_pcap.py', description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    g = sub.add_parser('gen', help='generate a pcap', description='Generate a pcap.')
    gs = g.add_subparsers(dest='kind', required=True)
    gen_valid.add_command(gs)
    gen_malformed.add_command(gs)
    verify.add_commands(sub)
    mutate.add_command(sub)
    pcap_tools.add_commands(sub)
    return ap


def main(argv=None):
    a = parser().parse_args(argv)
    return a.func(a)


if __name__ == '__main__':
    sys.exit(main())
