"""The PNG plots of a fabric experiment (matplotlib, when installed): goodput.png (each run's
fraction of the ideal, and the victims' goodput), pause_tree.png (how long each switch port
asserted PFC, per run), cables.png (each cable direction's mean rate, per run) and
host_goodput.png (the hosts' received goodput, sorted, per run); with a cable cut failover.png,
with collectives busbw.png and with messages of several sizes fct_slowdown.png
(fabric_failover_report.py, fabric_collectives.py, fabric_fct.py)."""

import os

from .common import PROG
from .fabric_collectives import busbw_plot
from .fabric_failover_report import failover_plot
from .fabric_fct import fct_plot

PAUSE_PORTS = 40   # ports pause_tree.png shows at most (the longest pauses)


def fabric_plots(out_dir, exp, runs, seeds, out):
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        out.line('%s: python3-matplotlib is missing (apt-get install python3-matplotlib): no plots'
                 % PROG)
        return []
    done = [r for r in runs if r.get('goodput_fraction') is not None or r.get('pauses') is not None]
    if not done:
        return []
    many = len(seeds) > 1
    over = ' (mean over %d seeds)' % len(seeds) if many else ''
    colours = plt.rcParams['axes.prop_cycle'].by_key()['color']
    written = []

    def save(fig, name):
        fig.tight_layout()
        path = os.path.join(out_dir, name)
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)

    # goodput.png: a bar per run (min..max over the seeds as whiskers), the reference lines;
    # beside it the victims' goodput with experiment.victims.
    panels = 2 if exp.victims else 1
    fig, axes = plt.subplots(1, panels, figsize=(max(6.0, 1.1 * len(done) + 3) * panels * 0.8 + 1, 4.6),
                             squeeze=False)
    x = list(range(len(done)))
    names = [r['run'] for r in done]

    def bars(ax, key, ylabel, title, fmt):
        vals = [r.get(key) or 0 for r in done]
        ax.bar(x, vals, color=[colours[i % len(colours)] for i in x], alpha=0.85)
        if many:
            lo = [v - (r.get(key + '_min') if r.get(key + '_min') is not None else v) for v, r in zip(vals, done)]
            hi = [(r.get(key + '_max') if r.get(key + '_max') is not None else v) - v for v, r in zip(vals, done)]
            ax.errorbar(x, vals, yerr=[lo, hi], fmt='none', ecolor='black', capsize=4, linewidth=1)
        for i, (v, r) in enumerate(zip(vals, done)):   # above the whisker
            top_ = max(v, r.get(key + '_max') or v) if many else v
            ax.text(i, top_, fmt % v, ha='center', va='bottom', fontsize=8)
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=20 if max(len(n) for n in names) > 8 else 0, ha='right'
                           if max(len(n) for n in names) > 8 else 'center', fontsize=8)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=9)
        ax.grid(True, axis='y', alpha=0.3)

    ax = axes[0, 0]
    bars(ax, 'goodput_fraction', 'goodput / ideal',
         'goodput: fraction of the receivers\' link rates%s%s' % (over, ', whiskers min..max' if many else ''),
         '%.3f')
    top = max([1.05] + [(r.get('goodput_fraction_max') or 0) * 1.1 for r in done])
    styles = ['--', '-.', ':']
    for i, (frac, label) in enumerate(exp.goodput_lines):
        ax.axhline(frac, color='tab:red', linestyle=styles[i % len(styles)], linewidth=1,
                   label='%s: %.3f' % (label or 'reference', frac))
    ax.axhline(1.0, color='grey', linestyle=':', linewidth=0.8)
    if exp.goodput_lines:   # the legend above the bars (none reaches 1.0)
        top = max(top, 1.05 + 0.08 * len(exp.goodput_lines))
        ax.legend(fontsize=8, loc='upper right')
    ax.set_ylim(0, top)
    if exp.victims:
        bars(axes[0, 1], 'victim_gbps', 'Gb/s', 'victim goodput: received by %s%s' % (
            ', '.join(exp.victims), over), '%.2f')
        links = sorted({g for r in done for g in r.get('link_gbps') or []})
        if len(links) == 1:
            axes[0, 1].axhline(links[0] * len(exp.victims), color='grey', linestyle=':', linewidth=0.8)
    fig.suptitle('%s: goodput per run' % exp.name)
    save(fig, 'goodput.png')

    # pause_tree.png: per switch port that asserted pause, its pause time per run.
    ports = {}
    for r in done:
        for p in r.get('pauses') or []:
            e = ports.setdefault(p['port'], [p['peer'], 0.0])
            e[1] = max(e[1], p['assert_ns'])
    order = sorted(ports, key=lambda n: -ports[n][1])[:PAUSE_PORTS]
    fig, ax = plt.subplots(1, 1, figsize=(10, max(2.5, 0.18 * len(order) * max(1, len(done)) ** 0.5 + 1.6)))
    if order:
        h = 0.8 / len(done)
        for j, r in enumerate(done):
            vals = {p['port']: p['assert_ns'] / 1e3 for p in r.get('pauses') or []}
            ax.barh([i + (j - (len(done) - 1) / 2) * h for i in range(len(order))],
                    [vals.get(n, 0.0) for n in order], height=h, color=colours[j % len(colours)],
                    label=r['run'])
        ax.set_yticks(range(len(order)))
        ax.set_yticklabels(['%s > %s' % (n, ports[n][0]) for n in order], fontsize=7)
        ax.invert_yaxis()
        ax.legend(fontsize=8, loc='lower right')
        ax.grid(True, axis='x', alpha=0.3)
    else:
        ax.text(0.5, 0.5, 'no switch port asserted PFC in any run', ha='center', va='center',
                transform=ax.transAxes)
        ax.set_yticks([])
    ax.set_xlabel('time the port asserted PFC pause towards its neighbour (us, summed over priorities)')
    ax.set_title('%s: pause tree, port > whom it paused%s%s' % (
        exp.name, over, ', the %d longest of %d ports' % (len(order), len(ports))
        if len(ports) > len(order) else ''), fontsize=9)
    save(fig, 'pause_tree.png')

    # cables.png: each cable direction's mean Gb/s over the run, a marker per run.
    dirs = sorted({c['direction'] for r in done for c in r.get('cables') or []})
    if dirs:
        fig, ax = plt.subplots(1, 1, figsize=(10, max(3.0, 0.2 * len(dirs) + 1.4)))
        markers = 'osD^v<>ph*'
        for j, r in enumerate(done):
            vals = {c['direction']: c['gbps'] for c in r.get('cables') or []}
            ax.plot([vals.get(d) for d in dirs], range(len(dirs)), linestyle='none',
                    marker=markers[j % len(markers)], color=colours[j % len(colours)], alpha=0.8,
                    markersize=5, label=r['run'])
        for g in sorted({c['link_gbps'] for r in done for c in r.get('cables') or [] if c.get('link_gbps')}):
            ax.axvline(g, color='grey', linestyle='--', linewidth=0.8)
        ax.set_yticks(range(len(dirs)))
        ax.set_yticklabels([d.replace('>', ' > ') for d in dirs], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlim(left=0)
        ax.set_xlabel('Gb/s sent into the cable, mean over the run (dashed: the cable\'s rate)')
        ax.set_title('%s: cable directions%s' % (exp.name, over), fontsize=9)
        ax.grid(True, axis='x', alpha=0.3)
        ax.legend(fontsize=8, loc='lower right')
        save(fig, 'cables.png')

    # host_goodput.png: the hosts' received goodput, sorted, a line per run.
    with_hosts = [r for r in done if r.get('host_goodput_sorted')]
    if with_hosts:
        fig, ax = plt.subplots(1, 1, figsize=(8, 4.6))
        for j, r in enumerate(with_hosts):
            ys = r['host_goodput_sorted']
            ax.plot(range(1, len(ys) + 1), ys, marker='o', markersize=3, linewidth=1.2,
                    color=colours[j % len(colours)], label=r['run'])
        links = sorted({g for r in with_hosts for g in r.get('link_gbps') or []})
        for g in links:
            ax.axhline(g, color='grey', linestyle='--', linewidth=0.8)
        ax.set_ylim(bottom=0)
        ax.set_xlabel('host, by received goodput (lowest first)')
        ax.set_ylabel('received goodput (Gb/s)')
        ax.set_title('%s: per-host received goodput, sorted%s' % (
            exp.name, ' (rank by rank, mean over %d seeds)' % len(seeds) if many else ''), fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        save(fig, 'host_goodput.png')

    # failover.png with a cable cut, busbw.png with collectives, fct_slowdown.png with sizes.
    failover_plot(plt, exp, runs, save)
    busbw_plot(plt, out_dir, exp, runs, seeds, save)
    fct_plot(plt, exp, runs, seeds, save)
    return written
