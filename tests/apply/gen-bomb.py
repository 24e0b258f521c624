#!/usr/bin/env python3
"""Write to stdout a `git format-patch` mail that adds a file of SIZE zero
bytes as a GIT binary patch literal: deflate squeezes zeros about 1000
times, so 512 MiB fit in a mail of well under 1 MB.  For t_apply.sh.

    gen-bomb.py SIZE [NAME]
"""
import base64
import hashlib
import sys
import zlib


def main():
    size = int(sys.argv[1])
    name = sys.argv[2] if len(sys.argv) > 2 else "zeros.bin"
    co = zlib.compressobj(9)
    blob = hashlib.sha1(b"blob %d\0" % size)
    chunk = b"\0" * (1 << 20)
    parts = []
    left = size
    while left:
        n = min(left, len(chunk))
        parts.append(co.compress(chunk[:n]))
        blob.update(chunk[:n])
        left -= n
    parts.append(co.flush())
    data = b"".join(parts)
    out = sys.stdout
    out.write("From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
              "From: Mallory <mallory@example.org>\n"
              "Date: Fri, 1 Mar 2024 08:00:00 +0000\n"
              "Subject: [PATCH] add a big file\n\n---\n")
    # The full index line, so that git apply takes it too.
    out.write("diff --git a/%s b/%s\nnew file mode 100644\nindex %s..%s\n"
              "GIT binary patch\nliteral %d\n" % (name, name, "0" * 40, blob.hexdigest(), size))
    for i in range(0, len(data), 52):
        b = data[i:i + 52]
        c = chr(ord("A") + len(b) - 1) if len(b) <= 26 else chr(ord("a") + len(b) - 27)
        out.write(c + base64.b85encode(b, pad=True).decode() + "\n")
    out.write("\nliteral 0\nHcmV?d00001\n\n-- \n2.39.5\n\n")


main()
