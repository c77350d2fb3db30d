// The inverse of the config loader: a SwitchConfig written back as the YAML a person would
// write (README "Configuration", the loader's key names and units), fully resolved so that a
// reload needs no defaults: every map in full, all eight queue values, the lossless profiles
// the loader computed, the route limits. load_config_text(dump_config(c)) builds the same
// SwitchConfig as c (`source` aside, which names where a config came from rather than what it
// is), and group numbering aside when c's is not the loader's: the loader numbers the named
// groups first, then the routes' own groups (route:PREFIX, written in their routes) in route
// order. A configuration the loader built is in that order; a running switch's, with groups
// added after the routes' own, is dumped as the same groups and routes renumbered so (and the
// dump of its reload is the same text).
//
// Canonical: the text is a function of the configuration alone (fixed key order, ports and
// groups in index order, doubles in their shortest round-trip form, generated profile names),
// so equal configurations give byte-identical text and a hash of the text is a hash of the
// state. A file pipeline (switch.pipeline) is named by path; a digest of its text follows as a
// comment so the text still changes when only the pipeline file's content does.
#pragma once
#include <string>

#include "dataplane/switch/switch_config.h"

namespace rs {

// Throws std::invalid_argument naming the field when `cfg` holds something no YAML file can
// express, which a config the loader built never does: a value the file sets switch-wide that
// differs between ports (pfc_quanta, queue profiles, WRED, a PG's xoff/xon or headroom), a
// field no key sets (HostSpec::rx_flow_capacity), a time outside the loader's range, a group
// named route:PREFIX that is not exactly what the loader makes for one route (used by another
// route too, or by none, or with a policy; nexthop_groups refuses such names), a repeated group
// name, a prefix with host bits set or given twice, routes beyond the route limits.
// Not checked: the values the loader derives (PgSettings::headroom_min and ::lossless, the
// workers of a receiver group's unpinned ports), which the reload derives again from what is
// written, and the fields the Switch ignores (an ethdev's host, the settings of a disabled
// watchdog, WRED queue or priority-less PFC storm), which the dump leaves out.
std::string dump_config(const SwitchConfig& cfg);

}  // namespace rs
