"""roceswitch-lab's usage lines, its --help text (the experiment file, keys, policies, every
figure, the tables and the output files) and its epilog (the exit status)."""


USAGE = '''roceswitch-lab run EXPERIMENT.yaml --policies P1,P2,... [--duration S] [--out DIR]
                      [--json] [--build DIR] [--seed N] [--set KEY=VALUE ...]
       roceswitch-lab run EXPERIMENT.yaml [--vary KEY] [--values V1,V2,...] [options]
       roceswitch-lab run FABRIC_EXPERIMENT.yaml [--runs L1,L2,... | --policies P1,P2,...]
                      [--seeds N1,N2,...] [--duration-ms MS] [options]
       roceswitch-lab list [--build DIR]
       roceswitch-lab --help'''

DESCRIPTION = '''\
An experiment runner for teaching and research: one experiment, one run of the switch per
routing policy (or per value of another configuration key), one table to compare them.

  roceswitch-lab run experiments/uplink_skew.yaml --policies ecmp,spray,drill,per_packet_quality
  roceswitch-lab run experiments/incast_dcqcn.yaml          # cc: dcqcn vs none on the NICs
  roceswitch-lab run experiments/allreduce_ring8.yaml       # AllReduce busbw, 64 KiB .. 16 MiB
  roceswitch-lab run experiments/leafspine_permutation.yaml # a fabric: 6 runs x 4 permutations
  roceswitch-lab run experiments/fabric_incast.yaml         # a fabric: PFC's pause tree, DCQCN
  roceswitch-lab run experiments/fabric_link_failure.yaml   # a fabric: a cable cut, per policy,
                                                            # routes converging after it or not
  roceswitch-lab run experiments/fabric_allreduce.yaml      # a fabric: AllReduce rank placement
  roceswitch-lab run experiments/fabric_fct.yaml            # a fabric: FCT slowdown by flow size

Each run is BUILD/app/roceswitch on emulated hosts only (no physical NIC, no hugepages):
  roceswitch --no-pci --file-prefix lab<pid>r<run> -l 0-1 -- --config RUN.yaml --duration D
             --quiet --stats-json RUN.json --series-ms M --series RUN.series.jsonl
(-l 0-1: the main lcore and ONE worker, which also runs every emulated host and its RoCE
NIC, so link rates must stay low enough for one CPU: the experiments' comments say what they
chose), bounded by a timeout of D + 60 s. Progress goes to standard output (standard error
with --json): a line as each run starts and ends and, on a terminal, a live elapsed/ETA line.

OPTIONS (run)
  --policies P1,P2,...  the runs: one per routing policy, in this order (POLICIES below); needs
                        experiment.group
  --vary KEY            the runs set KEY (a path into the config: KEYS below), one per value;
                        default: experiment.vary.key
  --values V1,V2,...    the values of KEY, one run each, in this order (comma-separated YAML
                        scalars: 65536, dcqcn, true); default: experiment.vary.values
  --set KEY=VALUE       set KEY to VALUE in every run (repeatable), e.g.
                        --set 'collectives[0].slices=8' or --set 'ports[*].host.nic.mtu=4096'
  --duration S          seconds per run (default: experiment.duration_s)
  --series-ms MS        time-series sample period (default: experiment.series_ms)
  --out DIR             where every file goes (default ./lab-NAME-YYYYmmdd-HHMMSS)
  --json                print the figures as JSON on stdout; progress goes to stderr
  --build DIR           the build whose app/roceswitch runs (default: this checkout's build/)
  --seed N              set switch.seed in every run (ECMP's hash, the random policies' draws;
                        a fabric experiment: fabric.seed)
  --duration-ms MS      a fabric experiment: virtual ms per run (default:
                        experiment.duration_ms; --duration S is the same in seconds)
  --runs L1,L2,...      a fabric experiment: only these of experiment.runs (by label), in
                        this order
  --seeds N1,N2,...     a fabric experiment: repeat every run once per seed, setting
                        experiment.seed_key (default: experiment.seeds)
  One invocation varies one thing: --policies, or a key (--vary/--values/experiment.vary).
  `roceswitch-lab list [--build DIR]` prints the registered policies with their parameters
  (roceswitch -- --help-policies).

EXPERIMENT FILE
  A normal roceswitch configuration (README.md, "Configuration") plus one top-level section,
  `experiment:`, which the lab removes before handing the rest to roceswitch:

    experiment:
      name: uplink_skew        # for titles and the default --out (default: the file's name)
      duration_s: 10           # seconds per run (default 10; --duration overrides)
      group: uplinks           # the nexthop_groups[] entry whose policy each run replaces
                               # (needed by --policies; optional with vary:)
      receivers: remote        # whose received flows are the goodput: a list of port names
                               # ([u0, u1]) or one name: a receiver group (ports[].host.receiver)
                               # or a port (needed with group: for --policies; else optional)
      ideal_gbps: 3.8          # optional; default: the offered rates (L2 wire Gb/s) of the
                               # flows sent to the receivers' IPs (each sender capped at its
                               # own link), capped by the receivers' total link capacity
      series_ms: 10            # time-series sample period (default 10)
      vary:                    # instead of policies: one run per value of a config key
        key: ports[*].host.nic.cc
        values: [dcqcn, none]
      bottleneck: h0           # optional: the port whose egress queue the NIC figures and
                               # plots show (default: the port with the deepest queue peak)

  For each run the lab writes RUN.yaml: the file without `experiment:`, with
  nexthop_groups[group].policy set to the run's policy (and the group's policy_by_tc, if
  any, removed so the policy applies to every class), or with the varied key set to the run's
  value; then every --set and, with --seed, switch.seed. Every other key is passed through as
  written (the YAML is re-emitted node by node, scalars untouched), and roceswitch
  --check-config checks each RUN.yaml before anything runs.

KEYS (vary.key, --vary, --set)
  A path into the configuration: mapping keys joined by dots, list elements by [i], and [*]
  for every element of a list: collectives[0].size_bytes, switch.seed,
  ports[*].host.nic.cc (every port whose host has a nic: map; ports without one are skipped).
  The last key is added where it is missing; a path that reaches nothing is an error (exit 2).
  Values keep their YAML types (65536 is a number, dcqcn a string).

POLICIES
  --policies is a comma-separated list of routing policy names, each optionally with
  parameters: NAME:param=value,param=value. A token with `=` and no `:` continues the
  parameters of the policy before it, so
    --policies ecmp,flowlet_quality:idle_time_us=64,flow_table_size=1024,spray
  runs ecmp, flowlet_quality {idle_time_us: 64, flow_table_size: 1024} and spray. Names and
  parameter names are checked against the binary (`roceswitch-lab list` shows them with
  their ranges); values are checked by roceswitch --check-config. A policy may appear more
  than once (e.g. with different parameters).

FIGURES (per run; the table, --json and summary.csv)
  With experiment.group (routing experiments):
  goodput_fraction    payload Gb/s received by the receivers (sum over their received flows of
                      payload bytes x 8 / the time from the flow's first to its last arrival)
                      over the ideal payload Gb/s (ideal_gbps x the payload share of the wire
                      bytes received: Ethernet framing, IPv4, UDP, BTH and ICRC cost the same
                      share on every policy)
  member_share        share of the group's packets each member got (the group's members[]
                      packets in the stats; the table shows the smallest and largest share;
                      1/N each is perfect balance)
  out_of_order_fraction
                      sum of out_of_order / sum of packets received, over the receivers'
                      flows: out_of_order counts arrivals whose PSN is beyond the next
                      expected one (a gap opened: a go-back-N NIC would NAK and the sender
                      retransmit). late (overtaken arrivals) and missing (PSNs never
                      received) are reported beside it
  max_queue_bytes     the deepest egress backlog (all 8 queues) of any group member port over
                      the time-series samples (peak_queue_bytes: the switch's own per-queue
                      peak, between samples too)
  Every run:
  drops               packets dropped during the run, every reason except shutdown_flush
                      (packets still queued when the run stopped, which are not lost
                      traffic); drops_by_reason and lossless_drops (drops on PFC priorities)
                      are in --json and summary.csv
  pfc_frames_sent     PFC frames the switch sent (pauses it asked of its senders; PFC in
                      the table)
  emulator_realtime   the emulated hosts run inside the worker: the lowest ratio, over senders
                      that received no PFC, of the rate they sent to the rate they offer. Below
                      0.93 the worker could not keep up in real time (a busy machine) and every
                      policy's goodput is understated: the lab says so (fixed-rate flows only:
                      a NIC's rate is its congestion control's)
  worker_cpu_share    the share of the run the switch's worker thread (a busy poller: always
                      runnable) spent on a CPU rather than waiting for one, from the kernel's
                      /proc/PID/task/TID/schedstat (CPU in the table). ~100% on a quiet
                      machine; under 90% other processes took the CPU for long enough that the
                      emulated hosts lost real time, and the figures describe the machine more
                      than the policy: the lab warns
  With emulated RoCE NICs (ports[].host.nic, host.qps; docs/emulated-nic.md):
  hosts               per host with a NIC: {name, goodput_gbps (its requester QPs' acked
                      payload over the time each took, summed), rate_gbps_final (their DCQCN
                      rates at the end, summed; null for a host that only answers),
                      cnp_sent (as a receiver), cnp_received, retransmitted, naks_received,
                      timeouts, messages_done, fct_us (message completion, post to last ACK,
                      over its requester QPs: mean/p50/p99/max and cdf, the histogram's steps
                      [[upper edge us, messages], ...]), goodput_gbps_steady,
                      messages_steady, fct_mean_us_steady (in the steady window below, from
                      the series), qps: [per QP]}
  senders_goodput_gbps
                      the hosts that send (QPs not part of a collective): their acknowledged
                      payload over the run (sender_goodput_min/max: the hosts' goodput_gbps)
  steady_from_s, steady_to_s, steady_goodput_min/max, jain_fairness
                      the steady window, from the last sender's first delivered byte + 0.5 s
                      to the end, and each sender's payload Gb/s in it (hosts[].
                      goodput_gbps_steady; from the series) with Jain's fairness index
                      (sum x)^2 / (n sum x^2), 1 when even (over the whole run without one)
  rate_final_min/max  the senders' DCQCN rates at the end
  cnp_sent, cnp_received, retransmitted, ecn_marked
                      summed over the NICs (ecn_marked: CE marks by the switch, all queues)
  bottleneck, bottleneck_median_queue_bytes, bottleneck_max_queue_bytes,
  bottleneck_peak_queue_bytes, bottleneck_utilisation
                      the bottleneck port (experiment.bottleneck, else the deepest queue
                      peak), its median backlog over the steady window's samples, its deepest
                      over all samples and the switch's own peak, and its wire Gb/s over its
                      link rate (a saturated bottleneck near 1.0 says the emulator kept real
                      time)
  collectives         per collective (top-level collectives:): {op, size_bytes, time_us,
                      algbw_gbps, busbw_gbps, algbw_GBps, busbw_GBps, ranks, done}, nccl-tests'
                      figures (algbw = size / time; busbw = algbw x 2(n-1)/n for allreduce,
                      (n-1)/n for the others), with link_gbps (its hosts' slowest link in the
                      run), link_payload_gbps (that at the NICs' MTU: 1024 / (1024 + 82)) and
                      busbw_link_fraction (busbw over it: "of link" in the table)

FABRIC EXPERIMENTS
  A file with a top-level `fabric:` is a fabric experiment: a fabric file (docs/fabric.md:
  leaf_spine or fat_tree, switch_defaults, hosts.nic, traffic, collectives) plus `experiment:`,
  which the lab removes. roceswitch runs each run's file on a virtual clock, deterministic (the
  same file gives the same stats, fabric.wall apart), as
    roceswitch --no-pci --file-prefix lab<pid>f<n> -- --config RUN.yaml --duration D --quiet
               --stats-json RUN.json --series-ms M --series RUN.series.jsonl
  (no -m: it sizes the heap for the switches itself), bounded by 30 s + 5000 x D of wall time.

    experiment:
      name: leafspine_permutation   # titles and the default --out (default: the file's name)
      duration_ms: 3                # virtual ms per run (default: fabric.duration_ms, else 5)
      series_ms: 0.1                # the time series' period, virtual ms (default 0.1; >= 0.01)
      runs:                         # one run each (default: one run of the file as written)
        - {label: ecmp, set: {fabric.policy: ecmp}}
        - {label: spray_gbn, set: {fabric.policy: spray, hosts.nic.reorder: go_back_n}}
        - {label: dcqcn, set: {hosts.nic.cc: dcqcn, hosts.nic.dcqcn.min_time_between_cnps: 4}}
      seeds: [1, 2, 3, 4]           # optional: every run once per seed, its figures averaged
      seed_key: traffic[0].seed     # the key each seed sets (default fabric.seed)
      victims: [leaf3.h2]           # optional: hosts receiving victim traffic ("victim Gb/s")
      goodput_lines:                # optional: reference lines on goodput.png
        - {fraction: 0.632, label: "ECMP hash-collision expectation (1 - 1/e)"}
      goodput_window_ms: 0.1        # a cable cut's goodput dip: trailing windows (default 0.1)

  runs[].set keys are KEYS (below) into the fabric file: fabric.policy (a name, or {name: drill,
  ...}), hosts.nic.reorder (placement|go_back_n), hosts.nic.cc (dcqcn|none), hosts.nic.mtu,
  traffic[0].seed, fabric.leaf_spine.uplink_gbps, fabric.convergence_ms (ms, or never: the
  routes' recomputation after a cable event) ...; a key missing under a mapping is added (the
  switch's default otherwise: fabric.convergence_ms needs no line in the file), one that
  reaches nothing (a missing mapping or list index before the last key) is an error
  (file:line). A run's file is the file without experiment:, with its set: keys, then seed_key
  = the seed, then every --set and, with --seed, fabric.seed; roceswitch --check-config checks
  every one before anything runs. --policies P1,P2 replaces the runs by one per policy (setting
  fabric.policy), --vary KEY --values V1,V2 by one per value; --runs picks some of them.
  Relative files in the fabric file (traffic[].cdf_file, fabric.switches[].config) are taken
  from the experiment file's directory (the run's file names them absolute).
  Figures per run (mean over its seeds; with seeds, min and max of goodput and victim Gb/s):
  goodput_gbps, ideal_gbps, goodput_fraction
                      the stats' hosts.goodput: the payload the NIC hosts received over the run,
                      against the payload rate of the links of the hosts that receive
  victim_gbps         with experiment.victims: the payload those hosts received (Gb/s)
  retransmitted, out_of_order, missing_psns, cnp_received, messages_done
                      summed over the NIC hosts (hosts.list[])
  pfc_frames_sent     PFC frames sent, summed over every switch port (ports[].pfc.frames_sent)
  pause_us            the time ports asserted PFC pause towards their neighbour, summed over
                      ports and priorities (ports[].pfc.pg[].assert_ns); per port: pauses
  lossless_drops, lossless_drops_before_queue, drops
                      summed over the switches: every lossless-priority packet lost, at a
                      lossless queue or before any (lossless_drops_before_queue, a part of
                      it: black-holed by a group with no live member, say; a frame a down link
                      was delivering is never parsed and has no class); drops: every reason
                      but shutdown_flush, mac_control_consumed, local_delivered
  balanced            the fabric's books (fabric.totals.balanced; with seeds: all of them)
  sim_ms, wall_s, slowdown, frames_per_wall_s
                      virtual time, and fabric.wall: the simulation loop's real seconds (the
                      start-up excluded: process_wall_s includes it), wall / virtual, frames
                      the switches received per wall second
  pauses, cables, hosts
                      per switch port that asserted pause {port: SWITCH.PORT, peer: whom it
                      paused, assert_ns, xoff_sent}; per cable direction {direction A>B, gbps
                      (mean over the run), lost}; per NIC host {name, rx_goodput_gbps,
                      tx_acked_gbps, retransmitted, out_of_order, fct_us}
  With a cable cut (fabric.cable_events: the first `down`, and that cable's next `up`):
  cut_cable, cut_ms, up_ms
                      the cable (A-B, by its ends), when it went down and came back (none: not
                      within the run)
  failover_us         from the cut until neither end's port transmits: the end of the last
                      series interval in which its tx_bytes grew (before up_ms), the later end;
                      0 when both stopped by the cut's own sample (printed "<= the series'
                      period": run with series_ms 0.01); per end: ends[].tx_stop_us and
                      link_down_seen_us (the first sample showing its link down)
  lost_link_down      frames sent into the cable while down (cables[].directions[]): 0 when
                      both ends stopped at the cut
  link_down_drops, blackholed
                      drops of reason link_down (queued on a port when its link went: on a
                      lossless queue a lossless drop; or arriving on it: never parsed, no
                      class) and no_live_member (a group with every member down: its switch
                      has no other way, and the other switches keep sending it traffic until
                      the routes converge; those of a lossless priority are lossless drops,
                      counted in lossless_drops_before_queue)
  convergence_ms, converged_ms, switches_changed, routes_changed, routes_withdrawn,
  routing_updates
                      the routes after the cut (stats fabric.routing, docs/fabric.md "Routes
                      after a cable event"): the setting (ms, or "never"), the virtual ms of
                      the first update at or after the cut (null: never, or not within the
                      run), its switches, host routes moved to another group and withdrawn;
                      routing_updates: every update of the run [{at_us, switches, routes,
                      withdrawn, errors}] (a failed one is printed as a warning)
  blackholed_before, blackholed_after, blackholed_split, hole_end_us, hole_switches,
  hole_lost_bytes_before, hole_lost_bytes_after
                      the black hole around the convergence. The series has no drop
                      counters: a switch's bytes in less bytes out less its queues' growth per
                      interval is what it lost (dropped for any reason, or consumed: PFC
                      frames); over the switches with no_live_member drops (hole_switches),
                      those bytes before and after the convergence, the black-holed count
                      split there (split "exact": nothing lost after it; "bytes": shared in
                      proportion, printed with ~; null without a convergence in the run) and
                      hole_end_us: from the cut to the end of the last interval in which they
                      lost anything
  group_failovers, steered_away, moved_gbps, survivors_gain_gbps, members
                      over the groups with a port of the cable as a member (stats switches[].
                      groups[], series members[]): their failovers; their policy's
                      steered_away (ecmp: packets of flows whose member died, sent elsewhere;
                      flowlet_*: flowlets moved; none for per-packet policies); the dead
                      members' Gb/s before the cut (what had to move) and the other members'
                      gain while down; members: {switch, group, then, port, dead,
                      before_gbps, down_gbps} (before: the second half of the time before the
                      cut; down: from the cut to up_ms or the end; then: the groups converged
                      routes moved the group's routes to, whose bytes on the port count too;
                      groups of one member are not in the series)
  qps_receiving, qps_slower
                      the NICs' receiving QPs (series hosts[].qps[]) busy before the cut, and
                      those whose goodput while down was > 10 % below theirs before
  goodput_before_gbps, goodput_down_gbps, goodput_min_gbps, goodput_min_fraction,
  goodput_min_before_gbps, recover_us
                      the fabric's received goodput per series interval (the NICs' responder
                      QPs' rx_bytes: payload; without NICs the host ports' tx_bytes: wire):
                      the mean before the cut and while down, the lowest over trailing windows
                      of goodput_window_ms after the cut (and before it, to compare), and the
                      time from the cut until the windowed goodput stays >= 90 % of before to
                      the end of the run (null: never)
  With collectives (collectives:):
  collectives         per collective {op, ranks, hosts, size_bytes, done, time_us, algbw_gbps,
                      busbw_gbps, link_gbps, link_payload_gbps, busbw_link_fraction} (stats
                      collectives[]; the link: the ranks' slowest, at their NICs' MTU)
  collective_done, collective_time_us, algbw_gbps, busbw_gbps, busbw_link_fraction
                      over the run's collectives: all done, the longest time, the smallest
                      algbw and busbw (with seeds: means; busbw_gbps_min/max over the seeds)
  With NIC messages (stats fct_by_size; of several sizes with a cdf pattern, docs/fabric.md):
  fct_by_size         per power-of-two size class [2^k, 2^(k+1)) of message bytes {size_class,
                      bytes_min, bytes_max, bytes_mid (geometric middle), messages, fct_p50_us,
                      fct_p99_us, slowdown_p50, slowdown_p99, slowdown_mean}: completion time
                      and its slowdown (over the message's unloaded time), merged over the NIC
                      hosts as roceswitch does (their histograms' steps summed, a percentile the
                      upper edge of the bucket reaching it: within 25 %); with seeds, every
                      seed's steps merged too (messages summed)
  fct_not_done        messages posted and not completed by the end (in no class; summed over
                      the seeds, as the classes' messages)
  Printed: a row per run (run, Gb/s, of ideal, min, max, victim Gb/s, resent, out-of-order,
  PFC, pause ms, lossless drops, books, sim ms, wall s, slowdown, frames/wall s), then the pause
  tree: a row per port that paused (the longest 16), its microseconds per run; with a cable cut
  the link-failure table (a row per run: cut and up ms, failover us, lost in cable, link_down
  drops, black-holed, converged ms, steered, moved Gb/s, survivors +Gb/s, QPs slower, goodput
  before, min before, min after, min/before, while down, recover us, lossless drops) and the
  routes after the cut (a row per run: convergence ms, converged ms, switches, routes changed,
  withdrawn, black-holed, before and after the convergence, hole ends us, later updates); with
  collectives a
  row per run and collective (op, ranks, size, time us, algbw and busbw GB/s, busbw Gb/s, of
  link, done, resent, out-of-order, PFC); with messages of several size classes the slowdown
  table: a row per size class, per run its messages and slowdown p50 and p99, and a last row of
  the messages not done.
  Written (in --out DIR): summary.csv and summary.json (a row / object per run, with its seeds'
  figures under "seeds"), seeds.csv (per run and seed), hosts.csv, pauses.csv, cables.csv (per
  run, seed and host, port or cable direction); with a cable cut its columns in summary.csv
  and seeds.csv, members.csv (per run, seed and member) and goodput_series.csv (per run, seed
  and interval: t_ms, goodput_gbps, goodput_window_gbps); with collectives their columns and
  collectives.csv (per run, seed and collective); with NIC messages fct_by_size.csv (per run,
  seed and size class, the fct_by_size figures; with seeds also seed "all", the merge); per
  run and seed NN-RUN[-seedN].yaml, .json (roceswitch's stats), .series.jsonl, .log, and the
  plots:
  goodput.png                             a bar per run: goodput / ideal (whiskers: min..max
                                          over the seeds), the goodput_lines; beside it the
                                          victims' Gb/s with experiment.victims
  pause_tree.png                          per switch port that asserted pause (the longest 40,
                                          "port > whom it paused"), its pause time in each run
  cables.png                              each cable direction's mean Gb/s, a marker per run
  host_goodput.png                        the NIC hosts' received goodput sorted, a line per run
                                          (with seeds: rank by rank, averaged)
  failover.png                            with a cable cut, a panel per run (first seed): the
                                          received goodput per interval and windowed, the cut
                                          (red), the routes' convergences (purple), the return
                                          (green), 90 % of before (dotted)
  busbw.png                               with collectives, a bar per run: its slowest
                                          collective's busbw (Gb/s, whiskers min..max over the
                                          seeds), coloured by fabric.policy; the link's payload
                                          rate dashed
  fct_slowdown.png                        with messages of several size classes, HPCC's plot:
                                          slowdown (log) against message size (log, a class at
                                          its geometric middle), p50 and p99 panels, a line per
                                          run (a class of < 10 messages hollow)
  With --json, stdout holds summary.json: {"experiment", "kind": "fabric", "duration_ms",
  "seeds", "seed_key", "victims", "runs": [{"run", "label", "set", "goodput_fraction", ...,
  "pauses", "cables", "seeds": [{"seed", "files", "goodput_fraction", ..., "hosts"}]}]}.

TABLES (printed at the end)
  --policies          a row per policy: goodput, share min/max, out-of-order, late, missing,
                      max queue, drops, PFC, CPU
  vary: with experiment.group the same, a row per run; with NICs that send, a row per run
                      (the senders' goodput, steady min/max and Jain, DCQCN rates at the end,
                      CNPs, ECN marks, PFC, the bottleneck's queue p50/max, resends, drops,
                      util, CPU), then a row per run and NIC host (goodput, steady, rate at the
                      end, CNPs sent and received, resends, NAKs, timeouts, messages, message
                      completion p50/p99/max and the steady window's mean, in ms); with
                      collectives, nccl-tests' table: size (B), count (elements, as float),
                      type, redop, root, time (us), algbw and busbw (GB/s, 4 decimals: the
                      lab's links are slow), then busbw as a share of the link's payload rate,
                      PFC, drops, CPU, and "# Avg bus bandwidth" as nccl-tests ends

OUTPUT (in --out DIR, default ./lab-NAME-YYYYmmdd-HHMMSS)
  summary.csv, summary.json               one row / object per run
  NN-RUN.yaml, .json, .series.jsonl       each run's config, stats JSON and raw time series
                                          (RUN: the policy, or KEY=VALUE; the series' hosts[]
                                          carry each NIC's qps[]: rate_gbps, acked_bytes,
                                          rx_bytes, CNPs, messages_done, fct_mean_us)
  NN-RUN.series.csv                       each run's series: per member port tx Gb/s and
                                          queue bytes, per received flow goodput Gb/s; with
                                          NICs the bottleneck's queue bytes and per QP its
                                          DCQCN rate and goodput (the payload its responder
                                          took in) Gb/s
  NN-RUN.log                              roceswitch's output
  throughput_per_member.png               one subplot per run: each member port's tx Gb/s
  queue_depth_per_uplink.png              one subplot per run: each member port's backlog
  flow_goodput.png                        one subplot per run: each received flow's goodput
                                          over time (or its mean, as bars, when the series has
                                          no per-flow data)
  (these three with experiment.group)
  hosts.csv                               with NICs: one row per run and host
  rates_and_queue.png                     with QPs that send (not a collective's): per run,
                                          each QP's goodput (solid) and DCQCN rate (dashed)
                                          over time, and under them the bottleneck's queue
                                          with the ECN Kmin/Kmax and PFC lines: DCQCN's
                                          convergence plot
  fct_cdf.png                             message completion time CDFs of those QPs (of their
                                          hosts past 8 QPs a run, of the run past 8 hosts)
  collectives.csv, busbw_vs_size.png      with collectives: one row per run and collective;
                                          busbw (and algbw) in GB/s against the size
  With --json, stdout holds only {"runs": [{"run", "policy" or "value", "goodput_fraction",
  "out_of_order_fraction", "max_queue_bytes", "drops", "member_share", "hosts",
  "collectives", ...}], ...}.
'''

EPILOG = '''\
Exit status: 0 when every run completed, 1 when a run failed (the others still run and are
reported), 2 for bad usage or a bad experiment file (nothing was run). A roceswitch killed by a
signal before it wrote its stats is run once more (its log kept as NN-RUN.crashed.log, the run's
"crashed" in --json says so). Without a build: bash tools/build.sh build.'''
