#!/usr/bin/python3
"""Tests of tools/roce-perftest with no NIC and no ssh: reading a copy of /sys/class/infiniband
(fixtures/sysfs/before and after, hand-made), the deltas, perftest's result tables (fixtures/*.txt,
hand-written in perftest 4.5's format, not captured from hardware), the table and --json of
--replay, --dry-run, the errors, and the whole run on stand-ins: a fake ib_write_bw that prints a
fixture and turns the counter tree into `after`, and a fake ssh that runs the command here. What
only real RoCE NICs can show (perftest's figures, the NICs' counters moving) is not tested."""

import importlib.machinery
import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.realpath(__file__))
TOOL = os.path.join(os.path.dirname(os.path.dirname(HERE)), 'tools', 'roce-perftest')
FIX = os.path.join(HERE, 'fixtures')
BEFORE, AFTER = os.path.join(FIX, 'sysfs', 'before'), os.path.join(FIX, 'sysfs', 'after')


def load_tool():
    sys.dont_write_bytecode = True  # no __pycache__ beside tools/roce-perftest
    loader = importlib.machinery.SourceFileLoader('roce_perftest', TOOL)
    mod = importlib.util.module_from_spec(importlib.util.spec_from_loader('roce_perftest', loader))
    loader.exec_module(mod)
    return mod


rp = load_tool()


def fixture(name):
    with open(os.path.join(FIX, name)) as f:
        return f.read()


def cli(*args, env=None):
    return subprocess.run([sys.executable, TOOL] + list(args), capture_output=True, text=True, timeout=60,
                          env=env)


REPLAY = ['--replay', BEFORE, AFTER, os.path.join(FIX, 'ib_write_bw.txt'), '--device', 'mlx5_0',
          '--client-device', 'mlx5_1', '--server', 'lab-a', '--client', 'lab-b']


class Counters(unittest.TestCase):
    def test_reads_every_counter_but_lifespan(self):
        v, w = rp.read_counters(BEFORE, 'mlx5_0', 1, 'server lab-a')
        self.assertEqual(w, [])
        self.assertEqual(v['hw_counters/np_ecn_marked_roce_packets'], 1520)
        self.assertEqual(v['hw_counters/np_cnp_sent'], 380)
        self.assertEqual(v['counters/port_rcv_packets'], 120034)
        self.assertNotIn('hw_counters/lifespan', v)
        self.assertEqual(len(v), 14)

    def test_garbage_file_is_skipped_with_a_warning(self):
        v, w = rp.read_counters(BEFORE, 'mlx5_1', 1, 'client lab-b')
        self.assertIsNone(v['counters/VL15_dropped'])
        self.assertEqual(w, ["client lab-b: skipped %s/mlx5_1/ports/1/counters/VL15_dropped: "
                             "not a counter value: 'N/A'" % BEFORE])
        self.assertEqual(v['hw_counters/rp_cnp_ignored'], 500)

    def test_unreadable_file_is_skipped_with_why(self):
        with tempfile.TemporaryDirectory() as d:
            shutil.copytree(BEFORE, d, dirs_exist_ok=True)
            os.mkdir(os.path.join(d, 'mlx5_0', 'ports', '1', 'hw_counters', 'weird'))  # open() fails
            v, w = rp.read_counters(d, 'mlx5_0', 1, 'server x')
            self.assertIsNone(v['hw_counters/weird'])
            self.assertEqual(len(w), 1)
            self.assertIn('server x: skipped %s/mlx5_0/ports/1/hw_counters/weird: Is a directory' % d, w[0])

    def test_missing_device_and_port_are_errors(self):
        with self.assertRaises(rp.Fail) as e:
            rp.read_counters(BEFORE, 'mlx5_9', 1, 'server lab-a')
        self.assertEqual(str(e.exception), 'server lab-a: no RDMA device mlx5_9: %s/mlx5_9 does not exist '
                                           '(devices there: mlx5_0, mlx5_1)' % BEFORE)
        with self.assertRaises(rp.Fail) as e:
            rp.read_counters(BEFORE, 'mlx5_0', 2, 'client lab-b')
        self.assertEqual(str(e.exception), 'client lab-b: mlx5_0 has no port 2: %s/mlx5_0/ports/2 does not '
                                           'exist (ports: 1)' % BEFORE)

    def test_no_readable_counter_is_an_error(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, 'rxe0', 'ports', '1', 'hw_counters'))
            with open(os.path.join(d, 'rxe0', 'ports', '1', 'hw_counters', 'x'), 'w') as f:
                f.write('oops\n')
            with self.assertRaisesRegex(rp.Fail, r'^h: no readable counter in .*/rxe0/ports/1/hw_counters'):
                rp.read_counters(d, 'rxe0', 1, 'h')

    def test_deltas(self):
        s = rp.deltas(rp.read_counters(BEFORE, 'mlx5_0', 1)[0], rp.read_counters(AFTER, 'mlx5_0', 1)[0])
        self.assertEqual(s['hw_counters/np_ecn_marked_roce_packets'], 48213)
        self.assertEqual(s['hw_counters/np_cnp_sent'], 12007)
        self.assertEqual(s['hw_counters/rx_write_requests'], 1083744)
        self.assertEqual(s['counters/port_rcv_packets'], 17367904)
        self.assertEqual(s['hw_counters/out_of_sequence'], 0)
        c = rp.deltas(rp.read_counters(BEFORE, 'mlx5_1', 1)[0], rp.read_counters(AFTER, 'mlx5_1', 1)[0])
        self.assertEqual(c['hw_counters/rp_cnp_handled'], 12007)
        self.assertEqual(c['hw_counters/rp_cnp_ignored'], 'reset')          # 500 -> 3
        self.assertIsNone(c['hw_counters/resp_local_length_error'])        # only in after
        self.assertIsNone(c['counters/VL15_dropped'])                      # unreadable
        self.assertEqual(rp.deltas({'a': 2 ** 32 - 1}, {'a': 5}), {'a': 'reset'})  # a wrap looks the same

    def test_remote_script_reads_what_the_local_reader_reads(self):
        for dev in ('mlx5_0', 'mlx5_1'):
            script = rp.REMOTE_READ % {'root': AFTER, 'dev': dev, 'port': 1}
            out = subprocess.run(['sh', '-c', script], capture_output=True, text=True, check=True).stdout
            self.assertEqual(rp.parse_remote_dump(out, 'h', AFTER, dev, 1),
                             rp.read_counters(AFTER, dev, 1, 'h'))
        out = subprocess.run(['sh', '-c', rp.REMOTE_READ % {'root': AFTER, 'dev': 'mlx5_9', 'port': 1}],
                             capture_output=True, text=True).stdout
        with self.assertRaises(rp.Fail) as e:
            rp.parse_remote_dump(out, 'h', AFTER, 'mlx5_9', 1)
        self.assertEqual(str(e.exception), 'h: no RDMA device mlx5_9: %s/mlx5_9 does not exist '
                                           '(devices there: mlx5_0, mlx5_1)' % AFTER)


class Perftest(unittest.TestCase):
    def test_write_bw(self):
        self.assertEqual(rp.parse_perftest(fixture('ib_write_bw.txt'), 'bw'),
                         {'bytes': 65536, 'iterations': 1083744, 'bw_peak_gbps': 0.0, 'bw_avg_gbps': 94.70,
                          'msg_rate_mpps': 0.180624})

    def test_send_bw(self):
        r = rp.parse_perftest(fixture('ib_send_bw.txt'), 'bw')
        self.assertEqual((r['bw_avg_gbps'], r['iterations'], r['msg_rate_mpps']), (94.31, 1079310, 0.179885))

    def test_write_lat(self):
        self.assertEqual(rp.parse_perftest(fixture('ib_write_lat.txt'), 'lat'),
                         {'bytes': 2, 'iterations': 10000, 't_min_us': 1.56, 't_max_us': 8.93,
                          't_typical_us': 1.62, 't_avg_us': 1.64, 't_stdev_us': 0.07, 't_p99_us': 1.84,
                          't_p99_9_us': 4.12})

    def test_latency_by_duration_and_mib_per_second(self):
        dur = (' #bytes        #iterations       t_avg[usec]    tps average\n'
               ' 2             4512330           1.65           302822.13\n')
        self.assertEqual(rp.parse_perftest(dur, 'lat'),
                         {'bytes': 2, 'iterations': 4512330, 't_avg_us': 1.65, 'tps_average': 302822.13})
        mib = (' #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n'
               ' 65536      5000             11290.12            11289.86		   0.180638\n')
        self.assertAlmostEqual(rp.parse_perftest(mib, 'bw')['bw_avg_gbps'], 94.7065, places=3)

    def test_wrong_table_and_no_table(self):
        with self.assertRaisesRegex(rp.Fail, r'^client lab-b: ib_write_lat: its result table is not a latency '
                                             r'table: #bytes +#iterations +BW peak\[Gb/sec\]'):
            rp.parse_perftest(fixture('ib_write_bw.txt'), 'lat', 'client lab-b: ib_write_lat')
        out = (" RDMA_Write BW Test\n Couldn't connect to lab-a:18515\n"
               " Unable to open file descriptor for socket connection\n")
        with self.assertRaises(rp.Fail) as e:
            rp.parse_perftest(out, 'bw', 'client lab-b: ib_write_bw')
        self.assertEqual(str(e.exception), "client lab-b: ib_write_bw printed no result table; its last lines: "
                         "RDMA_Write BW Test | Couldn't connect to lab-a:18515 | Unable to open file "
                         "descriptor for socket connection")

    def test_perftest_commands(self):
        a = rp.parse_args(['--server', 'a', '--client', 'b', '--device', 'mlx5_0', '--tclass', '104'])
        self.assertEqual(rp.perftest_argv(a, 'mlx5_0', '10.0.1.1'),
                         ['ib_write_bw', '-d', 'mlx5_0', '-i', '1', '-x', '3', '--tclass=104', '-s', '65536',
                          '-p', '18515', '-F', '-D', '10', '--report_gbits', '10.0.1.1'])
        a = rp.parse_args(['--server', 'a', '--client', 'b', '--device', 'mlx5_0', '--test', 'write_lat'])
        self.assertEqual(rp.perftest_argv(a, 'mlx5_1'), ['ib_write_lat', '-d', 'mlx5_1', '-i', '1', '-x', '3',
                                                         '--tclass=106', '-s', '2', '-p', '18515', '-F', '-n',
                                                         '10000'])


class Cli(unittest.TestCase):
    def check_table(self, out):
        rows = {' '.join(ln.split()[:2]): ln.split()[2:] for ln in out.splitlines()[2:] if ln.strip()}
        self.assertEqual(rows['ecn_marked_rx np_ecn_marked_roce_packets'], ['48213', '0'])
        self.assertEqual(rows['cnp_sent np_cnp_sent'], ['12007', '0'])
        self.assertEqual(rows['cnp_handled rp_cnp_handled'], ['0', '12007'])
        self.assertEqual(rows['cnp_ignored rp_cnp_ignored'], ['0', 'reset'])
        self.assertEqual(rows['out_of_sequence out_of_sequence'], ['0', '0'])
        self.assertEqual(rows['icrc_error_rx rx_icrc_encapsulated'], ['-', '-'])
        self.assertEqual(rows['rx_packets counters/port_rcv_packets'], ['17367904', '1112007'])
        self.assertEqual(rows['(raw) rx_write_requests'], ['1083744', '-'])
        self.assertEqual(rows['(raw) counters/VL15_dropped'], ['-', 'n/a'])
        self.assertEqual(rows['(raw) resp_local_length_error'], ['-', 'n/a'])
        self.assertNotIn('(raw) rx_read_requests', rows)  # unknown and unmoved: left out
        for name, _, _ in rp.KNOWN:
            self.assertIn(name, [k.split()[0] for k in rows])

    def test_replay_table(self):
        r = cli(*REPLAY)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertIn('ib_write_bw: 65536 B x 1083744 iterations, BW average 94.70 Gb/s, 0.180624 Mpps', lines)
        i = next(i for i, ln in enumerate(lines) if ln.startswith('counter '))
        self.assertRegex(lines[i], r'server lab-a \(mlx5_0 port 1\) +client lab-b \(mlx5_1 port 1\)$')
        self.check_table('\n'.join(lines[i:]))
        self.assertIn('warning: client lab-b: skipped %s/mlx5_1/ports/1/counters/VL15_dropped' % BEFORE,
                      r.stderr)
        self.assertNotIn('Traceback', r.stderr)

    def test_replay_latency(self):
        r = cli(*(REPLAY[:3] + [os.path.join(FIX, 'ib_write_lat.txt'), '--test', 'write_lat'] + REPLAY[4:]))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('ib_write_lat: 2 B x 10000 iterations, latency typical 1.62 us, avg 1.64, min 1.56, '
                      'max 8.93, 99% 1.84, 99.9% 4.12 us', r.stdout)

    def test_json(self):
        r = cli(*(REPLAY + ['--json']))
        self.assertEqual(r.returncode, 0, r.stderr)
        j = json.loads(r.stdout)  # the progress line went to stderr
        self.assertEqual(j['result']['bw_avg_gbps'], 94.7)
        self.assertEqual((j['tclass'], j['dscp'], j['ecn']), (106, 26, 2))
        self.assertEqual(j['hosts'][0]['delta']['hw_counters/np_ecn_marked_roce_packets'], 48213)
        self.assertEqual(j['hosts'][1]['delta']['hw_counters/rp_cnp_ignored'], 'reset')
        row = next(x for x in j['rows'] if x['name'] == 'cnp_handled')
        self.assertEqual((row['raw'], row['values']), ('hw_counters/rp_cnp_handled', [0, 12007]))
        self.assertEqual(len(j['warnings']), 2)

    def test_errors_are_one_line(self):
        r = cli(*(REPLAY[:4] + ['--device', 'mlx5_9'] + REPLAY[6:]))
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.strip().splitlines()[-1], 'roce-perftest: server lab-a: no RDMA device mlx5_9: '
                         '%s/mlx5_9 does not exist (devices there: mlx5_0, mlx5_1)' % BEFORE)
        r = cli(*(REPLAY[:3] + ['/nonexistent/out.txt'] + REPLAY[4:]))
        self.assertEqual((r.returncode, r.stderr.strip().splitlines()[-1]),
                         (1, 'roce-perftest: cannot read the perftest output /nonexistent/out.txt: '
                             'No such file or directory'))
        for bad in (['--tclass', '256'], ['--device', 'mlx5_0;reboot']):
            r = cli(*(REPLAY + bad))
            self.assertEqual(r.returncode, 2, bad)
        r = cli('--device', 'mlx5_0')
        self.assertEqual(r.returncode, 2)
        self.assertIn('--server and --client are needed', r.stderr)
        self.assertNotIn('Traceback', r.stderr)

    def test_help_and_dry_run(self):
        r = cli('--help')
        self.assertEqual(r.returncode, 0)
        self.assertIn('real RoCE NICs', r.stdout)
        self.assertIn('np_ecn_marked_roce_packets', r.stdout)
        r = cli('--server', 'lab-a', '--client', 'lab-b', '--device', 'mlx5_0', '--dry-run', '--server-addr',
                '10.0.1.1', '--ssh', 'ssh -o BatchMode=yes')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("ssh -o BatchMode=yes lab-b 'ib_write_bw -d mlx5_0 -i 1 -x 3 --tclass=106 -s 65536 "
                      "-p 18515 -F -D 10 --report_gbits 10.0.1.1'", r.stdout.splitlines())


class StandIns(unittest.TestCase):
    """The whole run, hosts reached through a fake ssh (runs the command here) and a fake
    ib_write_bw: the server waits, the client prints the fixture and makes the counters `after`."""

    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.sysfs = os.path.join(self.d, 'sysfs')
        shutil.copytree(BEFORE, self.sysfs)
        self.log = os.path.join(self.d, 'log')
        os.mkdir(os.path.join(self.d, 'bin'))
        self.write('bin/ssh', '#!/bin/sh\necho "ssh $1" >> %s\nshift\nexec sh -c "$*"\n' % self.log)

    def tearDown(self):
        shutil.rmtree(self.d)

    def write(self, rel, text):
        path = os.path.join(self.d, rel)
        with open(path, 'w') as f:
            f.write(text)
        os.chmod(path, stat.S_IRWXU)

    def run_tool(self, client_status):
        self.write('bin/ib_write_bw', '''#!/bin/sh
echo "ib_write_bw $*" >> %(log)s
for last; do :; done
if [ "$last" != 10.0.1.1 ]; then echo ' RDMA_Write BW Test'; sleep 0.3; exit 0; fi
if [ %(status)d != 0 ]; then echo " Couldn't connect to 10.0.1.1:18515"; exit %(status)d; fi
cp -r %(after)s/. %(sysfs)s/
cat %(fixture)s
''' % {'log': self.log, 'status': client_status, 'after': AFTER, 'sysfs': self.sysfs,
            'fixture': os.path.join(FIX, 'ib_write_bw.txt')})
        env = dict(os.environ, PATH=os.path.join(self.d, 'bin') + os.pathsep + os.environ['PATH'])
        return cli('--server', 'lab-a', '--client', 'lab-b', '--server-addr', '10.0.1.1', '--device',
                   'mlx5_0', '--client-device', 'mlx5_1', '--sysfs-root', self.sysfs, '--ssh', 'ssh',
                   '--server-wait', '0.1', '--duration', '1', env=env)

    def test_run_through_fake_ssh(self):
        r = self.run_tool(0)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.log) as f:
            log = f.read().splitlines()
        self.assertEqual([x for x in log if x.startswith('ssh')], ['ssh lab-a', 'ssh lab-b'] * 3)
        self.assertIn('ib_write_bw -d mlx5_1 -i 1 -x 3 --tclass=106 -s 65536 -p 18515 -F -D 1 --report_gbits '
                      '10.0.1.1', log)
        lines = r.stdout.splitlines()
        i = next(i for i, ln in enumerate(lines) if ln.startswith('counter '))
        Cli.check_table(self, '\n'.join(lines[i:]))
        self.assertIn('running the ib_write_bw client on lab-b to 10.0.1.1 for 1 s', lines)

    def test_missing_programs_are_named(self):
        env = dict(os.environ, PATH=self.d)  # neither ib_write_bw nor ssh there
        r = cli('--server', 'lab-a', '--client', 'lab-b', '--local-server', '--device', 'mlx5_0',
                '--client-device', 'mlx5_1', '--sysfs-root', BEFORE, '--local-client', env=env)
        self.assertEqual((r.returncode, r.stderr.strip().splitlines()[-1]),
                         (1, 'roce-perftest: server lab-a: cannot run ib_write_bw: No such file or directory'))
        r = cli('--server', 'lab-a', '--client', 'lab-b', '--device', 'mlx5_0', env=env)
        self.assertEqual((r.returncode, r.stderr.strip().splitlines()[-1]),
                         (1, 'roce-perftest: server lab-a: cannot read its counters with ssh: No such file or '
                             'directory'))

    def test_client_failure_names_the_host(self):
        r = self.run_tool(1)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.strip().splitlines()[-1], "roce-perftest: client lab-b: ib_write_bw client "
                         "exited with status 1: Couldn't connect to 10.0.1.1:18515")


if __name__ == '__main__':
    unittest.main(verbosity=2)
