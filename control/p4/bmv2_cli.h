// BMv2's simple_switch_CLI syntax for the tables of p4/roceswitch.p4, so that a command file
// written for BMv2 against this program programs roceswitch unchanged:
//   act_prof_create_member nexthop_selector set_nexthop 1 02:00:00:00:01:01   -> member 0
//   act_prof_create_group nexthop_selector                                    -> group 0
//   act_prof_add_member_to_group nexthop_selector 0 0
//   table_indirect_add_with_group ipv4_lpm 10.1.0.0/16 => 0
// Names, action parameters and their widths are checked against the P4 registry (p4_schema.h).
// A selector group is a next-hop group of the running state, named p4_group_<handle> (its
// routing policy is ecmp, and can be changed like any group's); a route to a single member
// goes through a one-member group p4_member_<handle>. Handles are the switch's, as BMv2's are.
// Where roceswitch differs: a group is never left empty while a route names it (BMv2 would
// drop those packets as bad_next_hop; roceswitch refuses), and a drop() member (a blackhole:
// its p4_member_<handle> group drops) may not join a selector group (BMv2 would drop the flows
// hashed to it; roceswitch's groups only forward). A mirror session (mirroring_add <id> <port>) is the running
// state's p4_session_<id>; a mirror_ingress / mirror_egress entry adds its port to the
// session's rx or tx ports, so a session must exist before an entry names it. Run inside the caller's transaction: the whole script
// applies or nothing does.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "control/runtime/running_state.h"

namespace rs {

class Bmv2Cli {
 public:
  explicit Bmv2Cli(RunningState& state) : st_(state) {}
  // One output line (or a few) per command; blank lines and `#` comments are skipped. Throws
  // OpError{"line N", "command: reason"} on the first bad line.
  std::vector<std::string> run(const std::vector<std::string>& lines);

  struct Member {
    uint16_t port = 0;
    rte_ether_addr mac{};
    bool drop = false;  // the drop() action: a route to this member is a blackhole
  };

 private:
  struct State {
    std::map<uint32_t, Member> members;
    std::map<uint32_t, std::vector<uint32_t>> groups;  // handle -> member handles
    std::map<uint32_t, RouteKey> entries;              // entry handle -> route
    std::map<RouteKey, uint32_t> entry_of;
    uint32_t next_member = 0, next_group = 0, next_entry = 0;
    // The classification tables' entries (table -> handle -> key) and set defaults.
    std::map<std::string, std::map<uint32_t, uint8_t>> qos_entries;
    std::map<std::string, uint32_t> qos_next;
    std::map<std::string, uint8_t> qos_default;
    // mirror_ingress / mirror_egress entries: handle -> table, port, session (none: NoAction).
    struct MirrorEntry {
      std::string table;
      uint16_t port = 0;
      std::optional<uint32_t> session;
    };
    std::map<uint32_t, MirrorEntry> mirror_entries;
    uint32_t next_mirror_entry = 0;
  };

  std::vector<std::string> command(const std::vector<std::string>& t);
  std::string selector_of(const std::string& name, bool is_table) const;
  Member member_params(const std::string& action, const std::vector<std::string>& args) const;
  RouteSpec match_key(const std::string& table, const std::string& key) const;
  void sync_group(uint32_t grp);      // the running state's group follows the P4 group
  void sync_member(uint32_t mbr);     // and every group holding the member, and its own group
  std::string member_group(uint32_t mbr);  // materialises p4_member_<h>
  uint32_t entry_handle(const RouteKey& k);
  std::vector<std::string> dump(const std::string& table);
  // table_add / table_modify / table_delete / table_set_default / table_dump / table_clear on
  // dscp_to_tc, pcp_to_tc and tc_to_queue: the running state's QoS maps.
  std::vector<std::string> qos_command(const std::vector<std::string>& t);
  // mirroring_add / mirroring_delete / mirroring_get, and the table commands on mirror_ingress
  // and mirror_egress: the running state's mirror sessions, p4_session_<id>.
  std::vector<std::string> mirror_command(const std::vector<std::string>& t);
  // set_queue_depth / set_queue_rate: the running state's port settings.
  std::vector<std::string> queue_command(const std::vector<std::string>& t);
  // counter_read / register_read: the program's counters and register, from the data plane.
  std::vector<std::string> read_command(const std::vector<std::string>& t);
  // The table commands on port_mac: the running state's port MACs.
  std::vector<std::string> port_mac_command(const std::vector<std::string>& t);
  void mirror_watch(const State::MirrorEntry& e, bool on);

  RunningState& st_;
  State s_;
};

}  // namespace rs
