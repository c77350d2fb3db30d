#!/bin/bash
# A bad configuration file must cost nothing: roceswitch exits 2 before DPDK starts, and the
# message names the file, the key path and the reason, so the user can fix it without guessing.
# A good file passes --check-config with exit 0.
set -euo pipefail
ROCESWITCH="${1:-}"
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
require_binary

T="$(mktemp -d -t rs-bad-config.XXXXXX)"
trap 'rm -rf "$T"' EXIT

# A valid base: two emulated hosts (no NIC needed), one route each.
good_ports='ports:
  - name: a
    kind: emulated_host
    mac: "02:00:00:00:00:10"
    speed_gbps: 1
    host: {ip: 10.0.0.2, mac: "02:00:00:00:aa:00"}
  - name: b
    kind: emulated_host
    mac: "02:00:00:00:00:11"
    speed_gbps: 1
    host: {ip: 10.0.1.2, mac: "02:00:00:00:aa:01"}'
good_routes='routes:
  - {prefix: 10.0.0.0/24, port: a, mac: "02:00:00:00:aa:00"}
  - {prefix: 10.0.1.0/24, port: b, mac: "02:00:00:00:aa:01"}'

printf '%s\n%s\n' "$good_ports" "$good_routes" >"$T/good.yaml"

# bad_case NAME KEY_PATH REASON_REGEX: the file $T/NAME.yaml must be rejected with exit 2 and a
# message that contains the file name, KEY_PATH and matches REASON_REGEX. Run once with
# --check-config and once as a real start (which must not get as far as starting EAL).
bad_case() {
  local name="$1" path="$2" reason="$3" file="$T/$1.yaml" mode rc out ok=0
  for mode in --check-config run; do
    set +e
    if [ "$mode" = run ]; then
      # shellcheck disable=SC2046
      out="$(timeout 20 "$ROCESWITCH" $(eal_args "$name") -- --config "$file" --duration 1 2>&1)"
    else
      out="$(timeout 20 "$ROCESWITCH" -- --config "$file" --check-config 2>&1)"
    fi
    rc=$?
    set -e
    if [ $rc -ne 2 ]; then echo "    [$mode] exit code $rc, expected 2; output: $out" >&2; ok=1; fi
    if ! grep -qF -- "$file" <<<"$out"; then echo "    [$mode] message does not name the file: $out" >&2; ok=1; fi
    if ! grep -qF -- "$path" <<<"$out"; then echo "    [$mode] message does not name the key path '$path': $out" >&2; ok=1; fi
    if ! grep -qiE -- "$reason" <<<"$out"; then echo "    [$mode] message gives no reason matching /$reason/: $out" >&2; ok=1; fi
    # EAL prints "EAL:" lines once it starts; a bad file must be refused before that.
    if grep -q 'EAL:\|no free hugepages\|ports,.*routes.*running' <<<"$out"; then
      echo "    [$mode] something was started: $out" >&2; ok=1
    fi
  done
  [ $ok -eq 0 ] && echo "      -> $(head -n 1 <<<"$out")"
  return $ok
}

# --- the cases -------------------------------------------------------------------------------
printf 'switch: {workers: 1, colour: blue}\n%s\n%s\n' "$good_ports" "$good_routes" >"$T/unknown_key.yaml"
check "unknown key switch.colour" bad_case unknown_key "switch.colour" "unknown key"

printf 'switch: {workers: many}\n%s\n%s\n' "$good_ports" "$good_routes" >"$T/wrong_type.yaml"
check "wrong type: switch.workers is not an integer" bad_case wrong_type "switch.workers" "expected an integer"

echo "${good_ports//speed_gbps: 1/speed_gbps: 5000}" >"$T/p.txt"
# Only the second port's speed is out of range, so the path must say ports[1], not ports[0].
awk 'BEGIN{n=0} /speed_gbps/{n++; if(n==1){sub(/5000/,"1")}} {print}' "$T/p.txt" >"$T/p2.txt"
printf '%s\n%s\n' "$(cat "$T/p2.txt")" "$good_routes" >"$T/speed_range.yaml"
check "out-of-range speed ports[1].speed_gbps" bad_case speed_range "ports[1].speed_gbps" "out of range"

printf '%s\n%s\n  - {prefix: 10.0.9.0/24, port: c, mac: "02:00:00:00:aa:09"}\n' "$good_ports" "$good_routes" >"$T/undefined_port.yaml"
check "route to a port not defined in ports" bad_case undefined_port "routes[2].port" "not defined"

sed '0,/name: b/s//name: a/' <<<"$good_ports" >"$T/p.txt"
printf '%s\n%s\n' "$(cat "$T/p.txt")" "$good_routes" >"$T/duplicate_port.yaml"
check "duplicate port name" bad_case duplicate_port "ports[1].name" "duplicate"

echo "${good_ports//mac: \"02:00:00:00:00:11\"/mac: \"02:00:00:00:11\"}" >"$T/p.txt"
printf '%s\n%s\n' "$(cat "$T/p.txt")" "$good_routes" >"$T/bad_mac.yaml"
check "bad MAC ports[1].mac" bad_case bad_mac "ports[1].mac" "not a MAC"

printf '%s\nroutes:\n  - {prefix: 10.0.0.0/24, port: a, mac: "02:00:00:00:aa:00"}\n  - {prefix: 10.0.1.0/33, port: b, mac: "02:00:00:00:aa:01"}\n' "$good_ports" >"$T/bad_prefix_len.yaml"
check "bad prefix length routes[1].prefix" bad_case bad_prefix_len "routes[1].prefix" "out of range"

printf '%s\nroutes:\n  - {prefix: 10.0.300.0/24, port: a, mac: "02:00:00:00:aa:00"}\n' "$good_ports" >"$T/bad_prefix_addr.yaml"
check "bad prefix address routes[0].prefix" bad_case bad_prefix_addr "routes[0].prefix" "not an IPv4 prefix"

printf '%s\nroutes:\n  - {prefix: 10.0.0.0/24, port: a, mac: "zz:00:00:00:aa:00"}\n' "$good_ports" >"$T/bad_nexthop_mac.yaml"
check "bad next-hop MAC routes[0].mac" bad_case bad_nexthop_mac "routes[0].mac" "not a MAC"

printf '%s\n%s\n  - {prefix: 10.0.0.0/24, port: b, mac: "02:00:00:00:aa:01"}\n' "$good_ports" "$good_routes" >"$T/duplicate_route.yaml"
check "duplicate route routes[2].prefix" bad_case duplicate_route "routes[2].prefix" "duplicate"

printf 'switch: {workers: 1}\nports: {a: 1}\n' >"$T/ports_not_list.yaml"
check "ports is not a list" bad_case ports_not_list "ports" "expected a list"

printf 'ports: [\n' >"$T/syntax.yaml"
check "YAML syntax error" bad_case syntax "(syntax)" "."

# A missing file is a usage error too (exit 2, the path named).
missing_file() {
  local out rc
  set +e; out="$("$ROCESWITCH" -- --config "$T/does_not_exist.yaml" --check-config 2>&1)"; rc=$?; set -e
  if [ $rc -eq 2 ] && grep -qF "$T/does_not_exist.yaml" <<<"$out" && grep -q "cannot open" <<<"$out"; then
    return 0
  fi
  echo "    exit $rc: $out" >&2
  return 1
}
check "missing config file -> exit 2 naming the file" missing_file

# --- the good file ---------------------------------------------------------------------------
good_check() {
  local out rc
  set +e; out="$("$ROCESWITCH" -- --config "$T/good.yaml" --check-config 2>&1)"; rc=$?; set -e
  echo "      -> $out"
  [ $rc -eq 0 ] && grep -q "ok (2 ports, 2 routes" <<<"$out" && ! grep -q 'EAL:' <<<"$out"
}
check "--check-config on a good config exits 0 and starts nothing" good_check
demo_check() {
  local out rc
  set +e; out="$("$ROCESWITCH" -- --config "$REPO_ROOT/configs/demo_incast.yaml" --check-config 2>&1)"; rc=$?; set -e
  echo "      -> $out"
  [ $rc -eq 0 ]
}
check "--check-config on configs/demo_incast.yaml exits 0" demo_check

# --check-config is a promise: a file it accepts must also start. A default route (0.0.0.0/0)
# is the classic edge case (rte_lpm takes depths 1..32 only). Either answer is fine - reject it
# with exit 2 naming routes[1].prefix, or accept it and run - but not "ok" and then exit 1.
printf '%s\nroutes:\n  - {prefix: 10.0.0.0/24, port: a, mac: "02:00:00:00:aa:00"}\n  - {prefix: 0.0.0.0/0, port: b, mac: "02:00:00:00:aa:01"}\n' \
  "$good_ports" >"$T/default_route.yaml"
check_agrees_with_start() {
  local file="$1" out rc out2 rc2
  set +e
  out="$("$ROCESWITCH" -- --config "$file" --check-config 2>&1)"; rc=$?
  # shellcheck disable=SC2046
  out2="$(timeout 60 "$ROCESWITCH" $(eal_args agree) -- --config "$file" --duration 1 --quiet 2>&1)"; rc2=$?
  set -e
  echo "      -> --check-config: exit $rc: $out"
  echo "      -> start:          exit $rc2: $(grep -v TELEMETRY <<<"$out2" | head -n 2 | tr '\n' ' ')"
  if [ $rc -eq 0 ]; then
    eq "start exit code after --check-config said ok" $rc2 0
  else
    eq "--check-config exit code" $rc 2 && grep -qF "routes[1].prefix" <<<"$out"
  fi
}
check "--check-config and a real start agree on a default route 0.0.0.0/0" check_agrees_with_start "$T/default_route.yaml"

# A usage error (unknown option) is exit 2 as well.
usage_check() {
  local rc
  set +e; "$ROCESWITCH" -- --no-such-option >/dev/null 2>&1; rc=$?; set -e
  eq "exit code" $rc 2
}
check "unknown command-line option -> exit 2" usage_check
finish
