#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Re-create the damaged variants in tests/bench/ from the real captures
beside them (see README): cut, re-terminated, NUL bytes, binary junk, very
long lines, escape sequences, a digit changed.  Deterministic: no random
bytes, so the .in files and their .ok files stay stable.

    tests/bench/make-variants.py [DIR]     (default: the script's directory)
"""
import os
import re
import sys

here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
MP = os.path.join(here, "mempool")
TP = os.path.join(here, "testpmd")


def rd(d, name):
    with open(os.path.join(d, name), "rb") as f:
        return f.read()


def wr(d, name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def once(data, old, new):
    """Replace old (which must occur exactly once) with new."""
    if data.count(old) != 1:
        sys.exit("make-variants: %r occurs %d times" % (old, data.count(old)))
    return data.replace(old, new)


def upto(data, marker, inclusive=True):
    """data up to the first marker (and with it)."""
    i = data.index(marker)
    return data[: i + len(marker)] if inclusive else data[:i]


JUNK = bytes(range(256)) + b"\n" + bytes(range(255, -1, -1)) + b"\n"
crlf = lambda d: re.sub(rb"(?<!\r)\n", b"\r\n", d)
cr_only = lambda d: d.replace(b"\r\n", b"\r").replace(b"\n", b"\r")

# ---- mempool, from cap-2211.in (7 result lines, killed by SIGINT) --------
cap = rd(MP, "cap-2211.in")
assert cap.endswith(b"rate_persec=47670886\n")
wr(MP, "cut-mid-number.in", cap[:-5])                  # "...rate_persec=4767"
wr(MP, "cut-mid-prefix.in", cap[: -len(b"rate_persec=47670886\n")])
wr(MP, "crlf.in", crlf(rd(MP, "ref-2211-b.in")))
wr(MP, "cr-only.in", cr_only(cap))
d = once(cap, b"n_keep=128 constant_n=0 rate_persec=32007782",
         b"n_keep=1\x0028 constant_n=0 rate_persec=32007782")
d = once(d, b"start performance test (without cache)\n",
         b"start performance test (without cache)\n\x00\x00\x00\n")
d = once(d, b"mempool_autotest cache=0 cores=1 n_get_bulk=1 n_put_bulk=4",
         b"\x00mempool_autotest cache=0 cores=1 n_get_bulk=1 n_put_bulk=4")
wr(MP, "nul-bytes.in", d)
d = once(cap, b"start performance test (without cache)\n",
         b"start performance test (without cache)\n" + JUNK)
d = once(d, b"constant_n=1 rate_persec=32558284\n", b"constant_n=1 rate_persec=32558284\xff\xfe\n")
wr(MP, "binary-junk.in", d)
d = once(cap, b"constant_n=0 rate_persec=28980019\n",
         b"constant_n=0 rate_persec=28980019\n" + b"x" * 10000 + b"\n")
d = once(d, b"n_keep=32 constant_n=1 rate_persec=32558284",
         b"n_keep=32 constant_n=1" + b" " * 5000 + b"rate_persec=32558284")
d = once(d, b"n_keep=128 constant_n=1 rate_persec=33737932",
         b"n_keep=128 constant_n=1 rate_persec=33737932" + b" " * 3900)
wr(MP, "long-line.in", d)
d = once(cap, b"start performance test (without cache)\n",
         b"\x1b[2J\x1b[1;1Hstart performance test (without cache)\x1b[0m\n")
d = once(d, b"mempool_autotest cache=0 cores=1 n_get_bulk=1 n_put_bulk=1 n_keep=512 constant_n=0",
         b"\x1b[1mmempool_autotest cache=0 cores=1 n_get_bulk=1 n_put_bulk=1 n_keep=512\x1b[0m"
         b" constant_n=0")
d = once(d, b"rate_persec=31798067\n", b"rate_persec=31798067\x1b\n")
wr(MP, "esc.in", d)

# ---- testpmd ---------------------------------------------------------------
io = rd(TP, "cap-io.in")
acc = io.index(b"Accumulated forward statistics")
wr(TP, "cut-in-accumulated.in", io[: io.index(b"\n", io.index(b"RX-packets", acc)) + 1])
wr(TP, "cut-mid-cycles.in", upto(io, b"CPU cycles/packet=99.19 (total cyc"))
d = io[:acc] + once(io[acc:], b"RX-total: 13518016\n", b"RX-total: 13518017\n")
wr(TP, "garbled-total.in", d)
wr(TP, "cycles-mismatch.in", once(io, b"cycles/packet=99.19", b"cycles/packet=89.19"))
wr(TP, "cycles-wrong-packets.in", once(io, b"io packets=13518016", b"io packets=13518015"))
d = io[:acc] + once(io[acc:], b"TX-packets: 13518016 ", b"TX-packets: 135\x0018016 ")
wr(TP, "nul-bytes.in", d)
d = once(io, b"Press enter to exit\n", b"Press enter to exit\n" + JUNK)
d = once(d, b"Waiting for lcores to finish...\n",
         b"Waiting for lcores to finish...\n\x07\x08junk\x7f\n")
wr(TP, "binary-junk.in", d)

sp = rd(TP, "cap-statsperiod.in")
prints = [m.start() for m in re.finditer(rb"\x1b\[2J", sp)]
assert len(prints) == 3
third = sp[prints[2]:]
p1 = third.index(b"NIC statistics for port 1")
cut = prints[2] + third.index(b"\n", third.index(b"RX-packets", p1)) + 1
wr(TP, "killed-statsperiod.in", sp[:cut])
wr(TP, "one-print.in", sp[: prints[1]] + sp[sp.index(b"Telling cores to stop"):])
wr(TP, "crlf.in", crlf(sp))

ri = rd(TP, "ref-interactive.in")
wr(TP, "cr-only.in", cr_only(ri))
rs = rd(TP, "ref-statsperiod.in")
last = rs.rindex(b"NIC statistics for port 0")
nxt = rs.index(b"NIC statistics for port 1", last)
d = (b"x" * 10000 + b"\n" + rs[:last]
     + once(rs[last:nxt], b"  RX-errors: 0\n", b"  RX-errors: 0\n" + b"y" * 5000 + b"\n")
     + rs[nxt:])
wr(TP, "long-line.in", d)

# Two start/stop rounds at the prompt: the final Accumulated block counts.
stop1 = upto(ri, b"Done.\n")
cfg = ri[ri.index(b"testpmd> start\r\n"): ri.index(b"testpmd> show port stats all")]
stop2 = io[io.index(b"Telling cores to stop"):]
stop2 = upto(stop2, b"Done.\n")
tail = ri[ri.index(b"testpmd> quit\r\n"):]
wr(TP, "two-runs.in", stop1 + cfg + b"testpmd> stop\r\n" + stop2 + tail)
