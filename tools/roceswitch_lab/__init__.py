"""roceswitch-lab's modules (tools/roceswitch-lab is the program, and imports them from its own
directory).

common: the program's name, the checkout, the tunables and the errors; helptext: usage, --help
and epilog; cli: the argument parser and main; commands: list and run; experiment: the
experiment file; keys: config key paths (vary, --set); policies: --policies; switch: the
roceswitch binary and one run of it; names, series, figures, nic: the figures of a run (from
its stats JSON and time series; nic: the emulated NICs' and collectives'); tables: the
printed tables; outfiles: the CSVs and the JSON; plots: the PNGs; console: progress and
number formats. Fabric experiments (a fabric file plus experiment:): fabric (the file, its runs
and seeds), fabric_run (run), fabric_figures (a run's figures, averaged over seeds),
fabric_report (tables and CSVs), fabric_plots (the PNGs), fabric_failover (a cable cut's
failover, moved traffic and goodput dip, from the time series) with fabric_convergence (the
routes' convergence after it and the black hole around it) and fabric_failover_report (their
tables, CSVs and failover.png), fabric_collectives (the collectives' table, CSV and
busbw.png), fabric_fct (completion-time slowdown by message size: its table, fct_by_size.csv and
fct_slowdown.png).
"""
