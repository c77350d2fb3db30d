"""The parts of perf/linerate, one concept a module: common (its failure, log line and
figure formatting), workload (the pcap of RoCEv2 frames and the switch configuration that
routes them), procs (child processes, each bounded, and DPDK's runtime directories),
roceswitch (finding the switch, checking a config, running it and reading its stats JSON),
testpmd (dpdk-testpmd io forwarding and its figures), churn (the switch run under route
updates on its control socket) and report (the median round, the table of rounds, the last
lines and the JSON). perf/linerate itself parses the command line and runs the rounds."""
