#!/bin/bash
# Observability with the ecosystem's own tools, on the embedded demo: /metrics read by curl
# (families, HELP/TYPE, content type, 404), scraped by Debian's Prometheus server (the switch's
# counters arrive, and every query of docs/grafana-dashboard.json is valid PromQL that finds
# data), and the switch's DPDK telemetry commands read by Debian's dpdk-telemetry.py as it reads
# /ethdev/stats. The switch must then exit 0 on SIGINT.
set -euo pipefail
ROCESWITCH="${1:-}"
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
require_binary
PROMETHEUS=/usr/bin/prometheus
TELEMETRY=/usr/bin/dpdk-telemetry.py
DASHBOARD="$REPO_ROOT/docs/grafana-dashboard.json"
command -v "$PY" >/dev/null || { log "SKIP: no $PY"; exit 77; }
command -v curl >/dev/null || { log "SKIP: curl not installed (apt install curl)"; exit 77; }
[ -x "$PROMETHEUS" ] || { log "SKIP: $PROMETHEUS not installed (apt install prometheus, or bash tools/deps.sh)"; exit 77; }
[ -x "$TELEMETRY" ] || { log "SKIP: $TELEMETRY not installed (apt install dpdk)"; exit 77; }

T="$(mktemp -d -t rs-metrics.XXXXXX)"
PREFIX="rs-metrics-$$"
SW_PID=""
PROM_PID=""
cleanup() {
  # Only the processes this script started, by PID.
  if [ -n "$PROM_PID" ]; then kill -KILL "$PROM_PID" 2>/dev/null || true; fi
  if [ -n "$SW_PID" ]; then kill -KILL "$SW_PID" 2>/dev/null || true; fi
  rm -rf "$T"
  # Without --no-shconf DPDK keeps its runtime files (and the telemetry socket) here.
  for d in "/var/run/dpdk/$PREFIX" "${XDG_RUNTIME_DIR:-/tmp}/dpdk/$PREFIX"; do
    if [ -d "$d" ]; then rm -rf "$d"; fi
  done
}
trap cleanup EXIT

show_logs() {
  if [ -s "$T/switch.log" ]; then log "switch log:"; tail -n 15 "$T/switch.log" | sed 's/^/    | /' >&2; fi
  if [ -s "$T/prometheus.log" ]; then log "prometheus log:"; tail -n 15 "$T/prometheus.log" | sed 's/^/    | /' >&2; fi
}
fail() {
  show_logs
  die "$*"
}

# A TCP port nobody listens on now (the kernel's choice).
free_port() {
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# wait_until SECONDS DESCRIPTION COMMAND...: retry every 0.5 s, bounded; the switch must stay up.
wait_until() {
  local secs="$1" what="$2" i
  shift 2
  for ((i = 0; i < secs * 2; i++)); do
    if "$@" 2>/dev/null; then return 0; fi
    if ! kill -0 "$SW_PID" 2>/dev/null; then fail "roceswitch exited while waiting for $what"; fi
    sleep 0.5
  done
  fail "timed out after $secs s waiting for $what"
}

METRICS_PORT="$(free_port)"
METRICS="http://127.0.0.1:$METRICS_PORT/metrics"
log "starting the demo with --metrics-listen 127.0.0.1:$METRICS_PORT, DPDK file prefix $PREFIX"
# Not --no-shconf: DPDK makes its runtime directory, where the telemetry socket lives.
"$ROCESWITCH" --no-huge -m 1024 --no-pci --file-prefix "$PREFIX" -- --duration 60 --quiet --control-socket none \
  --metrics-listen "127.0.0.1:$METRICS_PORT" >"$T/switch.log" 2>&1 &
SW_PID=$!

# --- /metrics with curl ---------------------------------------------------------------------------
scrape() { curl -s -m 5 -D "$T/headers" -o "$T/metrics" -w '%{http_code}' "$METRICS" | grep -qx 200; }
wait_until 60 "/metrics to answer 200" scrape
log "ok   /metrics answers ($(wc -l <"$T/metrics") lines)"
grep -qi '^content-type: text/plain; version=0.0.4' "$T/headers" || fail "content type: $(grep -i '^content-type' "$T/headers")"
for fam in roceswitch_port_rx_packets_total:counter roceswitch_port_tx_bytes_total:counter roceswitch_port_link_up:gauge \
  roceswitch_queue_depth_bytes:gauge roceswitch_drops_total:counter roceswitch_pfc_tx_frames_total:counter \
  roceswitch_pfc_rx_frames_total:counter roceswitch_ecn_marked_packets_total:counter \
  roceswitch_pfcwd_storms_detected_total:counter roceswitch_group_member_tx_packets_total:counter \
  roceswitch_lossless_drops_total:counter roceswitch_buffer_used_bytes:gauge; do
  name="${fam%%:*}" type="${fam##*:}"
  grep -q "^# HELP $name " "$T/metrics" || fail "no HELP line for $name"
  grep -q "^# TYPE $name $type\$" "$T/metrics" || fail "no '# TYPE $name $type' line"
done
# Every family has HELP and TYPE; counters end in _total; every sample's family was declared.
"$PY" - "$T/metrics" <<'EOF' || fail "/metrics is not well-formed (above)"
import re, sys
text = open(sys.argv[1]).read()
help_, type_, bad = set(), {}, []
for line in text.splitlines():
    if line.startswith('# HELP '):
        help_.add(line.split()[2])
    elif line.startswith('# TYPE '):
        _, _, n, t = line.split()
        type_[n] = t
        if not re.fullmatch(r'[a-zA-Z_:][a-zA-Z0-9_:]*', n): bad.append('bad name ' + n)
        if (t == 'counter') != n.endswith('_total'): bad.append(f'{n} is a {t}')
    else:
        n = re.match(r'[^{ ]+', line).group(0)
        if n not in type_ or n not in help_: bad.append('undeclared ' + n)
for b in bad[:10]: print('    ' + b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
grep -qE '^roceswitch_pfc_tx_frames_total\{port="h1",priority="3"\} ' "$T/metrics" || fail "no PFC series for h1 priority 3"
code="$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$METRICS_PORT/nope")"
[ "$code" = 404 ] || fail "GET /nope answered $code, expected 404"
log "ok   families with HELP and TYPE, text format 0.0.4, 404 elsewhere"

# --- Prometheus scrapes it ------------------------------------------------------------------------
PROM_PORT="$(free_port)"
PROM="http://127.0.0.1:$PROM_PORT"
cat >"$T/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: roceswitch
    scrape_interval: 1s
    scrape_timeout: 1s
    static_configs:
      - targets: ['127.0.0.1:$METRICS_PORT']
EOF
"$PROMETHEUS" --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" --web.listen-address="127.0.0.1:$PROM_PORT" \
  >"$T/prometheus.log" 2>&1 &
PROM_PID=$!
log "prometheus on 127.0.0.1:$PROM_PORT scraping every 1 s"

# query_ok PROMQL [MIN]: the instant query succeeds and has a sample > MIN (default: any sample).
query_ok() {
  curl -s -m 5 -G "$PROM/api/v1/query" --data-urlencode "query=$1" >"$T/query.json" || return 1
  "$PY" - "$T/query.json" "${2:-}" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
r = j.get('data', {}).get('result', []) if j.get('status') == 'success' else []
if sys.argv[2]:
    r = [x for x in r if float(x['value'][1]) > float(sys.argv[2])]
sys.exit(0 if r else 1)
EOF
}
prom_up() { kill -0 "$PROM_PID" 2>/dev/null || fail "prometheus exited"; query_ok "$@"; }
wait_until 30 "Prometheus to hold roceswitch_port_rx_packets_total > 0" prom_up roceswitch_port_rx_packets_total 0
log "ok   Prometheus scraped roceswitch_port_rx_packets_total > 0"
prom_up 'up{job="roceswitch"}' 0 || fail "up{job=\"roceswitch\"} is not 1: $(cat "$T/query.json")"
wait_until 30 "a receive rate over 5 s" prom_up 'sum(rate(roceswitch_port_rx_packets_total[5s]))' 0
log "ok   rate(roceswitch_port_rx_packets_total[5s]) > 0"

# Every panel query of the dashboard is valid PromQL (Grafana's variables filled in); the
# port-rate, queue and member panels find data.
"$PY" - "$DASHBOARD" >"$T/exprs" <<'EOF' || fail "cannot read $DASHBOARD"
import json, sys
d = json.load(open(sys.argv[1]))
for p in d['panels']:
    for t in p.get('targets', []):
        e = t['expr']
        for k, v in (('$__rate_interval', '5s'), ('$__range', '1m'), ('$__interval', '1s'),
                     ('$port', '.*'), ('$group', '.*'), ('$queue', '.*')):
            e = e.replace(k, v)
        print(p['title'] + '\t' + e)
EOF
[ -s "$T/exprs" ] || fail "no queries in $DASHBOARD"
n=0
while IFS=$'\t' read -r title expr; do
  curl -s -m 5 -G "$PROM/api/v1/query" --data-urlencode "query=$expr" >"$T/query.json"
  json_true "$T/query.json" "j['status'] == 'success'" || fail "panel '$title': query rejected: $expr: $(cat "$T/query.json")"
  n=$((n + 1))
done <"$T/exprs"
log "ok   the dashboard's $n queries are accepted by Prometheus"
for title in "Port RX rate" "Queue depth" "Member share"; do
  expr="$(awk -F'\t' -v t="$title" '$1 == t {print $2; exit}' "$T/exprs")"
  [ -n "$expr" ] || fail "the dashboard has no panel '$title'"
  wait_until 15 "panel '$title' to find data: $expr" query_ok "$expr"
done
log "ok   port rate, queue depth and member share panels find data"
kill -TERM "$PROM_PID"
for ((i = 0; i < 100; i++)); do kill -0 "$PROM_PID" 2>/dev/null || break; sleep 0.1; done
kill -KILL "$PROM_PID" 2>/dev/null || true
wait "$PROM_PID" 2>/dev/null || true
PROM_PID=""

# --- DPDK telemetry -------------------------------------------------------------------------------
# dpdk-telemetry.py reads commands from standard input and prints one JSON reply a command, in order.
TEL_CMDS=(/ /roceswitch/ports "/roceswitch/queues,h0" "/roceswitch/pfc,h1" /roceswitch/groups /roceswitch/drops
  /roceswitch/totals "/help,/roceswitch/ports" "/roceswitch/ports,nosuchport")
printf '%s\n' "${TEL_CMDS[@]}" | timeout 20 "$TELEMETRY" -f "$PREFIX" >"$T/telemetry.out" 2>&1 \
  || fail "dpdk-telemetry.py -f $PREFIX failed: $(cat "$T/telemetry.out")"
"$PY" - "$T/telemetry.out" <<'EOF' || { sed 's/^/    | /' "$T/telemetry.out" | cut -c1-300 >&2; fail "telemetry replies (above)"; }
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith('{')]
def need(ok, what):
    if not ok:
        print('    ' + what, file=sys.stderr)
        sys.exit(1)
need(len(r) == 9, '%d replies to 9 commands' % len(r))
listed = r[0]['/']
cmds = ['/roceswitch/ports', '/roceswitch/queues', '/roceswitch/pfc', '/roceswitch/groups', '/roceswitch/drops', '/roceswitch/totals']
need(all(c in listed for c in cmds), 'the command list misses roceswitch commands: %s' % listed)
need('/ethdev/stats' in listed, "DPDK's own commands are not listed beside them: %s" % listed)
ports = r[1]['/roceswitch/ports']
need(ports['name'] == ['h0', 'h1', 'h2', 'h3'], 'ports: %s' % ports)
need(ports['rx_packets'][1] > 0 and ports['tx_packets'][0] > 0, 'no traffic in /roceswitch/ports: %s' % ports)
q = r[2]['/roceswitch/queues']
need(q['queue'] == list(range(8)) and set(q['port']) == {'h0'}, 'queues,h0: %s' % q)
need(q['ecn_marked'][3] > 0, 'no ECN marks on h0 queue 3: %s' % q['ecn_marked'])
pfc = r[3]['/roceswitch/pfc']
need(pfc['port_name'] == ['h1'] and pfc['lossless'][3] == 1 and pfc['tx_xoff'][3] > 0, 'no PFC sent to h1 on priority 3: %s' % pfc)
g = r[4]['/roceswitch/groups']
need('h0' in g['port'] and sum(g['packets']) > 0, 'groups: %s' % g)
need(r[5]['/roceswitch/drops']['tail_drop_bytes'] > 0, 'drops: %s' % r[5])
t = r[6]['/roceswitch/totals']
need(t['received'] > 0 and t['lossless_drops'] == 0, 'totals: %s' % t)
need('port' in r[7]['/help']['/roceswitch/ports'].lower(), 'help: %s' % r[7])
need("no port 'nosuchport'" in r[8]['/roceswitch/ports'].get('error', ''), 'unknown port: %s' % r[8])
EOF
log "ok   dpdk-telemetry.py lists and reads /roceswitch/{ports,queues,pfc,groups,drops,totals}"

# --- stop ---------------------------------------------------------------------------------------
kill -INT "$SW_PID"
for ((i = 0; i < 150; i++)); do kill -0 "$SW_PID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$SW_PID" 2>/dev/null; then fail "roceswitch still running 15 s after SIGINT"; fi
set +e; wait "$SW_PID"; rc=$?; set -e
SW_PID=""
[ "$rc" -eq 0 ] || fail "roceswitch exited $rc after SIGINT, expected 0"
grep -q "lossless held" "$T/switch.log" || fail "the summary does not say the lossless class held"
log "ok   SIGINT: exit 0"
log "SUMMARY: all checks passed"
