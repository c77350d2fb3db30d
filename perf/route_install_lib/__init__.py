"""The parts of perf/route_install, one concept a module: common (its failures, log lines
and figure formatting), cli (the usage, the help and the checks of the command line),
prefixes (the generated routes), frames (perf/linerate's frames and pcap, built with the
standard library), switch (the roceswitch process and what /proc says of it), client (the
control socket: requests, batches encoded as lines, the barrier), measure (one phase of
batches, timed, and the traffic read around it), churn (single-op updates at a rate),
perf_profile (perf record of the control thread, by component), report (tables and JSON),
benchmark (the phases, the checks and the summary) and main (the run and its exit codes).
perf/route_install itself only calls main()."""
