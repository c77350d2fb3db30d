"""The files a lab run writes besides the switch's own: summary.csv, hosts.csv, collectives.csv,
the series CSVs, and the JSON-safe form of the summary (summary.json, --json)."""

import csv
import json
import math


SUMMARY_FIELDS = ['policy', 'goodput_fraction', 'goodput_gbps', 'ideal_gbps', 'ideal_payload_gbps',
                  'member_share_min', 'member_share_max', 'member_share', 'member_ports',
                  'out_of_order_fraction', 'out_of_order', 'late', 'missing', 'received_packets',
                  'max_queue_bytes', 'peak_queue_bytes', 'drops', 'lossless_drops',
                  'drops_by_reason', 'pfc_frames_sent', 'emulator_realtime', 'worker_cpu_share',
                  'balanced',
                  'elapsed_s', 'wall_s', 'exit_code', 'label', 'error']


# A vary experiment's summary.csv: the run, then the NIC figures (with NICs), the collectives
# (with some), every run's figures and, with experiment.group, the routing figures.
VARY_FIELDS = ['run', 'key', 'value']
NIC_FIELDS = ['senders_goodput_gbps', 'sender_goodput_min', 'sender_goodput_max', 'steady_from_s',
              'steady_to_s', 'steady_goodput_min', 'steady_goodput_max', 'jain_fairness',
              'rate_final_min', 'rate_final_max', 'cnp_sent', 'cnp_received', 'ecn_marked',
              'retransmitted', 'naks_received', 'timeouts', 'bottleneck',
              'bottleneck_median_queue_bytes', 'bottleneck_max_queue_bytes',
              'bottleneck_peak_queue_bytes', 'bottleneck_tx_gbps', 'bottleneck_utilisation']
RUN_FIELDS = ['drops', 'lossless_drops', 'drops_by_reason', 'pfc_frames_sent', 'emulator_realtime',
              'worker_cpu_share', 'balanced', 'elapsed_s', 'wall_s', 'exit_code', 'label', 'error']
VARY_ROUTING_FIELDS = [k for k in SUMMARY_FIELDS if k not in RUN_FIELDS and k != 'policy']

HOST_FIELDS = ['run', 'host', 'cc', 'goodput_gbps', 'goodput_gbps_steady', 'fct_mean_us_steady',
               'messages_steady', 'rate_gbps_final', 'cnp_sent', 'cnp_received', 'ce_received',
               'retransmitted', 'naks_received', 'timeouts', 'acked_bytes', 'messages_done', 'fct_mean_us', 'fct_p50_us', 'fct_p99_us', 'fct_max_us', 'rx_bytes',
               'rx_gbps']
COLLECTIVE_FIELDS = ['run', 'op', 'ranks', 'size_bytes', 'done', 'time_us', 'algbw_gbps',
                     'busbw_gbps', 'algbw_GBps', 'busbw_GBps', 'link_gbps', 'link_payload_gbps',
                     'busbw_link_fraction']


def write_rows_csv(path, fields, rows):
    with open(path, 'w', newline='') as fh:
        w = csv.writer(fh)
        w.writerow(fields)
        for r in rows:
            w.writerow([csv_value(r.get(k)) for k in fields])


def host_rows(runs):
    rows = []
    for r in runs:
        for h in r.get('hosts') or []:
            row = dict(h, run=r['run'], host=h['name'])
            for k in ('mean', 'p50', 'p99', 'max'):
                row['fct_%s_us' % k] = (h.get('fct_us') or {}).get(k)
            rows.append(row)
    return rows


def collective_rows(runs):
    return [dict(c, run=r['run']) for r in runs for c in r.get('collectives') or []]


def csv_value(v):
    if isinstance(v, float):
        return '%.6g' % v
    if isinstance(v, (list, dict)):
        return json.dumps(v, separators=(',', ':'))
    return '' if v is None else v


def write_summary_csv(path, runs):
    with open(path, 'w', newline='') as fh:
        w = csv.writer(fh)
        w.writerow(SUMMARY_FIELDS)
        for r in runs:
            w.writerow([csv_value(r.get(k)) for k in SUMMARY_FIELDS])


def write_series_csv(path, cols, rows):
    with open(path, 'w', newline='') as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        for row in rows:
            w.writerow(['' if v is None else ('%.6g' % v if isinstance(v, float) else v) for v in row])


def json_clean(x):
    if isinstance(x, float):
        return None if math.isnan(x) or math.isinf(x) else round(x, 6)
    if isinstance(x, dict):
        return {k: json_clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [json_clean(v) for v in x]
    return x
