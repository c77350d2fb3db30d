"""roceswitch-ctl's modules (tools/roceswitch-ctl is the program, and imports them from its own directory).

client: the control socket (newline-delimited JSON, control/runtime/control_api.h) and the errors;
args: the argument types and the operation fields they build; show: the tables a read prints;
runners: the commands that are more than one request (batch, p4, capture, raw); watch: live rates;
commands: the command table and the argument parser built from it.
"""
