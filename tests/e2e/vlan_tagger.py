# A user-space 802.1Q tagger for the e2e tests (bridge_test.sh, svi_test.sh): a host's VLAN
# interfaces on a trunk, on kernels without 802.1Q (CONFIG_VLAN_8021Q). Each VLAN interface is
# one end of a veth pair inside the host's namespace (the host's MAC and addresses on it); the
# other end is given here with its VLAN id. Frames the host sends on a VLAN interface go out on
# the trunk tagged with its id; frames from the trunk tagged with an id given here go to that
# VLAN's interface untagged; anything else from the trunk (untagged, another VLAN) is dropped.
# Standard library only (packet sockets); prints "ready" once its sockets are bound.
#
# Usage: python3 -u vlan_tagger.py TRUNK VID=IFACE... (e.g. hc123 10=k10123 20=k20123)
import select, socket, struct, sys
trunk, ports = sys.argv[1], {int(v): i for v, i in (a.split('=') for a in sys.argv[2:])}
def sock(ifc):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))  # ETH_P_ALL
    s.setsockopt(263, 8, 1)  # SOL_PACKET, PACKET_AUXDATA: the tag the kernel took off
    s.bind((ifc, 0))
    return s
t, by_vid = sock(trunk), {v: sock(i) for v, i in ports.items()}
vid_of = {s: v for v, s in by_vid.items()}
print('ready', flush=True)
while True:
    for s in select.select([t, *by_vid.values()], [], [])[0]:
        data, anc, _, addr = s.recvmsg(65536, socket.CMSG_SPACE(32))
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        if s is not t:  # from a VLAN interface: tag it
            t.send(data[:12] + struct.pack('!HH', 0x8100, vid_of[s]) + data[12:])
            continue
        vid = None
        for lvl, typ, c in anc:
            if (lvl, typ) == (263, 8) and len(c) >= 20 and struct.unpack_from('=I', c)[0] & 0x10:
                vid = struct.unpack_from('=H', c, 16)[0] & 0xfff
        if vid is None and data[12:14] == b'\x81\x00':
            vid, data = struct.unpack_from('!H', data, 14)[0] & 0xfff, data[:12] + data[16:]
        if vid in by_vid:
            by_vid[vid].send(data)
