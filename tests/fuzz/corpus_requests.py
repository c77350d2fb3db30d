"""Seed requests of the text-protocol fuzz targets (make_corpus.py writes them): control
protocol requests (fuzz_control, against control_fuzz.h's switch: hosts h0..h3, an address on
h3, VLAN 7) and BMv2 simple_switch_CLI scripts (fuzz_bmv2)."""

MEMBERS = [{'port': 'h2', 'mac': '02:00:00:00:aa:02'}, {'port': 'h3', 'mac': '02:00:00:00:aa:03', 'weight': 2}]
CONTROL = {
    'route_add': {'id': 1, 'op': 'route.add', 'prefix': '10.5.0.0/16', 'group': 'to_h1'},
    'route_nexthops': {'id': 2, 'op': 'route.add', 'prefix': '2001:db8::/48', 'nexthops': MEMBERS, 'replace': True},
    'route_del': {'id': 3, 'op': 'route.del', 'prefix': '10.0.1.0/24'},
    'group_add': {'id': 4, 'op': 'group.add', 'name': 'spine', 'members': MEMBERS, 'policy': {'name': 'drill', 'd': 2}},
    'group_set': {'id': 5, 'op': 'group.set', 'name': 'to_h1', 'policy': {'name': 'spray'}, 'table_size': 128},
    'port_down': {'id': 6, 'op': 'port.set', 'port': 'h2', 'admin': 'down'},
    'qos': {'id': 7, 'op': 'qos.set', 'trust': 'pcp', 'dscp_to_tc': {'26': 3}, 'cnp_queue': 6},
    'mirror': {'id': 8, 'op': 'mirror.set', 'name': 'm', 'dst_port': 'h2', 'tx_ports': ['h1'], 'truncate': 64},
    'txn': {'id': 9, 'ops': [{'op': 'group.add', 'name': 'x', 'members': MEMBERS},
                             {'op': 'route.add', 'prefix': '10.7.0.0/16', 'group': 'x'},
                             {'op': 'mirror.del', 'name': 'span'}]},
    'p4': {'id': 10, 'op': 'p4.cli', 'lines': ['mirroring_add 3 2', 'table_add mirror_egress mirror_out 1 => 3']},
    'reads': {'id': 11, 'op': 'route.list', 'prefix': '10.0.0.0/8', 'limit': 3},
    'port_settings': {'id': 14, 'op': 'port.set', 'port': 'h1', 'speed_gbps': 2.5,
                      'queues': {'limit_packets': 2048, 'scheduler': ['strict'] + ['dwrr'] * 7}},
    'buffer_set': {'id': 15, 'op': 'buffer.set', 'pfc_quanta': 500, 'queue_wred': {'1': None},
                   'wred_profiles': {'W': {'ecn': 'ecn_green', 'green_min_threshold': 1000,
                                           'green_max_threshold': 9000, 'green_drop_probability': 5}}},
    'buffer_yaml': {'id': 16, 'op': 'buffer.set', 'yaml': 'pfcwd: {detection_time: 200}\nports: [{name: h2, speed_gbps: 7}]\n'},
    'trace': {'id': 12, 'op': 'trace.start', 'count': 2},
    'dump': {'id': 13, 'op': 'config.dump'},
    'port_address': {'id': 18, 'op': 'port.set', 'port': 'h3', 'ipv4': ['10.99.0.1/24', '10.98.0.1/16'],
                     'ipv6': '2001:db8:99::1/64', 'icmp_unreachable': True, 'lldp': True},
    'port_vlan': {'id': 19, 'ops': [{'op': 'system.set', 'vlans': [7, {'id': 8, 'ipv4': '10.97.0.1/24'}]},
                                    {'op': 'port.set', 'port': 'h2', 'vlan': {'access': 8}}]},
    'system_set': {'id': 20, 'op': 'system.set', 'copp': {'arp': {'pps': 10, 'burst': 5}}, 'neighbours': {'retrans_s': 0.5},
                   'lldp': {'system_name': 'x'}, 'bridge': {'ageing_s': 9, 'flood_pps': 100}},
    'system_yaml': {'id': 21, 'op': 'system.set', 'yaml': 'copp: {ip2me: {pps: 0}}\nvlans: [7, 9]\n'},
    'blackhole': {'id': 17, 'ops': [{'op': 'route.add', 'prefix': '10.0.1.0/24', 'drop': True, 'replace': True},
                                    {'op': 'group.set', 'name': 'to_h2', 'drop': True}]},
}

BMV2 = {
    'selector': """act_prof_create_member nexthop_selector set_nexthop 1 02:00:00:00:01:01
act_prof_create_member nexthop_selector set_nexthop 2 02:00:00:00:02:01
act_prof_create_group nexthop_selector
act_prof_add_member_to_group nexthop_selector 0 0
act_prof_add_member_to_group nexthop_selector 1 0
table_indirect_add_with_group ipv4_lpm 10.1.0.0/16 => 0
table_indirect_add ipv6_lpm 2001:db8::/32 => 1
table_dump ipv4_lpm
""",
    'blackhole': """act_prof_create_member nexthop_selector drop
table_indirect_add ipv4_lpm 10.9.0.0/16 => 0
act_prof_dump nexthop_selector
""",
    'qos': """table_set_default dscp_to_tc set_tc 1
table_add dscp_to_tc set_tc 26 => 3
table_add pcp_to_tc set_tc 3 => 3
table_modify dscp_to_tc set_tc 0 4
table_add tc_to_queue set_queue 3 => 3
table_delete tc_to_queue 0
""",
    'mirror': """mirroring_add 5 3
table_add mirror_ingress mirror_in 0 => 5
table_add mirror_egress mirror_out 1 => 5
mirroring_get 5
table_delete mirror_ingress 0
mirroring_delete 5
""",
    'queues': """set_queue_depth 64 1 3
set_queue_depth 2048
set_queue_rate 100000 2
""",
}
