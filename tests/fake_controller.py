#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A fake perfgate controller for the agent's tests (Python 3 standard library only).

It speaks the agent side of the controller API (README "Agent protocol"),
with scripted behaviour, and records every request, so that a test can run a
real perfgate-agent against it and check what the agent sent.

Usage:
    fake_controller.py [--port N] [--token T ...] [--agent-name NAME]
                       [--record FILE] [--quiet]

It binds 127.0.0.1 (port 0 = any free port), prints "listening on PORT" as
its first line on stdout (flushed), logs one line per request on stderr
(unless --quiet), and exits 0 on SIGTERM or SIGINT.  Requests are served on
threads, so that lease long-polls do not block the others.

The agent API (Authorization: Bearer T for one of the --token values, else
401 {"error": ...}):

POST /api/v1/agents/register {"labels": {...}, "facts": {...}}
     -> 200 {"agent": NAME, "labels": {...}}
POST /api/v1/lease {"wait_s": N}
     -> 200 {"job": {...}} with the oldest queued job, or 204 once wait_s
        passed with none.  A long-poll whose client closed the connection
        takes no job (recorded with status "gone"), as a careful
        controller would do.  The job gets "attempt" (its own, default 1),
        "lease_s" (default 30), "heartbeat_s" (default 1),
        "lease_expires" (epoch seconds) unless the queued job set them.
POST /api/v1/jobs/ID/heartbeat {"attempt", "stage", "progress"}
     -> 200 {"cancel": bool, "lease_expires": T}; 404 for a job never
        leased; 409 when attempt is not the job's current attempt
POST /api/v1/jobs/ID/logs?attempt=N&stage=S (text/plain)
     -> 200 {"bytes": total for the job}; 404 for an unknown job
POST /api/v1/jobs/ID/result {"attempt", "outcome", "detail", "fingerprint",
     "samples"}
     -> 200 {"status": "recorded"} the first time for (job, attempt),
        {"status": "duplicate"} for the same bytes again (SHA-256 of the
        body), 409 for different bytes; {"status": "acknowledged"} for a
        cancelled job; 404 for an unknown job; 400 for a malformed body

Control endpoints for the test (no token):

POST /_fake/jobs        a job object or a list of them: queued, in order.
                        "id" is required; anything else is copied into the
                        lease answer (e.g. "builtin_seconds").
POST /_fake/faults      a list of {"match": REGEX on the path, "action":
                        "status" or "drop", "status": 503, "count": N (-1:
                        until replaced)}, replacing the current list.  The
                        first fault whose regex matches (re.search) and
                        whose count is not 0 answers instead of the API:
                        "status" with {"error": "fake fault"}, "drop"
                        closes the connection without an answer.
POST /_fake/cancel/ID   heartbeats of job ID answer {"cancel": true} from
                        now on
POST /_fake/requeue/ID  job ID's current attempt goes up by one, as if its
                        lease had expired and another agent took it: the
                        holder's heartbeats answer 409 from now on
POST /_fake/tokens      a list of accepted tokens, replacing them
GET  /_fake/requests    every request so far: [{"t", "method", "path",
                        "query", "auth", "body", "status"}] in arrival
                        order ("status" is the answer's, or "drop")
GET  /_fake/results     {"ID/ATTEMPT": {"recorded": BODY-JSON, "posts": N,
                        "digests": [...], "answers": [...]}}

--record FILE appends each request, as one JSON line, to FILE too (the same
objects as /_fake/requests).
"""

import argparse
import hashlib
import http.server
import json
import re
import select
import signal
import socket
import sys
import threading
import time
import urllib.parse


class State:
    def __init__(self, tokens, agent_name, record):
        self.lock = threading.Condition()
        self.tokens = list(tokens)
        self.agent_name = agent_name
        self.record = record
        self.queue = []          # jobs not yet leased
        self.leased = {}         # id -> job as leased (current attempt)
        self.cancelled = set()
        self.faults = []
        self.requests = []
        self.results = {}        # "id/attempt" -> {...}
        self.log_bytes = {}      # id -> total

    def log_request(self, entry):
        with self.lock:
            self.requests.append(entry)
            if self.record:
                with open(self.record, 'a') as f:
                    f.write(json.dumps(entry) + '\n')

    def fault_for(self, path):
        with self.lock:
            for f in self.faults:
                if f.get('count', -1) != 0 and re.search(f['match'], path):
                    if f.get('count', -1) > 0:
                        f['count'] -= 1
                    return f
        return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    server_version = 'fake-perfgate-controller/1'

    def log_message(self, fmt, *args):
        if not self.server.quiet:
            sys.stderr.write('fake-controller: ' + (fmt % args) + '\n')

    # -- plumbing -------------------------------------------------------

    def read_body(self):
        n = int(self.headers.get('Content-Length') or 0)
        return self.rfile.read(n) if n > 0 else b''

    def answer(self, status, obj=None):
        self.entry['status'] = status
        self.server.state.log_request(self.entry)
        if status == 204 or obj is None:
            self.send_response(status)
            if status != 204:
                self.send_header('Content-Length', '0')
            self.end_headers()
            return
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def drop(self):
        self.entry['status'] = 'drop'
        self.server.state.log_request(self.entry)
        self.close_connection = True

    def do_GET(self):
        self.handle_any('GET')

    def do_POST(self):
        self.handle_any('POST')

    def handle_any(self, method):
        u = urllib.parse.urlsplit(self.path)
        body = self.read_body() if method == 'POST' else b''
        self.body = body
        self.query = urllib.parse.parse_qs(u.query)
        self.entry = {
            't': time.time(), 'method': method, 'path': u.path, 'query': u.query,
            'auth': self.headers.get('Authorization', ''),
            'content_type': self.headers.get('Content-Type', ''),
            'body': body.decode('utf-8', 'replace'),
        }
        st = self.server.state
        if u.path.startswith('/_fake/'):
            return self.control(method, u.path)
        f = st.fault_for(u.path)
        if f:
            if f.get('action') == 'drop':
                return self.drop()
            return self.answer(f.get('status', 503), {'error': 'fake fault'})
        auth = self.headers.get('Authorization', '')
        with st.lock:
            ok = auth.startswith('Bearer ') and auth[7:] in st.tokens
        if not ok:
            return self.answer(401, {'error': 'missing or invalid agent token'})
        if method != 'POST':
            return self.answer(405, {'error': 'POST only'})
        m = re.fullmatch(r'/api/v1/jobs/(\d+)/(heartbeat|logs|result)', u.path)
        if u.path == '/api/v1/agents/register':
            return self.register()
        if u.path == '/api/v1/lease':
            return self.lease()
        if m:
            return getattr(self, m.group(2))(int(m.group(1)))
        return self.answer(404, {'error': 'no such endpoint'})

    def client_gone(self):
        """True when the client closed its end of the connection."""
        try:
            r, _, _ = select.select([self.connection], [], [], 0)
            return bool(r) and self.connection.recv(1, socket.MSG_PEEK) == b''
        except OSError:
            return True

    def json_body(self):
        try:
            v = json.loads(self.body.decode())
        except ValueError:
            return None
        return v if isinstance(v, dict) else None

    # -- the agent API --------------------------------------------------

    def register(self):
        b = self.json_body()
        if b is None or not isinstance(b.get('labels'), dict) or \
                not isinstance(b.get('facts'), dict):
            return self.answer(400, {'error': 'labels and facts must be objects'})
        return self.answer(200, {'agent': self.server.state.agent_name,
                                 'labels': b['labels']})

    def lease(self):
        b = self.json_body()
        if b is None or not isinstance(b.get('wait_s'), int):
            return self.answer(400, {'error': 'wait_s must be an integer'})
        st = self.server.state
        deadline = time.time() + min(max(b['wait_s'], 0), 300)
        with st.lock:
            while not st.queue:
                left = deadline - time.time()
                if left <= 0 or self.client_gone():
                    break
                st.lock.wait(min(left, 0.05))
            if self.client_gone():
                # The agent walked away (it is stopping): a job handed to
                # a closed connection would wait for its lease to expire.
                self.entry['status'] = 'gone'
                st.log_request(self.entry)
                self.close_connection = True
                return None
            if not st.queue:
                job = None
            else:
                job = dict(st.queue.pop(0))
                job.setdefault('attempt', 1)
                job.setdefault('lease_s', 30)
                job.setdefault('heartbeat_s', 1)
                job.setdefault('lease_expires', int(time.time()) + job['lease_s'])
                st.leased[job['id']] = job
        if job is None:
            return self.answer(204)
        return self.answer(200, {'job': job})

    def heartbeat(self, job_id):
        st = self.server.state
        b = self.json_body()
        if b is None or not isinstance(b.get('attempt'), int):
            return self.answer(400, {'error': 'attempt must be an integer'})
        with st.lock:
            job = st.leased.get(job_id)
            cancel = job_id in st.cancelled
        if job is None:
            return self.answer(404, {'error': 'unknown job'})
        if b['attempt'] != job['attempt']:
            return self.answer(409, {'error': 'stale attempt'})
        return self.answer(200, {'cancel': cancel,
                                 'lease_expires': int(time.time()) + job['lease_s']})

    def logs(self, job_id):
        st = self.server.state
        with st.lock:
            if job_id not in st.leased:
                known = False
            else:
                known = True
                st.log_bytes[job_id] = st.log_bytes.get(job_id, 0) + len(self.body)
                total = st.log_bytes[job_id]
        if not known:
            return self.answer(404, {'error': 'unknown job'})
        return self.answer(200, {'bytes': total})

    def result(self, job_id):
        st = self.server.state
        b = self.json_body()
        if b is None or not isinstance(b.get('attempt'), int) or \
                not isinstance(b.get('outcome'), str) or \
                not isinstance(b.get('samples'), list):
            return self.answer(400, {'error': 'malformed result'})
        digest = hashlib.sha256(self.body).hexdigest()
        key = '%d/%d' % (job_id, b['attempt'])
        with st.lock:
            if job_id not in st.leased:
                status, obj = 404, {'error': 'unknown job'}
            else:
                r = st.results.setdefault(key, {'recorded': None, 'posts': 0,
                                                'digests': [], 'answers': []})
                r['posts'] += 1
                r['digests'].append(digest)
                if job_id in st.cancelled:
                    status, obj = 200, {'status': 'acknowledged'}
                elif r['recorded'] is None:
                    r['recorded'] = b
                    r['digest'] = digest
                    status, obj = 200, {'status': 'recorded'}
                elif r['digest'] == digest:
                    status, obj = 200, {'status': 'duplicate'}
                else:
                    status, obj = 409, {'error': 'another result was recorded '
                                                 'for this attempt'}
                r['answers'].append(obj.get('status', status))
        return self.answer(status, obj)

    # -- control --------------------------------------------------------

    def control(self, method, path):
        st = self.server.state
        if method == 'GET' and path == '/_fake/requests':
            with st.lock:
                reqs = list(st.requests)
            return self.send_plain(reqs)
        if method == 'GET' and path == '/_fake/results':
            with st.lock:
                res = json.loads(json.dumps(st.results))
            return self.send_plain(res)
        try:
            b = json.loads(self.body.decode() or 'null')
        except ValueError:
            return self.send_plain({'error': 'bad JSON'}, 400)
        with st.lock:
            if path == '/_fake/jobs':
                st.queue.extend(b if isinstance(b, list) else [b])
            elif path == '/_fake/faults':
                st.faults = list(b)
            elif path == '/_fake/tokens':
                st.tokens = list(b)
            elif path.startswith('/_fake/cancel/'):
                st.cancelled.add(int(path.rsplit('/', 1)[1]))
            elif path.startswith('/_fake/requeue/'):
                job = st.leased.get(int(path.rsplit('/', 1)[1]))
                if job is None:
                    return self.send_plain({'error': 'job not leased'}, 404)
                job['attempt'] += 1
            else:
                return self.send_plain({'error': 'no such control'}, 404)
            st.lock.notify_all()
        return self.send_plain({'ok': True})

    def send_plain(self, obj, status=200):
        """Answer a control request (not recorded)."""
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser(description='fake perfgate controller')
    ap.add_argument('--port', type=int, default=0)
    ap.add_argument('--token', action='append', default=[])
    ap.add_argument('--agent-name', default='lab-1')
    ap.add_argument('--record')
    ap.add_argument('--quiet', action='store_true')
    args = ap.parse_args()
    srv = Server(('127.0.0.1', args.port), Handler)
    srv.state = State(args.token, args.agent_name, args.record)
    srv.quiet = args.quiet

    def stop(signum, frame):
        # shutdown() waits for serve_forever() to return: not from its
        # own thread.
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    sys.stdout.write('listening on %d\n' % srv.server_address[1])
    sys.stdout.flush()
    try:
        srv.serve_forever(poll_interval=0.1)
    finally:
        srv.server_close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
