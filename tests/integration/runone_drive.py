#!/usr/bin/env python3
"""Drive `perfgate-agent run-one` through its stdin and stdout, as the
controller's SSH dispatcher would (lib/runone.h).

usage: runone_drive.py OUT STEP... -- COMMAND...

Every line the agent writes is appended to OUT.lines as it comes; its
stderr goes to OUT.err, its exit status to OUT.rc.  Steps, in order:
  send:JSON        write one line to its stdin
  expect:TYPE      wait (up to 30 s) for the next line of that type
  child            wait for the `sleep` child the builtin runner spawns and
                   write "PID PGID" to OUT.child
  close            close its stdin (the connection drops)
  wait             wait (up to 60 s) for it to exit
Exits 0 when every step was done, 1 otherwise (saying which).
"""
import os
import subprocess
import sys
import threading
import time


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == pid:
            out.append((int(d), comm, int(fields[2])))
    return out


def main():
    sep = sys.argv.index("--")
    out, steps, cmd = sys.argv[1], sys.argv[2:sep], sys.argv[sep + 1:]
    lines = []
    cond = threading.Condition()
    with open(out + ".err", "wb") as err:
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=err)

    def reader():
        with open(out + ".lines", "wb") as f:
            for line in p.stdout:
                f.write(line)
                f.flush()
                with cond:
                    lines.append(line)
                    cond.notify_all()
        with cond:
            lines.append(None)
            cond.notify_all()

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    seen = 0
    for step in steps:
        kind, _, arg = step.partition(":")
        if kind == "send":
            try:
                p.stdin.write(arg.encode() + b"\n")
                p.stdin.flush()
            except BrokenPipeError:
                print("send: stdin closed", file=sys.stderr)
                return 1
        elif kind == "expect":
            deadline = time.time() + 30
            found = False
            with cond:
                while not found:
                    while seen < len(lines):
                        line = lines[seen]
                        seen += 1
                        if line is None:
                            print("expect %s: stdout closed" % arg, file=sys.stderr)
                            return 1
                        if ('"type":"%s"' % arg).encode() in line:
                            found = True
                            break
                    if not found:
                        if time.time() > deadline:
                            print("expect %s: timed out" % arg, file=sys.stderr)
                            return 1
                        cond.wait(0.1)
        elif kind == "child":
            deadline = time.time() + 30
            while True:
                kids = [k for k in children(p.pid) if k[1] == "sleep"]
                if kids:
                    with open(out + ".child", "w") as f:
                        f.write("%d %d\n" % (kids[0][0], kids[0][2]))
                    break
                if time.time() > deadline:
                    print("child: no sleep child", file=sys.stderr)
                    return 1
                time.sleep(0.05)
        elif kind == "close":
            p.stdin.close()
        elif kind == "wait":
            try:
                rc = p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
                print("wait: still running after 60 s", file=sys.stderr)
                return 1
            t.join(5)
            with open(out + ".rc", "w") as f:
                f.write("%d\n" % rc)
        else:
            print("unknown step %s" % step, file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
