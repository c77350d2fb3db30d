"""The figures perf/linerate reports once the rounds have run: the median round of a pair of
figures (by their ratio, so the pairing within a round survives the machine's speed
drifting), the last lines (stock pool, baseline, one per policy, churn, then the
roceswitch/testpmd line last), the table of every round and the JSON document of them all
(nan written as null)."""

import json
import math

from .common import NAN, fmt, log, ratio


def median_round(sw, other):
    """The round whose ratio sw/other is the median (the upper middle one for an even count);
    when any ratio is nan (e.g. no testpmd), the round of the median sw figure.
    Returns (sw, other, ratio, index)."""
    rounds = [(ratio(a, b), a, b, i) for i, (a, b) in enumerate(zip(sw, other))]
    if any(math.isnan(r) for r, _, _, _ in rounds):
        key = lambda t: t[1]  # noqa: E731
    else:
        key = lambda t: t[0]  # noqa: E731
    r, a, b, i = sorted(rounds, key=key)[len(rounds) // 2]
    return a, b, r, i


def policy_line(name, mpps, r):
    """The --policy line of one policy (before the last line)."""
    return 'policy_mpps name=%s mpps=%s ratio_vs_ecmp=%s' % (name, fmt(mpps), fmt(r))


def churn_line(r, updates_per_s, target):
    """The --churn line (just before the last line)."""
    return 'churn_ratio=%s updates_per_s=%s target=%g' % (
        fmt(r), 'nan' if math.isnan(updates_per_s) else '%.0f' % updates_per_s, target)


def summary_table(rounds, cols):
    """One row per round; cols: (title, key, spec)."""
    rows = [[t for t, _, _ in cols]]
    for rd in rounds:
        rows.append([fmt(rd.get(k, NAN), spec) if k != 'round' else str(rd['round'])
                     for _, k, spec in cols])
    widths = [max(len(r[c]) for r in rows) for c in range(len(cols))]
    out = []
    for n, r in enumerate(rows):
        out.append('  '.join(v.rjust(w) for v, w in zip(r, widths)))
        if n == 0:
            out.append('  '.join('-' * w for w in widths))
    return '\n'.join(out)


def json_value(x):
    if isinstance(x, float):
        return None if math.isnan(x) else round(x, 4)
    if isinstance(x, dict):
        return {k: json_value(v) for k, v in x.items()}
    if isinstance(x, list):
        return [json_value(v) for v in x]
    return x


def final_figures(rounds, pools, base_switch, policies, churn, lossless):
    """The final figures and the last lines from the rounds' figures; returns (final, lines)."""
    sw = [rd['roceswitch_mpps'] for rd in rounds]
    final = {}
    lines = []
    if lossless:
        lines.append('lossless_rx_mpps=%.3f lossless_tx_mpps=%.3f cost_vs_foundation=%.1f%%'
                     % (lossless['rx_mpps'], lossless['tx_mpps'], lossless['cost_vs_foundation_pct']))
    stock = [rd.get('testpmd_stock_mpps', NAN) for rd in rounds]
    packed = [rd.get('testpmd_packed_mpps', NAN) for rd in rounds]
    if pools == ['packed', 'stock']:
        _, tps, rs, i = median_round(sw, stock)
        final.update(stock_testpmd_mpps=tps, ratio_vs_stock=rs, stock_median_round=i + 1)
        lines.append('stock_testpmd_mpps=%s ratio_vs_stock=%s' % (fmt(tps), fmt(rs)))
    if base_switch:
        new, base, rb, i = median_round(sw, [rd['baseline_mpps'] for rd in rounds])
        final.update(baseline_mpps=base, new_mpps=new, ratio_vs_baseline=rb,
                     baseline_median_round=i + 1)
        lines.append('baseline_mpps=%s new_mpps=%s ratio_vs_baseline=%s rounds=%d'
                     % (fmt(base), fmt(new), fmt(rb), len(rounds)))
    if policies:
        final['policies'] = []
    for name in policies:
        pm, em, pr, i = median_round([rd['policy_%s_mpps' % name] for rd in rounds], sw)
        final['policies'].append({'name': name, 'mpps': pm, 'ecmp_mpps': em, 'ratio_vs_ecmp': pr,
                                  'median_round': i + 1})
        lines.append(policy_line(name, pm, pr))
    if churn is not None:
        cm, pm, cr, i = median_round([rd['churn_mpps'] for rd in rounds], sw)
        ups = sorted(rd['churn_updates_per_s'] for rd in rounds)[len(rounds) // 2]
        final.update(churn_ratio=cr, churn_updates_per_s=ups, churn_target=churn,
                     churn_mpps=cm, churn_plain_mpps=pm, churn_median_round=i + 1)
        lines.append(churn_line(cr, ups, churn))
    x, y, r, i = median_round(sw, stock if pools == ['stock'] else packed)
    final.update(roceswitch_mpps=x, testpmd_mpps=y, ratio=r, median_round=i + 1,
                 testpmd_pool='stock' if pools == ['stock'] else ('packed' if pools else None))
    lines.append('roceswitch_mpps=%s testpmd_mpps=%s ratio=%s' % (fmt(x), fmt(y), fmt(r)))
    return final, lines


def print_rounds(rounds, final, pools, base_switch, policies, churn):
    """Logs which rounds are reported, prints the table of every round and, with churn, the
    churn medians."""
    cols = [('round', 'round', ''), ('roceswitch Mpps', 'roceswitch_mpps', '%.3f')]
    if base_switch:
        cols += [('baseline Mpps', 'baseline_mpps', '%.3f'),
                 ('new/baseline', 'ratio_vs_baseline', '%.3f')]
    for name in policies:
        cols += [('%s Mpps' % name, 'policy_%s_mpps' % name, '%.3f'),
                 ('%s/ecmp' % name, 'policy_%s_ratio' % name, '%.3f')]
    if churn is not None:
        cols += [('churn Mpps', 'churn_mpps', '%.3f'), ('churn/plain', 'ratio_churn', '%.3f'),
                 ('updates/s', 'churn_updates_per_s', '%.0f')]
    for pool in pools:
        cols += [('testpmd %s Mpps' % pool, 'testpmd_%s_mpps' % pool, '%.3f'),
                 ('ratio vs %s' % pool, 'ratio_%s' % pool, '%.3f')]
    reported = ['round %d for the last line' % final['median_round']]
    if 'baseline_median_round' in final:
        reported.append('round %d against the baseline' % final['baseline_median_round'])
    if 'stock_median_round' in final:
        reported.append('round %d against the stock pool' % final['stock_median_round'])
    if 'churn_median_round' in final:
        reported.append('round %d for churn' % final['churn_median_round'])
    log('rounds (reported: %s):' % ', '.join(reported))
    print(summary_table(rounds, cols))
    if churn is not None:
        log('churn, medians over %d rounds: churn/plain %s (round %d: %s Mpps churned against '
            '%s plain, %s%% lost), %.0f updates/s achieved of %g asked'
            % (len(rounds), fmt(final['churn_ratio']), final['churn_median_round'],
               fmt(final['churn_mpps']), fmt(final['churn_plain_mpps']),
               fmt((1 - final['churn_ratio']) * 100, '%.1f'), final['churn_updates_per_s'],
               churn))


def write_json(path, doc):
    """Writes `doc` (nan as null, floats rounded to 4 places) to the --json FILE."""
    with open(path, 'w') as fh:
        json.dump(json_value(doc), fh, indent=2)
        fh.write('\n')
    log('figures written to %s' % path)
