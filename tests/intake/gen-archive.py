#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate a large public-inbox v2 style archive of patch mails, fast.

    gen-archive.py OUTDIR N [--mbox FILE] [--seed S]

Writes OUTDIR/git/0.git, a bare repository whose master branch has one
commit per message with the message as the blob "m" at the top of the
tree, exactly the v2 layout public-inbox writes, but built with one
`git fast-import` instead of one public-inbox-mda per mail (50,000 mails
would take most of an hour that way).  The mails are what a busy list
carries: series of 1 to 8 patches with and without cover letters, second
versions, replies with review tags, and now and then a recheck request.
With --mbox the same messages are also written as an mbox (git
format-patch style separators), for comparing with git's own tools.
"""

import argparse
import os
import random
import subprocess
import sys
import time

AREAS = ["mempool", "ring", "net/null", "net/ice", "eal", "ethdev", "hash", "lpm"]
PEOPLE = [("Ada Lovelace", "ada@example.org"), ("Grace Hopper", "grace@example.org"),
          ("Alan Turing", "alan@example.org"), ("Edsger Dijkstra", "ewd@example.org"),
          ("Barbara Liskov", "liskov@example.org")]


def diff(area, n, rnd):
    path = ("drivers/%s/%s_rxtx.c" % (area, area.split("/")[-1])
            if "/" in area else "lib/%s/rte_%s.c" % (area, area))
    lines = ["diff --git a/%s b/%s" % (path, path),
             "index %07x..%07x 100644" % (rnd.getrandbits(28), rnd.getrandbits(28)),
             "--- a/%s" % path, "+++ b/%s" % path,
             "@@ -%d,7 +%d,8 @@ static int" % (n * 10 + 1, n * 10 + 1)]
    for i in range(3):
        lines.append(" \tint v%d = %d;" % (i, i))
    lines.append("-\treturn count;")
    lines.append("+\tcount += burst;")
    lines.append("+\treturn count;")
    for i in range(3):
        lines.append(" \t/* context %d */" % i)
    return path, "\n".join(lines) + "\n"


def mail(frm, date, msgid, subject, body, irt=None, refs=()):
    h = ["From: %s <%s>" % frm, "To: dev@dpdk.org",
         "Date: %s" % time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime(date)),
         "Message-ID: <%s>" % msgid, "Subject: %s" % subject]
    if irt:
        h.append("In-Reply-To: <%s>" % irt)
    if refs:
        h.append("References: %s" % " ".join("<%s>" % r for r in refs))
    h += ["MIME-Version: 1.0", "Content-Type: text/plain; charset=UTF-8",
          "Content-Transfer-Encoding: 8bit"]
    return ("\n".join(h) + "\n\n" + body).encode()


def series_mails(rnd, k, date, version, prev_cover):
    who = rnd.choice(PEOPLE)
    area = rnd.choice(AREAS)
    title = "%s: improve path %d" % (area, k)
    total = rnd.choice([1, 1, 1, 2, 3, 3, 4, 5, 8])
    vtag = "" if version == 1 else " v%d" % version
    out = []
    cover = None
    root = []
    if total > 1 and rnd.random() < 0.7:
        cover = "series%d.v%d.cover@example.org" % (k, version)
        body = "This series improves %s.\n\n%s\n" % (area, "Changes since v1: review.\n" if version > 1 else "")
        out.append(mail(who, date, cover, "[PATCH%s 0/%d] %s" % (vtag, total, title), body,
                        irt=prev_cover, refs=[prev_cover] if prev_cover else ()))
        root = [cover]
    for i in range(1, total + 1):
        msgid = "series%d.v%d.p%d@example.org" % (k, version, i)
        path, d = diff(area, i, rnd)
        counter = " %d/%d" % (i, total) if total > 1 else ""
        body = ("Change %d of %s.\n\nSigned-off-by: %s <%s>\n---\n %s | 3 ++-\n"
                " 1 file changed, 2 insertions(+), 1 deletion(-)\n\n%s-- \n2.39.5\n"
                % (i, title, who[0], who[1], path, d))
        irt = root[0] if root else (prev_cover if prev_cover else None)
        out.append(mail(who, date + i, msgid, "[PATCH%s%s] %s: step %d of change %d" % (vtag, counter, area, i, k),
                        body, irt=irt, refs=root or ([prev_cover] if prev_cover else ())))
        if not root and total > 1 and i == 1:
            root = [msgid]
    return out, cover or ("series%d.v%d.p1@example.org" % (k, version)), who


def generate(n, seed):
    rnd = random.Random(seed)
    mails, k, date = [], 0, 1767225600
    pending_v2 = []
    while len(mails) < n:
        k += 1
        date += 60
        if pending_v2 and rnd.random() < 0.2:
            kk, cover = pending_v2.pop(0)
            ms, _, _ = series_mails(rnd, kk, date, 2, cover)
        else:
            ms, cover, who = series_mails(rnd, k, date, 1, None)
            if rnd.random() < 0.2:
                pending_v2.append((k, cover))
            r = rnd.random()
            if r < 0.3:
                rev = rnd.choice([p for p in PEOPLE if p != who])
                text = "Acked-by: %s <%s>\n" % rev
                if r < 0.03:
                    text = "Recheck-request: perfgate-demo-Performance\n"
                ms.append(mail(rev, date + 30, "reply%d@example.org" % k,
                               "Re: series %d" % k, "Looks good.\n\n" + text, irt=cover, refs=[cover]))
        mails.extend(ms)
    return mails[:n]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("n", type=int)
    ap.add_argument("--mbox")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    mails = generate(a.n, a.seed)
    repo = os.path.join(a.outdir, "git", "0.git")
    os.makedirs(repo, exist_ok=True)
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1")
    subprocess.run(["git", "init", "-q", "--bare", repo], check=True, env=env)
    fi = subprocess.Popen(["git", "-C", repo, "fast-import", "--quiet"], stdin=subprocess.PIPE,
                          env=env)
    w = fi.stdin.write
    for i, m in enumerate(mails):
        ts = 1767225600 + i
        w(b"blob\nmark :%d\ndata %d\n" % (2 * i + 1, len(m)) + m + b"\n")
        msg = b"message %d\n" % i
        w(b"commit refs/heads/master\nmark :%d\n" % (2 * i + 2))
        w(b"author perfgate <perfgate@example.org> %d +0000\n" % ts)
        w(b"committer perfgate <perfgate@example.org> %d +0000\n" % ts)
        w(b"data %d\n" % len(msg) + msg)
        w(b"deleteall\nM 100644 :%d m\n\n" % (2 * i + 1))
    fi.stdin.close()
    if fi.wait() != 0:
        sys.exit("gen-archive: git fast-import failed")
    if a.mbox:
        with open(a.mbox, "wb") as f:
            for i, m in enumerate(mails):
                f.write(b"From %040x Mon Sep 17 00:00:00 2001\n" % i)
                f.write(m)
                f.write(b"\n")
    print("gen-archive: %d messages in %s" % (len(mails), repo))


if __name__ == "__main__":
    main()
