// The inverse of the config loader: a SwitchConfig written back as the YAML a person would
// write (README "Configuration", the loader's key names and units), fully resolved so that a
// reload needs no defaults: every map in full, all eight queue values, the lossless profiles
// the loader computed. load_config_text(dump_config(c)) builds the same SwitchConfig as c
// (`source` aside, which names where a config came from rather than what it is).
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
// field no key sets (HostSpec::rx_flow_capacity), a time no number of seconds converts to, a
// route group neither nexthop_groups nor a route's own form can rebuild at its index.
// Not checked: the values the loader derives (PgSettings::headroom_min and ::lossless, the
// workers of a receiver group's unpinned ports), which the reload derives again from what is
// written, and the fields the Switch ignores (an ethdev's host, the settings of a disabled
// watchdog, WRED queue or priority-less PFC storm), which the dump leaves out.
std::string dump_config(const SwitchConfig& cfg);

}  // namespace rs
