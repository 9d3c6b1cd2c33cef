#   Licensed under the Apache License, Version 2.0 (the "License"); you may
#   not use this file except in compliance with the License. You may obtain
#   a copy of the License at
#
#        http://www.apache.org/licenses/LICENSE-2.0
#
#   Unless required by applicable law or agreed to in writing, software
#   distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#   WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#   License for the specific language governing permissions and limitations
#   under the License.

"""The benchmarks' report in markdown, from the JSON that the sections
measured: figures, targets and verdicts, nothing measured here."""

import statistics

PAGE_SIZE = 1000   # ironic's and nova's default [api]max_limit


def pages(report, size):
    """Pages of the largest collection at this size."""
    objects = report['objects']
    counts = objects[str(size)] if str(size) in objects else objects[size]
    return -(-max(counts.values()) // PAGE_SIZE)


def verdict(ok):
    return 'met' if ok else 'MISSED'


def markdown(report):
    argv = report.get('argv')
    lines = ['# osc-deploy-config benchmarks', '',
             'Run %s, %.0f s. Reproduce: `tools/tox -e bench%s`.' % (
                 report['date'], report['seconds'],
                 ' -- ' + ' '.join(argv) if argv else ''), '',
             '## Machine and versions', '']
    lines += ['- %s: %s' % item for item in report['machine'].items()]
    lines += ['- %s: %s' % item for item in report['versions'].items()]
    if 'redfish' in report:             # --only redfish
        return '\n'.join(lines + _redfish(report['redfish'])) + '\n'
    if 'sets' in report:                # --only sets
        return '\n'.join(lines + _sets(report['sets'])) + '\n'
    if 'requests' not in report and 'complete' not in report:
        return '\n'.join(lines + _fleets(report)) + '\n'  # --only fleet
    if 'plugin_load' not in report:     # --only complete
        return '\n'.join(lines + _complete(report['complete'])) + '\n'

    load = report['plugin_load']
    ours, theirs = load['osc-deploy-config'], load['python-ironicclient']
    ratio = ours['ms'] / theirs['ms']
    lines += [
        '', '## 1. Plugin load per `openstack` run', '',
        '`EntryPoint.load` of every OSC entry point of the distribution, in '
        'a fresh interpreter after the modules OSC itself imports (cliff '
        'loads every command module on every run); median of %d.'
        % report['runs_load'], '',
        '| | entry points | ms |', '|---|---:|---:|',
        '| osc-deploy-config | %d | %.2f |' % (ours['entry_points'],
                                              ours['ms']),
        '| python-ironicclient | %d | %.2f |' % (theirs['entry_points'],
                                                theirs['ms']),
        '', 'Ratio %.3f. Target <= 5 ms and <= 0.25x: %s.' % (
            ratio, verdict(ours['ms'] <= 5 and ratio <= 0.25)),
    ]
    lines += _complete(report['complete'])

    table = report['requests']
    sizes = report['sizes']
    lines += [
        '', '## 2. Requests per command', '',
        'Counted at the HTTP layer (`requests` adapter) of one `openstack` '
        'run, with N bench templates, nodes and flavors. Cells: API '
        'requests to ironic / nova / placement, then version discovery and '
        'keystone (tokens and discovery).', '',
        '| command | ' + ' | '.join('N=%d' % n for n in sizes) + ' | '
        'no N+1 |',
        '|---|' + '---:|' * len(sizes) + '---|',
    ]
    all_flat = True
    for name, by_size in table.items():
        cells, api = [], []
        for size in sizes:
            counts = by_size[str(size)] if str(size) in by_size \
                else by_size[size]
            api.append(sum(counts.get(s, 0) for s in (
                'baremetal', 'compute', 'placement')))
            cells.append('%d / %d / %d (+%d disc, +%d ks)' % tuple(
                counts.get(s, 0) for s in ('baremetal', 'compute',
                                           'placement', 'discovery',
                                           'keystone')))
        flat = all(api[i] <= api[0] * pages(report, size)
                   for i, size in enumerate(sizes))
        all_flat &= flat
        lines.append('| %s | %s | %s |' % (name, ' | '.join(cells),
                                           'yes' if flat else 'NO'))
    objects = report['objects']
    lines += [
        '', 'Objects in the cloud at each N (bench and seed): %s.' % '; '.join(
            'N=%s: %s' % (size, ', '.join('%d %s' % (n, kind) for kind, n in
                                          sorted(objects[size].items())))
            for size in objects),
        'Target: independent of N, apart from the pages of listings: '
        'ironic and nova return at most %d objects a page (their default '
        '`max_limit`), so a listing of more takes one request per page. '
        'Verdict (requests at N <= requests at N=%d times the pages of the '
        'largest collection): %s.' % (PAGE_SIZE, sizes[0],
                                      verdict(all_flat)),
    ]

    listing = report['template_list']
    ratio = listing['ours'] / listing['ironicclient']
    rows = (('`openstack baremetal deploy template list` (ours)', 'ours'),
            ('ironicclient\'s standalone `baremetal deploy template list`',
             'ironicclient'),
            ('ironicclient\'s `openstack baremetal deploy template list`, '
             'our plugin not installed', 'ironicclient_osc'))
    lines += [
        '', '## 3. `baremetal deploy template list` over %d templates'
        % report['templates_listed'], '',
        'Wall time, median of %d interleaved runs, system-scoped cloud '
        'entry, default table output.' % report['runs'], '',
        '| | list (s) | `--help`, start-up only (s) | list minus start-up '
        '(s) |', '|---|---:|---:|---:|',
    ] + ['| %s | %.3f | %.3f | %.3f |' % (
        label, listing[key], listing[key + '_startup'],
        listing[key] - listing[key + '_startup']) for label, key in rows]
    work = {key: listing[key] - listing[key + '_startup'] for _, key in rows}
    lines += [
        '', 'Ratio to the standalone CLI %.3f (target <= 1.0: %s); without '
        'each CLI\'s start-up %.3f. Ratio to ironicclient\'s command under '
        '`openstack`: %.3f (%.3f without start-up).' % (
            ratio, verdict(ratio <= 1.0),
            work['ours'] / work['ironicclient'],
            listing['ours'] / listing['ironicclient_osc'],
            work['ours'] / work['ironicclient_osc']),
        '`openstack` starts %.3f s slower than `baremetal`, with or without '
        'our plugin: it loads every installed plugin\'s command modules '
        '(cliff loads all entry points of every command group), while '
        '`baremetal` loads ironicclient\'s only.' % (
            listing['ours_startup'] - listing['ironicclient_startup']),
    ]

    lines += _sync(report['sync']) if 'sync' in report else [
        '', '## 4. `node deploy-config sync`: not run (`--sync-nodes 0`)']
    lines += _server_list(report)
    lines += _hooks(report)
    lines += _fleets(report)
    return '\n'.join(lines) + '\n'


def _fleets(report):
    """Section 7: the rollout at no time a servicing, then at the
    hardware's speed, each if it ran."""
    lines = _fleet(report['fleet']) if 'fleet' in report else []
    if 'fleet_slow' in report:
        lines += _fleet_slow(report['fleet_slow'])
    return lines


def _redfish(found):
    lines = ['', '## A toggle through ironic\'s redfish BIOS', '',
             '`openstack server resize --deploy-config` of a server on bm-6 '
             '(ironic\'s redfish BIOS interface, the emulated iLO: a PATCH, '
             'a reboot of about 2 s and the BMC\'s boot progress, polled '
             'every 2 s) and of one on bm-0 (the fake-steps BIOS, at once); '
             'medians of %d toggles each.' % len(found['redfish']), '',
             '| BIOS | requests | ironic | nova | placement | s |',
             '|---|---:|---:|---:|---:|---:|']
    for kind in ('redfish', 'fake-steps'):
        runs = found[kind]

        def mid(key, runs=runs):
            return statistics.median([r['requests'].get(key, 0)
                                      for r in runs])

        lines.append('| %s | %s | %s | %s | %s | %.1f |' % (
            kind, mid('total'), mid('baremetal'), mid('compute'),
            mid('placement'), statistics.median([r['s'] for r in runs])))
    return lines


def _sets(found):
    lines = ['', '## A boot with a set of configs', '',
             '`openstack server create --wait` (its pre-flight included) of '
             'a flavor that asks for one BIOS config, and of one that asks '
             'for a set of two (one template, made at `flavor deploy-config '
             'set`), on the fake-steps nodes; medians of %d boots each, '
             'interleaved. And `flavor deploy-config set` of each, once.'
             % len(found['one config']['boots']), '',
             '| flavor asks | boot requests | ironic | nova | placement | '
             'glance | boot s | set requests | set s |',
             '|---|---:|---:|---:|---:|---:|---:|---:|---:|']
    for label, one in found.items():
        boots = one['boots']

        def mid(key, boots=boots):
            return statistics.median([b['requests'].get(key, 0)
                                      for b in boots])

        lines.append('| %s | %s | %s | %s | %s | %s | %.1f | %s | %.1f |' % (
            label, mid('total'), mid('baremetal'), mid('compute'),
            mid('placement'), mid('image'),
            statistics.median([b['s'] for b in boots]),
            one['set']['total'], one['set_s']))
    return lines


def _complete(complete):
    ours, theirs, paired = (complete[k] for k in ('with', 'without',
                                                  'pair_ratio'))
    ratio = {kind: ours[kind] / theirs[kind] for kind in ('wall', 'cpu')}
    return [
        '', '### `openstack complete`', '',
        'With the plugin, and in a virtualenv with the same packages but '
        'ours; %d interleaved pairs. Goal: at most 1.02x, by both ratios.'
        % complete['runs'], '',
        '| | with (s) | without (s) | ratio of the medians | median ratio '
        'in a pair |', '|---|---:|---:|---:|---:|',
    ] + ['| %s | %.3f | %.3f | %.3f | %.3f |' % (
        label, ours[kind], theirs[kind], ratio[kind], paired[kind])
        for label, kind in (('wall', 'wall'), ('CPU (user + system)', 'cpu'))
    ] + ['', 'Wall %s, CPU %s.' % tuple(
        verdict(max(ratio[kind], paired[kind]) <= 1.02)
        for kind in ('wall', 'cpu'))]


def _sync(sync):
    ratio = sync['ours_s'] / sync['copied_s']
    ratio_no_wait = sync['no_wait_s'] / sync['writes_s']
    ours, no_wait = sync['requests'], sync['requests_no_wait']
    return [
        '', '## 4. `node deploy-config sync` over %d nodes, until placement '
        'shows it' % sync['nodes'], '',
        'Tagging %d capable enrolled fake-hardware nodes that nova\'s ironic '
        'compute manages (resource providers, copied every 5 s in the mini '
        'cloud). Floor: the %d trait writes back to back on one session, '
        'then polling placement every 0.1 s until nova\'s copy shows all; '
        'median of %d rounds.' % (sync['nodes'], sync['floor_requests'],
                                  sync['rounds']), '',
        '| | s | requests |', '|---|---:|---:|',
        '| floor: writes, until placement shows them | %.2f | %d + polls |'
        % (sync['copied_s'], sync['floor_requests']),
        '| `openstack baremetal node deploy-config sync` | %.2f | %s |'
        % (sync['ours_s'], _requests(ours)),
        '| floor: the writes alone | %.2f | %d |' % (
            sync['writes_s'], sync['floor_requests']),
        '| `... sync --no-wait` | %.2f | %s |' % (sync['no_wait_s'],
                                                  _requests(no_wait)),
        '', 'Until placement shows it: ratio %.3f (target <= 1.2x: %s); '
        'each round (s): floor %s, ours %s. Nova copies on its own clock, '
        'so a round\'s time depends on when in nova\'s period the writes '
        'end. `--no-wait`: ratio %.3f (target <= 1.2x: %s).' % (
            ratio, verdict(ratio <= 1.2),
            ', '.join('%.1f' % t for t in sync['copied_all_s']),
            ', '.join('%.1f' % t for t in sync['ours_all_s']),
            ratio_no_wait, verdict(ratio_no_wait <= 1.2)),
        '', 'The alternative design, writing the providers\' traits '
        'ourselves (generation-checked GET and PUT per provider, after the '
        'ironic write): %.2f s and %d requests, the scheduler sees it at '
        'once; then nova\'s ironic compute logged %d "Failed to update '
        'traits" errors (409, its cached generation stale) for %d '
        'providers. While our `sync` waited for nova\'s copy instead: %d '
        'such errors in %d rounds.' % (
            sync['own_writes_s'], sync['own_requests'],
            sync['nova_errors_own'], sync['nodes'],
            sync['nova_errors_ours'], sync['rounds']),
    ]


def _server_list(report):
    listing = report['server_list']
    added = {kind: (listing['after'].get(kind, 0)
                    - listing['before'].get(kind, 0)) / listing['servers']
             for kind in ('baremetal', 'compute', 'image', 'total')}
    return [
        '', '## 5. `server deploy-config list --long` over %d servers'
        % listing['servers'], '',
        '%d more virtual servers of a config flavor, each paired with an '
        'enrolled node through the node\'s `instance_uuid`, so that '
        '`--long` reads a BIOS for every one (%d rows).' % (
            listing['servers'], listing['rows']), '',
        '| | requests | wall time (s), median of %d |' % report['runs'],
        '|---|---:|---:|',
        '| `--long`, before the servers | %s | |' % _requests(
            listing['before']),
        '| `--long`, with them | %s | %.3f |' % (_requests(
            listing['after']), listing['long_s']),
        '| without `--long`, with them | %s | %.3f |' % (_requests(
            listing['short']), listing['short_s']),
        '', 'Requests added per server: %.2f (ironic %.2f, nova %.2f, '
        'glance %.2f); target: only the BIOS read of `--long`, 1 ironic '
        'request per server: %s.' % (
            added['total'], added['baremetal'], added['compute'],
            added['image'], verdict(added['total'] <= 1.0)),
    ]


def _fleet(fleet):
    import math

    lines = [
        '', '## 7. A rollout over %d bare-metal servers' % fleet['servers'],
        '', '`openstack server deploy-config set --flavor bench.fleet '
        '--all-projects --deploy-config ...`, against ceil(N/M) times the '
        'median single toggle (`server resize --deploy-config`, %.2f s, %d '
        'requests; %s). Goal: at most 1.15x. The servers are virtual ones '
        'paired with adopted fake nodes: each toggle services its node '
        'through ironic, reads the BIOS back and records it; every BIOS '
        'is read back after each round.' % (
            fleet['single_s'], fleet['single_requests']['total'],
            ', '.join('%.2f' % t for t in fleet['single_all_s'])), '',
        '| --max-unavailable | wall (s) | raw floor (s) | ratio to floor | '
        'ceil(N/M) x single (s) | requests | planning (a dry run) | per '
        'toggled server | floor per server | ironic/s | floor ironic/s | '
        'nova/s |',
        '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|']
    for found in fleet['rounds']:
        singles = math.ceil(fleet['servers'] / found['max_unavailable']) * \
            fleet['single_s']
        counts, planning = found['requests'], found['planning']['total']
        raw = found['floor']
        lines.append('| %d | %.1f | %.1f | %.2f | %.1f | %d | %d | %.1f | '
                     '%.1f | %.1f | %.1f | %.1f |' % (
                         found['max_unavailable'], found['s'], raw['s'],
                         found['s'] / raw['s'], singles, counts['total'],
                         planning,
                         (counts['total'] - planning) / fleet['servers'],
                         raw['requests'] / fleet['servers'],
                         counts.get('baremetal', 0) / found['s'],
                         raw['requests'] / raw['s'],
                         counts.get('compute', 0) / found['s']))
    lines += [
        '', 'The raw floor does only what any tool must: at the same '
        '--max-unavailable, the service request of each node and polls '
        'until it is active again (0.25 s, doubling to 3 s, as a toggle '
        'polls). Goal: at most 1.3x the floor, at most 10 requests per '
        'toggled server, polls included.']
    if fleet.get('project'):
        lines += _project_toggle(fleet['project'])
    return lines


def _fleet_slow(fleet):
    import math

    lines = [
        '', '## 7b. A rollout at the hardware\'s speed: %d servers, %g s a '
        'servicing' % (fleet['servers'], fleet['step_s']), '',
        'The rollout of section 7, each servicing taking %g s in the fake '
        'BIOS (on real hardware, a BMC job and a reboot: minutes), against '
        'the raw floor at that speed. Section 7, where a servicing takes no '
        'time, gives the API\'s overhead; this is the time an operator '
        'waits. The servicings alone: ceil(N/M) x %g s. The dry run\'s '
        'wall time is the command\'s own start and planning (the process, '
        'keystone, discovery, the reads), which the floor does not do; the '
        'last column leaves it out.'
        % (fleet['step_s'], fleet['step_s']), '',
        '| --max-unavailable | wall (s) | raw floor (s) | ratio to floor | '
        'servicings alone (s) | requests | planning (a dry run) | per '
        'toggled server | floor per server | dry run (s) | ratio less the '
        'dry run |',
        '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|']
    met = True
    for found in fleet['rounds']:
        counts, planning = found['requests'], found['planning']['total']
        raw = found['floor']
        ratio = found['s'] / raw['s']
        per_server = (counts['total'] - planning) / fleet['servers']
        met &= ratio <= 1.10 and per_server <= 10
        start = found.get('planning_s')
        lines.append('| %d | %.1f | %.1f | %.2f | %.1f | %d | %d | %.1f | '
                     '%.1f | %s | %s |' % (
                         found['max_unavailable'], found['s'], raw['s'],
                         ratio, math.ceil(fleet['servers'] / found[
                             'max_unavailable']) * fleet['step_s'],
                         counts['total'], planning, per_server,
                         raw['requests'] / fleet['servers'],
                         '-' if start is None else '%.1f' % start,
                         '-' if start is None else '%.2f' % (
                             (found['s'] - start) / raw['s'])))
    return lines + [
        '', 'Goal: at most 1.10x the floor, at most 10 requests per toggled '
        'server, at each --max-unavailable: %s.' % verdict(met)]


def _project_toggle(found):
    """The same server toggled by its project's manager and by the
    operator."""
    row = {}
    for who, runs in found.items():
        row[who] = (statistics.median(r['requests']['total'] for r in runs),
                    statistics.median(r['s'] for r in runs),
                    sorted({r['requests']['total'] for r in runs}))
    return [
        '', 'One server toggled by a manager of its project (no role on the '
        'system: the project\'s runbook, its record in the node\'s extra) '
        'and by the operator, alternately, median of %d each. Goal: the '
        'project makes no more requests.' % len(found['project']), '',
        '| who | requests | wall (s) |', '|---|---:|---:|'] + [
        '| %s | %d (%s) | %.2f |' % (who, row[who][0], ', '.join(
            map(str, row[who][2])), row[who][1])
        for who in ('operator', 'project')]


def _hooks(report):
    lines = [
        '', '## 6. The hooks on OSC\'s own server commands', '',
        'Plain commands that ask for no deploy config, as a project member '
        'and as an admin, among %s flavors and %s images: with our plugin '
        'and in the virtualenv without it; wall time median of interleaved '
        'pairs (%d). Goal: at most one request more, at most 1.02x the '
        'time.' % (report['objects'][report['sizes'][-1]]['flavors'],
                   report['sizes'][-1], report['runs']), '',
        '| command | requests with / without | added | wall time with / '
        'without (s) | ratio |', '|---|---:|---|---:|---:|']
    for name, found in sorted(report['hooks'].items()):
        ours, theirs = found['requests'], found['requests_without']
        added = {kind: ours.get(kind, 0) - theirs.get(kind, 0)
                 for kind in sorted(set(ours) | set(theirs))
                 if kind != 'total'}
        lines.append('| `%s` | %d / %d | %s | %.3f / %.3f | %.3f |' % (
            name, ours['total'], theirs['total'], ', '.join(
                '%+d %s' % (n, kind) for kind, n in added.items() if n)
            or 'none', found['ours_s'], found['without_s'],
            found['ours_s'] / found['without_s']))
    return lines


def _requests(counts):
    return '%d (%s)' % (counts['total'], ', '.join(
        '%d %s' % (n, kind) for kind, n in sorted(counts.items())
        if kind != 'total'))
