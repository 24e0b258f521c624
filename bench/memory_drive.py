#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fake agents for bench/memory.sh (Python 3 standard library only).

Usage: memory_drive.py URL TOKENS_FILE PID CHECKPOINTS

Each token of TOKENS_FILE (one a line) is an agent with its own keep-alive
connection to the controller at URL.  The agents take turns: each does one
job as a real agent does (register once; then lease, GET the series mbox,
a heartbeat, a log chunk, the result with samples of the demo profile's
benchmarks, base and patched alike), until the last checkpoint's number
of results was recorded.  At each checkpoint (comma-separated job counts,
ascending) it waits a second for the controller's passes on those results
and prints "after N: rss=KiB hwm=KiB anon=KiB file=KiB busy503=N
reconnects=N t=SECONDSs" from /proc/PID/status (VmRSS, VmHWM, RssAnon,
RssFile); busy503 counts the requests answered 503 and tried again,
reconnects the keep-alive connections found closed.
"""

import http.client
import json
import random
import sys
import time
import urllib.parse

SAMPLES = [
    ('mempool_perf_demo', 'mempool.nocache.cores1.keep128.get32.put32.const0', 10.0e6),
    ('mempool_perf_demo', 'mempool.cache.cores1.keep128.get32.put32.const0', 20.0e6),
    ('testpmd_io_demo', 'fwd.rx_pps', 5.0e6),
]


def status_kib(pid):
    out = {}
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            key, _, rest = line.partition(':')
            if key in ('VmRSS', 'VmHWM', 'RssAnon', 'RssFile'):
                out[key] = int(rest.split()[0])
    return out


class Agent:
    def __init__(self, url, token, rng):
        u = urllib.parse.urlsplit(url)
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        self.token = token
        self.rng = rng
        self.busy = 0
        self.reconnects = 0

    def call(self, method, path, body=b'', ctype='application/json', want=(200,)):
        # A 503 (the store busy past its timeout on a loaded machine) is
        # tried again, as the agent does, and so is a keep-alive
        # connection the controller closed while this agent was idle
        # (API_CONN_TIMEOUT_S): counted in self.busy and self.reconnects.
        r = None
        for _ in range(20):
            try:
                self.conn.request(method, path, body=body, headers={
                    'Authorization': 'Bearer ' + self.token, 'Content-Type': ctype})
                r = self.conn.getresponse()
                data = r.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.conn.close()
                self.reconnects += 1
                r = None
                continue
            if r.status != 503:
                break
            self.busy += 1
            time.sleep(0.5)
        if r is None:
            sys.exit(f'memory_drive: {method} {path}: the connection kept failing')
        if r.status not in want:
            sys.exit(f'memory_drive: {method} {path}: HTTP {r.status}: {data[:300]!r}')
        return r.status, data

    def post(self, path, obj, want=(200,)):
        return self.call('POST', path, json.dumps(obj).encode(), want=want)

    def job(self):
        """One job: 1 when a result was recorded, 0 when nothing was queued."""
        status, data = self.post('/api/v1/lease', {'wait_s': 0}, want=(200, 204))
        if status == 204:
            return 0
        job = json.loads(data)['job']
        jid, attempt = job['id'], job['attempt']
        mbox = urllib.parse.urlsplit(job['series']['mbox_url']).path
        self.call('GET', mbox)
        self.post(f'/api/v1/jobs/{jid}/heartbeat',
                  {'attempt': attempt, 'stage': 'bench', 'progress': 50})
        log = (f'fake agent: job {jid} attempt {attempt}\n' * 20).encode()
        self.call('POST', f'/api/v1/jobs/{jid}/logs?attempt={attempt}&stage=bench', log,
                  ctype='text/plain')
        r0, n = job.get('repetition_base', 0), max(job.get('repetitions', 3), 8)
        samples = [{'side': side, 'benchmark': b, 'metric': m, 'repetition': r0 + i,
                    'value': v * (1 + self.rng.uniform(-0.002, 0.002)), 'unit': 'u'}
                   for b, m, v in SAMPLES for side in ('base', 'patched') for i in range(n)]
        _, data = self.post(f'/api/v1/jobs/{jid}/result',
                            {'attempt': attempt, 'outcome': 'ok', 'detail': 'fake agent',
                             'fingerprint': {'runner': 'fake'}, 'samples': samples})
        # "duplicate": the answer to a first post was lost with its
        # connection, and the post was made again.
        if json.loads(data).get('status') not in ('recorded', 'duplicate'):
            sys.exit(f'memory_drive: job {jid}: {data!r}')
        return 1


def main():
    url, tokens_file, pid, points = sys.argv[1:5]
    points = sorted({int(p) for p in points.split(',')})
    rng = random.Random(1)
    with open(tokens_file) as f:
        agents = [Agent(url, t.strip(), rng) for t in f if t.strip()]
    for a in agents:
        a.post('/api/v1/agents/register', {'labels': {'pool': 'demo'}, 'facts': {}})
    done, idle = 0, 0
    start = time.monotonic()
    while points:
        got = 0
        for a in agents:
            if done + got < points[0]:
                got += a.job()
        done += got
        if got == 0:
            # Nothing queued: the verdict pass has follow-ups to queue, or
            # the seed was too small.
            idle += 1
            if idle > 300:
                sys.exit(f'memory_drive: no job to lease after {done} results')
            time.sleep(0.1)
            continue
        idle = 0
        if done >= points[0]:
            time.sleep(1)
            k = status_kib(pid)
            busy = sum(a.busy for a in agents)
            reconnects = sum(a.reconnects for a in agents)
            print(f'after {done}: rss={k["VmRSS"]} hwm={k["VmHWM"]} anon={k["RssAnon"]}'
                  f' file={k["RssFile"]} busy503={busy} reconnects={reconnects}'
                  f' t={time.monotonic() - start:.0f}s', flush=True)
            points.pop(0)


if __name__ == '__main__':
    main()
