// Reads a host's RoCE NIC (`ports[].host.nic`) and its queue pairs (`ports[].host.qps`), and
// writes them back for `config dump`. The DCQCN keys are NVIDIA's firmware names in its units
// (microseconds, Mb/s, fractions of 1024), under `nic.dcqcn`. Failures name the file, line, key
// path and reason.
#pragma once
#include <yaml-cpp/yaml.h>

#include <map>
#include <string>

#include "control/config/config_reader.h"
#include "dataplane/switch/switch_config.h"

namespace rs {

void read_nic(const ConfigReader& rd, const YAML::Node& n, const std::string& path, nic::NicSpec& s);
// `own_ip` (network order) is the host's: a QP to itself is refused.
void read_qps(const ConfigReader& rd, const YAML::Node& n, const std::string& path, uint32_t own_ip, std::vector<nic::QpSpec>& out);

// The hosts that collectives and traffic patterns name: a switch's ports (an index is the port's),
// or a fabric's hosts (leaf1.h1). Names also given in `groups` stand for several hosts in order
// ("all", a fabric's "leaf1"). A port that is not an emulated host has no spec (`ports[i]` null)
// and is refused by name.
struct HostTable {
  std::vector<std::string> names;
  std::vector<PortSpec*> ports;
  std::map<std::string, std::vector<uint16_t>> groups;
  std::string source;  // the config file: cdf files are found beside it
  std::string noun = "port";  // what a name is, in errors ("no port 'x'")
};

// One host by name (not a group): its index in `hosts`, or a ConfigError at `path`.
uint16_t read_host(const ConfigReader& rd, const YAML::Node& n, const std::string& path, const HostTable& hosts);
HostTable switch_hosts(SwitchConfig& cfg);

// collectives: [{op: allreduce|allgather|reducescatter|alltoall, hosts: [names, ring order],
// size_bytes, slices, qpn, dscp, start_s}]: read, then expanded into the hosts' queue pairs.
void read_collectives(const ConfigReader& rd, const YAML::Node& n, const HostTable& hosts, std::vector<nic::CollectiveSpec>& out);
// traffic: [{pattern: incast|permutation|all_to_all|cdf, hosts, receiver (incast), message_bytes,
// messages, depth, dscp, qpn, seed, start_s, stop_s; cdf: cdf_file, load, duration_s}]: read,
// then expanded into the hosts' queue pairs. A CDF file's errors name its own file and line.
// `seed` is the patterns' when they give none.
void read_traffic(const ConfigReader& rd, const YAML::Node& n, const HostTable& hosts, std::vector<nic::TrafficSpec>& out,
                  uint64_t seed = 1);
// A flow-size CDF file: `bytes probability` a line (probability in [0, 1], or percent when the
// last is 100, as HPCC's traffic_gen files), # comments; both columns non-decreasing.
nic::FlowSizeCdf read_cdf_file(const std::string& path);

}  // namespace rs
