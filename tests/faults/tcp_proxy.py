#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A TCP forwarder on loopback for the fault cases: a server that can be
made unreachable (its port closed: connections refused) and come back on
the same port, by killing this process and starting it again.

    tcp_proxy.py --port N --to HOST:PORT

It binds 127.0.0.1:N (0: any free port), prints "listening on PORT" as its
first line on stdout (flushed), forwards each connection to HOST:PORT in
both directions, and exits on SIGTERM (open connections die with it).
"""
import argparse
import signal
import socket
import sys
import threading


def pipe(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(conn, target):
    try:
        up = socket.create_connection(target)
    except OSError:
        conn.close()
        return
    threading.Thread(target=pipe, args=(conn, up), daemon=True).start()
    threading.Thread(target=pipe, args=(up, conn), daemon=True).start()


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--port', type=int, default=0)
    p.add_argument('--to', required=True)
    a = p.parse_args()
    host, port = a.to.rsplit(':', 1)
    target = (host, int(port))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(('127.0.0.1', a.port))
    ls.listen(64)
    print('listening on %d' % ls.getsockname()[1], flush=True)
    while True:
        conn, _ = ls.accept()
        serve(conn, target)


if __name__ == '__main__':
    main()
