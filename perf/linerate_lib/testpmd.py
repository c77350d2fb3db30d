"""dpdk-testpmd as perf/linerate's ceiling: io forwarding from the same looping pcap to one
net_null port on one forwarding core, with its mbufs packed as roceswitch packs its own
(packed) or its stock pool, printing stats every second; its figure is the mean Tx-pps of
the null port over those samples, the first (start-up) left out."""

import math
import os
import re
import sys

from .common import NAN, log
from .procs import EAL_COMMON, remove_runtime_dir, run_bounded, tail


def testpmd_figures(text):
    """(Tx Mpps or nan, description) from testpmd's output with --stats-period 1."""
    # Each stats block: NIC statistics for port N ... Rx-pps: A ... Tx-pps: B
    rx, tx = [], []
    for port, body in re.findall(r'NIC statistics for port (\d+)\s+#+(.*?)#{20,}', text, re.S):
        m_rx, m_tx = re.search(r'Rx-pps:\s+(\d+)', body), re.search(r'Tx-pps:\s+(\d+)', body)
        if port == '0' and m_rx:
            rx.append(int(m_rx.group(1)))
        if port == '1' and m_tx:
            tx.append(int(m_tx.group(1)))
    tx, rx = tx[1:], rx[1:]  # the first sample covers start-up
    if not tx:
        return NAN, 'no Tx-pps samples in the testpmd output'
    acc = re.search(r'Accumulated forward statistics.*?RX-packets:\s+(\d+).*?TX-packets:\s+(\d+)',
                    text, re.S)
    extra = ' accumulated rx=%s tx=%s' % acc.groups() if acc else ''
    mean_tx = sum(tx) / len(tx) / 1e6
    return mean_tx, ('rx %.3f Mpps, tx %.3f Mpps (mean of %d one-second samples, min %.3f max '
                     '%.3f)%s' % (sum(rx) / max(len(rx), 1) / 1e6, mean_tx, len(tx),
                                  min(tx) / 1e6, max(tx) / 1e6, extra))


def run_testpmd(testpmd, pool, rnd, pcap, duration, work):
    """One testpmd run with the packed or the stock pool; returns its Mpps (nan when it gave
    no figures)."""
    pool_args = ['--mp-alloc=anon', '--no-iova-contig'] if pool == 'packed' else []
    logf = os.path.join(work, 'testpmd-%s-%d.log' % (pool, rnd))
    prefix = 'rs-linerate-pmd-%d' % os.getpid()
    argv = ([testpmd] + EAL_COMMON + ['--file-prefix', prefix,
                                      '--vdev', 'net_pcap0,rx_pcap=%s,infinite_rx=1' % pcap,
                                      '--vdev', 'net_null0,no-rx=1', '--',
                                      '--forward-mode=io', '--nb-cores=1', '--stats-period', '1',
                                      '--total-num-mbufs=65536'] + pool_args)
    # Non-interactive with --stats-period: forwards and prints stats every second until
    # SIGINT, then the accumulated forward statistics. Its stdin is a FIFO nobody writes to
    # (opened read-write here, so it never sees end-of-file), so a read of stdin ("Press enter
    # to exit") blocks instead of ending the run early.
    fifo = os.path.join(work, 'stdin')
    if os.path.exists(fifo):
        os.unlink(fifo)
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDWR)
    rc = None
    try:
        for attempt in (1, 2):
            with open(logf, 'w') as out:
                rc, _ = run_bounded(argv, duration + 2, grace=20, stdin=fd, stdout=out)
            with open(logf, errors='replace') as fh:
                text = fh.read()
            if text.count('NIC statistics for port 1') >= 3:
                break
            log('testpmd stopped early (exit %s), attempt %d; log: %s' % (rc, attempt, logf))
    finally:
        os.close(fd)
        remove_runtime_dir(prefix)
    mpps, line = testpmd_figures(text)
    if math.isnan(mpps):
        print('linerate: testpmd gave no figures (exit %s); its output:\n%s'
              % (rc, tail(logf).rstrip()), file=sys.stderr, flush=True)
    else:
        log('testpmd (%s pool): %s' % (pool, line))
    return mpps

