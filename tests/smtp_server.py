#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A real SMTP server on loopback for perfgate's tests, on aiosmtpd (Debian's
python3-aiosmtpd): ESMTP, STARTTLS, implicit TLS, AUTH PLAIN and LOGIN, run
unprivileged on any port.

Usage:
    smtp_server.py --spool DIR [--port N] [--starttls CERT KEY] [--tls CERT KEY]
                   [--auth USER:PASSWORD] [--auth-mechs PLAIN,LOGIN]
                   [--fail-data "451 4.3.0 try later" --fail-count N]
                   [--reject-rcpt ADDR] [--mute]

It binds 127.0.0.1 (port 0 = any free port), prints "listening on PORT" as
its first line on stdout (flushed), logs one line per event on stderr, and
exits 0 on SIGTERM or SIGINT.

--starttls CERT KEY   offer STARTTLS with this certificate (PEM files)
--tls CERT KEY        TLS from the first byte (smtps://) instead
--auth USER:PASSWORD  require AUTH with these credentials before MAIL
                      (offered only over TLS, as aiosmtpd does by default)
--auth-mechs M,...    offer only these mechanisms (default PLAIN,LOGIN)
--fail-data REPLY     answer the end of DATA with REPLY (e.g. "451 4.3.0 try
                      later" or "554 5.6.0 rejected") for the first
                      --fail-count messages (default 1); they are not stored
--reject-rcpt ADDR    answer RCPT TO:<ADDR> with "550 5.1.1 <ADDR>: Recipient
                      address rejected" (repeatable)
--mute                accept connections and never answer (for timeouts)

Each message taken is stored as DIR/NNNN.eml (the bytes received, with the
CRLF line ends of the wire and dot-stuffing undone) and DIR/NNNN.json
{"mail_from", "rcpt_tos", "tls", "auth_login", "peer"}, both written to a
temporary name and renamed, the .json last, so a test that sees the .json
sees the whole message.
"""
import argparse
import asyncio
import json
import os
import signal
import ssl
import sys

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def write_atomic(path, data):
    tmp = path + '.tmp'
    with open(tmp, 'wb') as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, path)


class Handler:
    def __init__(self, args, implicit_tls):
        self.args = args
        self.implicit_tls = implicit_tls
        self.fail_left = args.fail_count if args.fail_data else 0
        self.count = 0

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.lower() in (a.lower() for a in self.args.reject_rcpt):
            log(f'RCPT {address}: rejected')
            return f'550 5.1.1 <{address}>: Recipient address rejected'
        envelope.rcpt_tos.append(address)
        return '250 OK'

    async def handle_DATA(self, server, session, envelope):
        if self.fail_left > 0:
            self.fail_left -= 1
            log(f'DATA from {envelope.mail_from}: answering "{self.args.fail_data}"')
            return self.args.fail_data
        self.count += 1
        base = os.path.join(self.args.spool, '%04d' % self.count)
        login = None
        if session.authenticated and isinstance(session.auth_data, LoginPassword):
            login = session.auth_data.login.decode('utf-8', 'replace')
        meta = {
            'mail_from': envelope.mail_from,
            'rcpt_tos': envelope.rcpt_tos,
            'tls': bool(session.ssl) or self.implicit_tls,
            'auth_login': login,
            'peer': list(session.peer) if session.peer else None,
        }
        write_atomic(base + '.eml', envelope.original_content or envelope.content)
        write_atomic(base + '.json', json.dumps(meta).encode())
        log(f'DATA from {envelope.mail_from} to {envelope.rcpt_tos}: stored {base}.eml')
        return '250 2.0.0 Ok: queued as %04d' % self.count


def authenticator_for(user, password):
    def authenticate(server, session, envelope, mechanism, auth_data):
        ok = (isinstance(auth_data, LoginPassword) and
              auth_data.login == user.encode() and auth_data.password == password.encode())
        log(f'AUTH {mechanism}: {"ok" if ok else "refused"}')
        if ok:
            return AuthResult(success=True, auth_data=auth_data)
        # handled=False: aiosmtpd then answers "535 5.7.8 Authentication
        # credentials invalid" (with the default it answers nothing).
        return AuthResult(success=False, handled=False)
    return authenticate


def tls_context(cert, key):
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    return ctx


async def main():
    p = argparse.ArgumentParser()
    p.add_argument('--spool', required=True)
    p.add_argument('--port', type=int, default=0)
    p.add_argument('--starttls', nargs=2, metavar=('CERT', 'KEY'))
    p.add_argument('--tls', nargs=2, metavar=('CERT', 'KEY'))
    p.add_argument('--auth')
    p.add_argument('--auth-mechs', default='PLAIN,LOGIN')
    p.add_argument('--fail-data')
    p.add_argument('--fail-count', type=int, default=1)
    p.add_argument('--reject-rcpt', action='append', default=[])
    p.add_argument('--mute', action='store_true')
    args = p.parse_args()
    os.makedirs(args.spool, exist_ok=True)

    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: stop.done() or stop.set_result(None))

    if args.mute:
        silent = []

        def mute_factory():
            class Mute(asyncio.Protocol):
                def connection_made(self, transport):
                    silent.append(transport)   # keep it open, say nothing
            return Mute()
        server = await loop.create_server(mute_factory, '127.0.0.1', args.port)
    else:
        handler = Handler(args, implicit_tls=bool(args.tls))
        kw = {'hostname': 'smtp.test', 'ident': 'perfgate-test-smtp'}
        if args.starttls:
            kw['tls_context'] = tls_context(*args.starttls)
        if args.auth:
            user, _, password = args.auth.partition(':')
            kw['authenticator'] = authenticator_for(user, password)
            kw['auth_required'] = True
            offered = {m.strip().upper() for m in args.auth_mechs.split(',')}
            kw['auth_exclude_mechanism'] = [m for m in ('PLAIN', 'LOGIN') if m not in offered]
            # Implicit TLS: the whole connection is encrypted, but aiosmtpd
            # only knows about STARTTLS.
            kw['auth_require_tls'] = not args.tls
        server = await loop.create_server(
            lambda: SMTP(handler, **kw), '127.0.0.1', args.port,
            ssl=tls_context(*args.tls) if args.tls else None)
    port = server.sockets[0].getsockname()[1]
    print(f'listening on {port}', flush=True)
    async with server:
        await stop
    log('stopped')


if __name__ == '__main__':
    asyncio.run(main())
