/* roceswitch.p4: the readable specification of roceswitch's pipeline (P4_16, v1model/BMv2).
 * The C++ stages implement what is written here; p4/MAPPING.md says which file does what.
 * Table and action names are the control plane's names: keep them in step with the C++. */
#include <core.p4>
#include <v1model.p4>

const bit<16> ETHERTYPE_IPV4        = 0x0800;
const bit<16> ETHERTYPE_VLAN        = 0x8100;
const bit<16> ETHERTYPE_QINQ        = 0x88a8;
const bit<16> ETHERTYPE_IPV6        = 0x86dd;
const bit<16> ETHERTYPE_MAC_CONTROL = 0x8808;
const bit<8>  IP_PROTO_UDP          = 17;
const bit<16> ROCEV2_UDP_PORT       = 4791;
const bit<16> MAC_CONTROL_PAUSE     = 0x0001;  // 802.3x: one timer for the whole link
const bit<16> MAC_CONTROL_PFC       = 0x0101;  // 802.1Qbb: one timer per priority
const bit<32> MIN_FRAME_BYTES       = 60;      // without FCS; shorter control frames are lies
const bit<32> PKT_INSTANCE_TYPE_NORMAL = 0;    // BMv2's instance_type of a packet that is no copy

/* Drop reasons. One name per cause so that "in = out + sum(drops)" can be checked; the
 * names match the C++ DropReason (dataplane/core/drop_reason.h), the numbers need not. */
const bit<8> DROP_NONE                  = 0;
const bit<8> DROP_MALFORMED             = 1;   // any parser_error; the target names it (MAPPING.md)
const bit<8> DROP_BAD_IPV4_CHECKSUM     = 2;
const bit<8> DROP_NON_IP                = 3;
const bit<8> DROP_MAC_CONTROL           = 4;   // consumed, not lost: PAUSE/PFC end here
const bit<8> DROP_MALFORMED_MAC_CONTROL = 5;
const bit<8> DROP_NO_ROUTE              = 6;
const bit<8> DROP_BAD_NEXT_HOP          = 7;
const bit<8> DROP_TTL_EXPIRED           = 8;
// Set by the traffic manager, which P4 cannot express (see "target configuration"):
// tail_drop, wred_drop, pfc_watchdog.

error { StackedVlan, MalformedIpv4, BadIpv4Ihl, MalformedIpv6 }

header ethernet_t { bit<48> dst_addr; bit<48> src_addr; bit<16> ether_type; }
header vlan_t     { bit<3> pcp; bit<1> dei; bit<12> vid; bit<16> ether_type; }

header ipv4_t {
    bit<4>  version;   bit<4>  ihl;      bit<6>  dscp;   bit<2>  ecn;
    bit<16> total_len; bit<16> identification;
    bit<3>  flags;     bit<13> frag_offset;
    bit<8>  ttl;       bit<8>  protocol; bit<16> hdr_checksum;
    bit<32> src_addr;  bit<32> dst_addr;
}
// Options are carried through untouched but must be in the checksum, hence a varbit.
header ipv4_options_t { varbit<320> options; }

header ipv6_t {
    bit<4>   version;     bit<6> dscp;   bit<2> ecn;   bit<20> flow_label;
    bit<16>  payload_len; bit<8> next_hdr; bit<8> hop_limit;
    bit<128> src_addr;    bit<128> dst_addr;
}

header udp_t { bit<16> src_port; bit<16> dst_port; bit<16> length; bit<16> checksum; }

// InfiniBand Base Transport Header (12 bytes). Parsed so traces and counters can see the
// RDMA opcode, QP and PSN; no table keys on it (NICs mark CNPs, opcode 0x81, with DSCP 48,
// so CNPs reach their strict queue through dscp_to_tc like any other packet).
header ib_bth_t {
    bit<8>  opcode;
    bit<1>  se; bit<1> m; bit<2> padcnt; bit<4> tver;
    bit<16> pkey;
    bit<1>  fecn; bit<1> becn; bit<6> resv6;
    bit<24> dest_qp;
    bit<1>  ackreq; bit<7> resv7;
    bit<24> psn;
}

// 802.1Qbb PFC: bit i of the vector's low octet enables priority i's time. 802.3x PAUSE
// (opcode 0x0001) has a single time, which lands in the class_enable_vector field.
header mac_control_t {
    bit<16> opcode;  bit<16> class_enable_vector;
    bit<16> pause_time_0; bit<16> pause_time_1; bit<16> pause_time_2; bit<16> pause_time_3;
    bit<16> pause_time_4; bit<16> pause_time_5; bit<16> pause_time_6; bit<16> pause_time_7;
}

struct headers_t {
    ethernet_t     ethernet;
    vlan_t         vlan;
    mac_control_t  mac_control;
    ipv4_t         ipv4;
    ipv4_options_t ipv4_options;
    ipv6_t         ipv6;
    udp_t          udp;
    ib_bth_t       bth;
}

struct metadata_t {
    bit<3>  tc;            // traffic class; also the ingress priority group (PFC accounting)
    bit<3>  queue_id;      // egress queue 0..7; 7 is served first
    bit<6>  dscp;
    bit<2>  ecn;
    bit<32> flow_hash;     // the selector's input: computed before the route lookup
    bit<48> nexthop_dmac;
    bit<1>  nexthop_valid; // set by set_nexthop alone: a hit that ran no action leaves it 0
    bit<8>  drop_reason;
}

parser RoceParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_VLAN:        parse_vlan;
            ETHERTYPE_QINQ:        stacked_vlan;   // an S-tag means a second tag follows
            ETHERTYPE_IPV4:        parse_ipv4;
            ETHERTYPE_IPV6:        parse_ipv6;
            ETHERTYPE_MAC_CONTROL: parse_mac_control;
            default:               accept;         // non-IP: ingress drops it, counted
        }
    }
    // One 802.1Q tag only: fabric ports are routed, the tag exists to carry PCP.
    state parse_vlan {
        pkt.extract(hdr.vlan);
        transition select(hdr.vlan.ether_type) {
            ETHERTYPE_VLAN:        stacked_vlan;
            ETHERTYPE_QINQ:        stacked_vlan;
            ETHERTYPE_IPV4:        parse_ipv4;
            ETHERTYPE_IPV6:        parse_ipv6;
            ETHERTYPE_MAC_CONTROL: parse_mac_control;
            default:               accept;
        }
    }
    state stacked_vlan { verify(false, error.StackedVlan); transition accept; }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        verify(hdr.ipv4.version == 4, error.MalformedIpv4);
        verify(hdr.ipv4.ihl >= 5, error.BadIpv4Ihl);
        pkt.extract(hdr.ipv4_options, ((bit<32>)hdr.ipv4.ihl - 5) * 32);
        meta.dscp = hdr.ipv4.dscp;
        meta.ecn  = hdr.ipv4.ecn;
        // Only the first fragment has a UDP header; later ones route on addresses alone.
        transition select(hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (0, IP_PROTO_UDP): parse_udp;
            default:           accept;
        }
    }
    // Extension headers are not walked: RoCE never sends them, and such packets still route.
    state parse_ipv6 {
        pkt.extract(hdr.ipv6);
        verify(hdr.ipv6.version == 6, error.MalformedIpv6);
        meta.dscp = hdr.ipv6.dscp;
        meta.ecn  = hdr.ipv6.ecn;
        transition select(hdr.ipv6.next_hdr) {
            IP_PROTO_UDP: parse_udp;
            default:      accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {
            ROCEV2_UDP_PORT: parse_bth;
            default:         accept;
        }
    }
    state parse_bth         { pkt.extract(hdr.bth); transition accept; }
    state parse_mac_control { pkt.extract(hdr.mac_control); transition accept; }
}

#define IPV4_HEADER_FIELDS                                                                 \
    { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn, hdr.ipv4.total_len,       \
      hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,          \
      hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4_options.options }

control RoceVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            IPV4_HEADER_FIELDS,
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control RoceIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    // PFC reception: the quanta last received per (port, priority). The traffic manager turns
    // them into pause timers (quanta x 512 bit times / port speed) that make the queue of the
    // same priority on the same port ineligible; an enabled class with 0 quanta is XON.
    register<bit<16>>(512 * 8) pfc_rx_quanta;
    // What each port received, every frame (BMv2's counter_read port_rx_counter <port>): the
    // switch keeps it per worker and sums on read.
    counter(512, CounterType.packets_and_bytes) port_rx_counter;

    action drop_with(bit<8> reason) {
        meta.drop_reason = reason;
        mark_to_drop(standard_metadata);
    }
    action rx_pause(bit<3> prio, bit<16> quanta) {
        pfc_rx_quanta.write((bit<32>)standard_metadata.ingress_port * 8 + (bit<32>)prio, quanta);
    }

    // ---- classify (l3_input): DSCP -> TC, optionally PCP -> TC, then TC -> queue.
    action set_tc(bit<3> tc) { meta.tc = tc; }
    action set_queue(bit<3> qid) { meta.queue_id = qid; }

    // SONiC default DSCP_TO_TC_MAP (installed by the control plane, not const, so it can be
    // changed): 3->3, 4->4 (the lossless RDMA classes), 46->5, 48->6 (CNPs), 8->0, 5->2.
    table dscp_to_tc {
        key = { meta.dscp: exact; }
        actions = { set_tc; }
        default_action = set_tc(1);        // every other DSCP is best effort TC1
        size = 64;
    }
    // Empty = trust DSCP (the L3 fabric default). Entries switch tagged frames to PCP trust.
    table pcp_to_tc {
        key = { hdr.vlan.pcp: exact; }
        actions = { set_tc; NoAction; }
        default_action = NoAction();
        size = 8;
    }
    // queue_id is preset to tc, so a miss is the identity map (SONiC's default TC_TO_QUEUE_MAP).
    table tc_to_queue {
        key = { meta.tc: exact; }
        actions = { set_queue; NoAction; }
        default_action = NoAction();
        size = 8;
    }

    // ---- port mirroring (SPAN): a port's ingress mirror copies every frame the port receives,
    // dropped or not, so it is applied before any check. The session (destination port,
    // truncation) is target configuration (below): the table only says which ports are watched.
    action mirror_in(bit<32> session) { clone(CloneType.I2E, session); }
    table mirror_ingress {
        key = { standard_metadata.ingress_port: exact; }
        actions = { mirror_in; NoAction; }
        default_action = NoAction();
        size = 512;
    }

    // ---- ipv4_lpm / ipv6_lpm: the route names a next-hop group (a group of nexthop_selector),
    // never a port, so that a dead link is repaired in the group once instead of in every
    // route; a route may also name one member (a single next hop) or drop (a blackhole).
    //
    // A selector group is a C++ NextHopGroup and a member is one next hop, set_nexthop(port,
    // dmac); weights are the same next hop entered as several members. Which member a packet
    // takes is the selection algorithm, and the target substitutes its own for the selector's:
    // each group's routing policy (target configuration, below). Under `ecmp` that is the flow
    // hash into a power-of-two redirection table, where a dead member is replaced in its own
    // slots so only its flows move; other policies read the load view instead. The UDP
    // destination port is always 4791, so RoCE's entropy is the UDP *source* port, which the
    // NIC derives from the QP: under a hashing policy, one QP, one path.
    action_selector(HashAlgorithm.identity, 32w16384, 32w32) nexthop_selector;

    action set_nexthop(bit<9> port, bit<48> dmac) {
        standard_metadata.egress_spec = port;
        meta.nexthop_dmac = dmac;
        meta.nexthop_valid = 1;
    }
    action drop() { drop_with(DROP_NO_ROUTE); }   // miss, or a blackhole route
    action bad_next_hop() { drop_with(DROP_BAD_NEXT_HOP); }

    // The selector reads meta.flow_hash as it is (identity): the hash below is the whole input.
    // A target may ignore default_action on a table with an implementation (p4c-bm2-ss warns
    // and BMv2 runs no action on a miss), so apply also turns a miss into drop() itself.
    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr: lpm; meta.flow_hash: selector; }
        actions = { set_nexthop; drop; }
        default_action = drop();
        implementation = nexthop_selector;
        size = 65536;
    }
    table ipv6_lpm {
        key = { hdr.ipv6.dst_addr: lpm; meta.flow_hash: selector; }
        actions = { set_nexthop; drop; }
        default_action = drop();
        implementation = nexthop_selector;
        size = 16384;
    }

    apply {
        meta.drop_reason = DROP_NONE;
        meta.nexthop_valid = 0;
        port_rx_counter.count((bit<32>)standard_metadata.ingress_port);
        mirror_ingress.apply();
        // BMv2 does not drop on a parser error; it hands the error to ingress. So do we.
        if (standard_metadata.parser_error != error.NoError) { drop_with(DROP_MALFORMED); return; }
        if (standard_metadata.checksum_error == 1) { drop_with(DROP_BAD_IPV4_CHECKSUM); return; }

        // ---- mac_control: link-local, consumed here whatever it says, never forwarded.
        if (hdr.mac_control.isValid()) {
            bit<16> op = hdr.mac_control.opcode;
            if (standard_metadata.packet_length < MIN_FRAME_BYTES ||
                (op != MAC_CONTROL_PAUSE && op != MAC_CONTROL_PFC)) {
                drop_with(DROP_MALFORMED_MAC_CONTROL);
                return;
            }
            if (op == MAC_CONTROL_PAUSE) {
                // 802.3x has no vector: its one time sits where PFC's vector is, and it
                // stops the whole link, i.e. every priority.
                bit<16> t = hdr.mac_control.class_enable_vector;
                rx_pause(0, t); rx_pause(1, t); rx_pause(2, t); rx_pause(3, t);
                rx_pause(4, t); rx_pause(5, t); rx_pause(6, t); rx_pause(7, t);
            } else {
                // PFC: the high octet of the vector is reserved; a class whose bit is clear
                // keeps its current timer.
                bit<8> cev = hdr.mac_control.class_enable_vector[7:0];
                if (cev[0:0] == 1) { rx_pause(0, hdr.mac_control.pause_time_0); }
                if (cev[1:1] == 1) { rx_pause(1, hdr.mac_control.pause_time_1); }
                if (cev[2:2] == 1) { rx_pause(2, hdr.mac_control.pause_time_2); }
                if (cev[3:3] == 1) { rx_pause(3, hdr.mac_control.pause_time_3); }
                if (cev[4:4] == 1) { rx_pause(4, hdr.mac_control.pause_time_4); }
                if (cev[5:5] == 1) { rx_pause(5, hdr.mac_control.pause_time_5); }
                if (cev[6:6] == 1) { rx_pause(6, hdr.mac_control.pause_time_6); }
                if (cev[7:7] == 1) { rx_pause(7, hdr.mac_control.pause_time_7); }
            }
            drop_with(DROP_MAC_CONTROL);
            return;
        }
        if (!hdr.ipv4.isValid() && !hdr.ipv6.isValid()) { drop_with(DROP_NON_IP); return; }

        // ---- classify (l3_input)
        dscp_to_tc.apply();
        if (hdr.vlan.isValid()) { pcp_to_tc.apply(); }
        meta.queue_id = meta.tc;
        tc_to_queue.apply();
        // BMv2 (simple_switch --priority-queues 8) serves the highest priority first,
        // as roceswitch's strict-priority queues do: queue 7 first.
        standard_metadata.priority = meta.queue_id;

        // ---- flow hash over the 5-tuple, before the lookup: it is the selector's input. Only the
        // inputs are specified: the function is the target's (BMv2 crc32 here; roceswitch's
        // parse step (l3_input) uses a seeded CRC32-C).
        bit<16> sport = 0;
        bit<16> dport = 0;
        if (hdr.udp.isValid()) { sport = hdr.udp.src_port; dport = hdr.udp.dst_port; }
        if (hdr.ipv4.isValid()) {
            hash(meta.flow_hash, HashAlgorithm.crc32, 32w0,
                 { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol, sport, dport },
                 33w0x100000000);
        } else {
            hash(meta.flow_hash, HashAlgorithm.crc32, 32w0,
                 { hdr.ipv6.src_addr, hdr.ipv6.dst_addr, hdr.ipv6.next_hdr, sport, dport },
                 33w0x100000000);
        }

        // ---- ipv4_lpm / ipv6_lpm, and the member choice (ipv4_route / ipv6_route inline,
        // else nexthop_select)
        if (hdr.ipv4.isValid()) {
            if (!ipv4_lpm.apply().hit) { drop(); return; }
        } else {
            if (!ipv6_lpm.apply().hit) { drop(); return; }
        }
        if (meta.drop_reason != DROP_NONE) { return; }   // a blackhole route
        // A route to a group with no member left: BMv2 runs no action for it. roceswitch drops
        // here too when every member's link is down, or when a member (from the table or from a
        // policy's answer) names a next hop or port out of range.
        if (meta.nexthop_valid == 0) { bad_next_hop(); return; }
    }
}

/* ---- target configuration: what P4 cannot express ------------------------------------------
 * The member choice of nexthop_selector's groups, the state it reads, and the traffic manager.
 *   Routing policy  per next-hop group (optionally per traffic class): the selection algorithm
 *                   the target substitutes for the selector's. ecmp hashes the flow into the
 *                   group's redirection table; the others are named after SAI ARS's modes:
 *                   flowlet_random (SAI_ARS_MODE_FLOWLET_RANDOM), flowlet_quality
 *                   (FLOWLET_QUALITY), per_packet_quality (PER_PACKET_QUALITY) and spray
 *                   (PER_PACKET_RANDOM), besides drill and least_queue. Each chooses among the
 *                   members whose link is up; none up is bad_next_hop.
 *   Load view       what adaptive policies read of every egress port, without locks: bytes
 *                   queued per queue (ARS's future load), an EWMA of the sent rate (past load)
 *                   and a quality band quantised from both, as ARS profiles quantise it.
 *   Link state      a port's link (carrier, scheduled link events) and its admin state
 *                   (`admin: down` keeps it down): a member on a port that is down is skipped
 *                   (under ecmp only that member's flows move), without touching a table.
 *   Mirror sessions where a session of mirror_in / mirror_out sends its copies: the destination
 *                   port and the length a copy is truncated to (BMv2: mirroring_add <session>
 *                   <port>, which has no truncation).
 * Between ingress and egress every port has 8 queues (queue = meta.queue_id) fed from one
 * shared buffer. roceswitch implements these in C++ and configures them with SONiC's keys:
 *   BUFFER_POOL     size, mode (dynamic): the shared buffer, in bytes.
 *   BUFFER_PROFILE  size, dynamic_th (queue limit = 2^dynamic_th x free buffer), xon, xoff
 *                   (lossless headroom: xoff ~ MTU + 2 x cable x rate / c + peer response).
 *   BUFFER_PG / PORT_QOS_MAP pfc_enable "3,4": per (ingress port, tc) byte counters; crossing
 *                   xoff sends PFC XOFF for that priority out of the ingress port, refreshed
 *                   before it expires; falling under xon sends time 0 (XON).
 *   PFC reception:  pfc_rx_quanta above -> pause timer per (egress port, priority); a paused
 *                   queue is skipped by the scheduler until the timer runs out or XON arrives.
 *   WRED_PROFILE    green_min_threshold, green_max_threshold, green_drop_probability, ecn
 *                   (ecn_all / ecn_none): at enqueue, ECT packets are marked CE with probability
 *                   rising linearly from 0 at min to the drop probability at max, 1 above
 *                   (DCQCN); non-ECT packets are dropped by the same law (wred_drop) or
 *                   tail-dropped (tail_drop). Marking rewrites ipv4.ecn / ipv6.ecn and patches
 *                   the IPv4 checksum incrementally.
 *   SCHEDULER       type STRICT | DWRR, weight: strict queues first (highest first), DWRR
 *                   (ETS) among the rest; SONiC weights 15 lossless, 14 lossy.
 *   PORT speed      the egress shaper sends at link rate, charging preamble, IFG and FCS, so
 *                   queues really build on fast virtual ports.
 *   PFC_WD          detection_time, restoration_time (200 ms each), action drop | forward |
 *                   alert: a lossless queue paused while holding packets for detection_time is
 *                   in a storm; drop flushes it and drops new packets (pfc_watchdog), forward
 *                   ignores received PAUSE; it restores after restoration_time without PAUSE.
 * BMv2 has none of the traffic manager beyond strict priority queues and set_queue_rate /
 * set_queue_depth, and of the member choice only its own selector (hash modulo group size).
 * ----------------------------------------------------------------------------------------- */

control RoceEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    // What each port sent (counter_read port_tx_counter <port>), mirror copies included.
    counter(512, CounterType.packets_and_bytes) port_tx_counter;

    action rewrite_smac(bit<48> smac) { hdr.ethernet.src_addr = smac; }
    table port_mac {
        key = { standard_metadata.egress_port: exact; }
        actions = { rewrite_smac; NoAction; }
        default_action = NoAction();
        size = 512;
    }

    // rewrite_enqueue. RoCE's ICRC covers the IP header onwards but masks TTL / hop limit,
    // the IPv4 checksum and the ECN (and DSCP) bits; the MACs are outside it. Those are the
    // only fields this switch ever writes, so the ICRC stays valid and the switch never has
    // to recompute it. The UDP checksum does not cover TTL or ECN either.
    action ttl_expired() {                         // no ICMP time-exceeded is generated
        meta.drop_reason = DROP_TTL_EXPIRED;
        mark_to_drop(standard_metadata);
    }

    // ---- port mirroring (SPAN), egress side: what the port sends, so after the rewrite and
    // only for packets that leave (a TTL drop returns first). Sessions as in mirror_ingress.
    action mirror_out(bit<32> session) { clone(CloneType.E2E, session); }
    table mirror_egress {
        key = { standard_metadata.egress_port: exact; }
        actions = { mirror_out; NoAction; }
        default_action = NoAction();
        size = 512;
    }

    apply {
        port_tx_counter.count((bit<32>)standard_metadata.egress_port);
        // A mirror copy (either clone type) leaves as it is: it was not routed, may not be IP,
        // and mirroring it again would loop.
        if (standard_metadata.instance_type != PKT_INSTANCE_TYPE_NORMAL) { return; }
        if (hdr.ipv4.isValid()) {
            if (hdr.ipv4.ttl <= 1) { ttl_expired(); return; }
            hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        } else {                                   // only routed IP reaches egress
            if (hdr.ipv6.hop_limit <= 1) { ttl_expired(); return; }
            hdr.ipv6.hop_limit = hdr.ipv6.hop_limit - 1;
        }
        hdr.ethernet.dst_addr = meta.nexthop_dmac;
        port_mac.apply();
        mirror_egress.apply();
    }
}

control RoceComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            IPV4_HEADER_FIELDS,
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

// mac_control frames never leave themselves (ingress consumes them); only an ingress mirror's
// copy of one does, and it must leave whole.
control RoceDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.vlan);
        pkt.emit(hdr.mac_control);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.ipv4_options);
        pkt.emit(hdr.ipv6);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.bth);
    }
}

V1Switch(RoceParser(), RoceVerifyChecksum(), RoceIngress(), RoceEgress(),
         RoceComputeChecksum(), RoceDeparser()) main;
