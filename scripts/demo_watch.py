#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The demo's eyes: follow the pipeline, then say what it decided.

    demo_watch.py wait   URL LOG EXPECTED [--timeout-min N]
                         [--deliver INBOX WHEN MSGID DIR]...
    demo_watch.py report URL PATCHWORK SPOOL EXPECTED

wait: every few seconds, reads the controller's JSON (URL/api/v1/queue,
/series) and prints what changed: a job leased, its stage and progress with
the time left where the controller can estimate it, the verdict lines of the
controller's LOG as they appear.  Returns 0 once every demo series has what
it needs (EXPECTED, below) and nothing is queued or running, 1 after the
timeout (a bound against hanging, not a measurement).  Each --deliver
puts the mails of DIR (*.eml, in name order) into the public-inbox archive
INBOX once WHEN holds for the series of MSGID: "planned" (it has a run) or
"decided" (a run of it has its context verdict), the way a list receives
a v2 after the v1 was planned, or a recheck request after a verdict.

report: a table of every series, context and build mode with its verdict
and the worst key, the checks as the fake Patchwork at PATCHWORK received
them, one report mail from SPOOL, then each expectation of EXPECTED met or
not.  Exits 0 when all are met, 1 naming those that are not.

EXPECTED has one line per demo series: its Message-ID (any mail of it), the
states it may end in, separated by "|" (a check state, optionally ":WHY"
with the job verdict's why, e.g. "fail:regression", "warning:noisy"), or
"superseded", then a label.  A line "recheck MSGID N" says that the series
of MSGID has N runs, one of them a recheck, each ending in a state its own
line allows.  Lines starting with "#" are comments.
"""
import email
import email.policy
import glob
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


def get(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.load(r)


def clean(s, n=None):
    """Text for a terminal: no control character, at most n characters."""
    s = ''.join(c if c.isprintable() or c == '\t' else '\\x%02x' % ord(c) if ord(c) < 0x100
                else '\\u%04x' % ord(c) for c in str(s))
    return s if n is None or len(s) <= n else s[:n - 1] + '…'


def read_expected(path):
    series, rechecks = [], []
    for line in open(path, encoding='utf-8'):
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        f = line.split(None, 2)
        if f[0] == 'recheck':
            rechecks.append((f[1].strip('<>'), int(f[2].split()[0])))
        else:
            series.append((f[0].strip('<>'), f[1].split('|'), f[2] if len(f) > 2 else ''))
    return series, rechecks


def all_series(url):
    out, offset = [], 0
    while True:
        page = get(f'{url}/api/v1/series?limit=1000&offset={offset}')
        out += page['series']
        offset += len(page['series'])
        if offset >= page['total'] or not page['series']:
            return out


def find_series(url, msgid):
    """The series one of whose mails (cover or patch) has that Message-ID,
    or None.  The search also finds series that only refer to it (a v2
    sent in reply to its v1): those are skipped."""
    q = urllib.parse.quote(msgid)
    for s in get(f'{url}/api/v1/series?q={q}')['series']:
        if msgid in (s['root_msgid'], s['cover_msgid']):
            return s
        d = get(f'{url}/api/v1/series/{s["id"]}')
        if any(p['msgid'] == msgid for p in d['patches']):
            return s
    return None


def minutes(s):
    if s is None:
        return 'time left unknown'
    if s == 0:
        return 'taking longer than such jobs did'
    return f'~{max(1, round(s / 60))} min left' if s >= 60 else f'~{s} s left'


def stage_ready(url, when, msgid):
    s = find_series(url, msgid)
    if not s:
        return False
    runs = get(f'{url}/api/v1/series/{s["id"]}')['runs']
    if when == 'planned':
        return len(runs) > 0
    return any(r['verdicts'] for r in runs)


def deliver(inbox, path):
    mails = sorted(glob.glob(os.path.join(path, '*.eml')))
    subprocess.run(['sh', 'tests/inbox/make-inbox.sh', 'deliver', inbox, 'dev'] + mails,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return len(mails)


def wait(url, log, expected, timeout_min, stages):
    series, rechecks = read_expected(expected)
    deadline = time.monotonic() + timeout_min * 60
    shown, seen_lines, stable = {}, 0, 0
    while time.monotonic() < deadline:
        while stages and stage_ready(url, stages[0][1], stages[0][2]):
            inbox, when, msgid, path = stages.pop(0)
            n = deliver(inbox, path)
            print(f'    the list receives {os.path.basename(path)} ({n} mails), now that the '
                  f'series of <{msgid}> is {when}', flush=True)
        try:
            q = get(f'{url}/api/v1/queue')
        except (urllib.error.URLError, OSError) as e:
            print(f'    (controller not answering: {e})', flush=True)
            time.sleep(3)
            continue
        for j in q['running']:
            stage = j.get('stage') or 'starting'
            prog = j.get('progress')
            key = (j['id'], j['attempt'], stage, None if prog is None else prog // 10)
            if shown.get(j['id']) != key:
                shown[j['id']] = key
                pct = '' if prog is None else f' {prog}%'
                print(f'    job {j["id"]} (series {j["series"]}, {j["build_mode"]}, attempt '
                      f'{j["attempt"]}) on {j.get("agent") or "?"}: {stage}{pct}, '
                      f'{j["elapsed_s"]} s in, {minutes(j.get("eta_s"))}', flush=True)
        # The controller's own words for each decision.
        try:
            with open(log, encoding='utf-8', errors='replace') as f:
                lines = f.read().splitlines()
        except OSError:
            lines = []
        for line in lines[seen_lines:]:
            if ' info verdict: ' in line:
                print('    ' + clean(line.split(' info ', 1)[1], 160), flush=True)
        seen_lines = len(lines)
        if not stages and not q['queued'] and not q['running'] and done(url, series, rechecks):
            stable += 1
            if stable >= 2:
                return 0
        else:
            stable = 0
        time.sleep(3)
    print(f'demo: still not done after {timeout_min} min', flush=True)
    return 1


def done(url, series, rechecks):
    """Every series ingested and decided, every check delivered."""
    for msgid, _, _ in series:
        s = find_series(url, msgid)
        if not s:
            return False
        d = get(f'{url}/api/v1/series/{s["id"]}')
        if s['state'] == 'superseded':
            # Its run is cancelled; its checks end with a warning.
            if any(c['delivery'] == 'queued' for c in d['checks']):
                return False
            continue
        if not d['runs'] or any(r['state'] not in ('done', 'cancelled') for r in d['runs']):
            return False
        if any(c['delivery'] == 'queued' for c in d['checks']):
            return False
        if any(r['state'] == 'pending' for r in d['rechecks']):
            return False
    for msgid, n in rechecks:
        s = find_series(url, msgid)
        if not s or len(get(f'{url}/api/v1/series/{s["id"]}')['runs']) < n:
            return False
    return True


def job_why(url, job):
    try:
        return get(f'{url}/api/v1/jobs/{job}/verdict')
    except urllib.error.HTTPError:
        return None


def run_state(url, run, jobs):
    """The context state of a run and the why of the job that decided it."""
    state = run['verdicts'][0]['state'] if run['verdicts'] else None
    why = None
    for j in jobs:
        if j and j['state'] == state:
            why = j['why']
            break
    return state, why


def allowed(state, why, allow):
    for a in allow:
        s, _, w = a.partition(':')
        if s == state and (not w or w == why):
            return True
    return False


def report(url, patchwork, spool, expected):
    series, rechecks = read_expected(expected)
    problems = []
    print(f'{"series":<7} {"title":<44} {"context":<26} {"build mode":<20} {"verdict":<8} worst key and change')
    per_msgid = {}
    for msgid, allow, label in series:
        s = find_series(url, msgid)
        if not s:
            problems.append(f'{label}: no series holds <{msgid}>')
            continue
        d = get(f'{url}/api/v1/series/{s["id"]}')
        per_msgid[msgid] = (d, allow, label)
        title = clean(d['title'], 44)
        if d['state'] == 'superseded':
            print(f'{d["id"]:<7} {title:<44} {"-":<26} {"-":<20} {"-":<8} superseded by series '
                  f'{d["superseded_by"]}')
            if 'superseded' not in allow:
                problems.append(f'{label} (series {d["id"]}): superseded, expected {"|".join(allow)}')
            continue
        if not d['runs']:
            problems.append(f'{label} (series {d["id"]}): never planned')
            continue
        for run in d['runs']:
            verdicts = {j['id']: job_why(url, j['id']) for j in run['jobs']}
            state, why = run_state(url, run, verdicts.values())
            if run['reason'] == 'recheck':
                print(f'{"":<7} {"(run " + str(run["id"]) + ", a recheck:)":<44}')
            for j in run['jobs']:
                v = verdicts[j['id']]
                ctx = clean(j['context'], 26)
                summary = clean(v['summary'] if v else j.get('outcome') or '', 60)
                print(f'{d["id"]:<7} {title:<44} {ctx:<26} {clean(j["build_mode"], 20):<20} '
                      f'{(v["state"] if v else j["state"]):<8} {summary}')
                title = ''
            if not allowed(state, why, allow):
                problems.append(f'{label} (series {d["id"]}, run {run["id"]}): {state}'
                                f'{":" + why if why else ""}, expected {"|".join(allow)}')
    for msgid, n in rechecks:
        d, _, label = per_msgid.get(msgid, (None, None, f'the recheck of <{msgid}>'))
        runs = d['runs'] if d else []
        if len(runs) != n or not any(r['reason'] == 'recheck' for r in runs):
            problems.append(f'recheck of {label}: {len(runs)} runs, expected {n} with a recheck')

    print('\nThe checks as Patchwork received them:')
    for c in get(f'{patchwork}/_fake/checks')['checks']:
        print(f'    patch {c["patch"]:<5} {clean(c["context"], 26):<26} {c["state"]:<8} '
              f'{clean(c["description"], 80)}')

    mails = sorted(glob.glob(os.path.join(spool, '*.eml')))
    print(f'\n{len(mails)} report mails were sent to the list; one of them:\n')
    # The one worth reading: a failure with its before/after table (a
    # regression), else any failure, else the first.
    pick, rank = None, -1
    for m in mails:
        msg = email.message_from_bytes(open(m, 'rb').read().replace(b'\r\n', b'\n'),
                                       policy=email.policy.default)
        failed = msg['Subject'].startswith('|FAILURE|')
        r = 2 if failed and 'regression' in msg.get_content() else 1 if failed else 0
        if r > rank:
            pick, rank = msg, r
    if pick is not None:
        for h in ('From', 'To', 'Subject'):
            print(f'    {h}: {clean(pick[h])}')
        print()
        for line in pick.get_content().split('\n')[:40]:
            print('    ' + clean(line))
    else:
        problems.append('no report mail was sent')

    print()
    if problems:
        for p in problems:
            print(f'demo: NOT AS EXPECTED: {p}')
        return 1
    print(f'demo: every series got the verdict the demo expects ({len(series)} series, '
          f'{len(rechecks)} recheck)')
    return 0


def main():
    a = sys.argv[1:]
    if len(a) >= 4 and a[0] == 'wait':
        t, stages, rest = 120, [], a[4:]
        while rest:
            if rest[0] == '--timeout-min' and len(rest) >= 2:
                t, rest = int(rest[1]), rest[2:]
            elif rest[0] == '--deliver' and len(rest) >= 5 and rest[2] in ('planned', 'decided'):
                stages.append((rest[1], rest[2], rest[3].strip('<>'), rest[4]))
                rest = rest[5:]
            else:
                print(__doc__, file=sys.stderr)
                return 2
        return wait(a[1], a[2], a[3], t, stages)
    if len(a) == 5 and a[0] == 'report':
        return report(a[1], a[2], a[3], a[4])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main())
