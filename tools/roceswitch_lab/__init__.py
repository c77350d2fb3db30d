"""roceswitch-lab's modules (tools/roceswitch-lab is the program, and imports them from its own
directory).

common: the program's name, the checkout, the tunables and the errors; helptext: usage, --help
and epilog; cli: the argument parser and main; commands: list and run; experiment: the
experiment file; keys: config key paths (vary, --set); policies: --policies; switch: the
roceswitch binary and one run of it; names, series, figures, nic: the figures of a run (from
its stats JSON and time series; nic: the emulated NICs' and collectives'); tables: the
printed tables; outfiles: the CSVs and the JSON; plots: the PNGs; console: progress and
number formats.
"""
