#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""What a hostile or careless build step of a patch might do: reach the
network, write outside its workspace, use more CPU or memory than it may.
Used by tests/integration/t_sandbox.sh as both a configure step and a build
step of the meson project beside it.  Every attempt prints one line
"probe PHASE ACTION TARGET: RESULT"; the step fails (exit 1) when any
attempt failed, as a build that needs the network would.

probe.json (written by the test) names the targets:
  {"connect": [["127.0.0.1", PORT], ["192.0.2.1", 9]],
   "write": ["/etc/x", ...], "limits": true}
A non-loopback address is tried only where this network namespace has no
IPv4 route at all: there the kernel refuses at once ("Network is
unreachable") and no packet can leave.  With a route (no sandbox), it is
not tried and counts as an escape.
"""
import json
import os
import signal
import socket
import subprocess
import sys

phase = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "probe.json")) as f:
    conf = json.load(f)
failed = 0


def say(action, target, result):
    print(f"probe {phase} {action} {target}: {result}", flush=True)


say("uid", "", f"{os.getuid()}")
with open("/proc/net/dev") as f:
    ifaces = sorted(line.split(":")[0].strip() for line in f.readlines()[2:])
say("interfaces", "", " ".join(ifaces))
with open("/proc/self/limits") as f:
    for line in f:
        if line.startswith(("Max cpu time", "Max data size", "Max processes")):
            say("limit", line[:26].strip(), " ".join(line[26:].split()))

for host, port in conf.get("connect", []):
    target = f"{host}:{port}"
    if not host.startswith("127."):
        with open("/proc/net/route") as f:
            routes = [line for line in f.read().splitlines()[1:] if line.strip()]
        if routes:
            say("connect", target, "NOT TRIED: this network namespace has routes")
            failed += 1
            continue
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect((host, port))
        say("connect", target, "connected")
    except OSError as e:
        say("connect", target, e.strerror or str(e))
        failed += 1
    finally:
        s.close()

for path in conf.get("write", []):
    try:
        with open(path, "w") as f:
            f.write("written by a sandboxed build step\n")
        say("write", path, "written")
    except OSError as e:
        say("write", path, e.strerror)
        failed += 1

if conf.get("limits"):
    r = subprocess.run([sys.executable, "-c", "b = bytearray(1 << 30)"],
                       capture_output=True, text=True)
    err = r.stderr.strip().splitlines()
    say("memory", "1GiB", err[-1] if err else f"allocated (exit {r.returncode})")
    failed += r.returncode != 0
    burn = ("import time\nt = time.process_time()\n"
            "while time.process_time() - t < 30: pass")
    r = subprocess.run([sys.executable, "-c", burn])
    if r.returncode < 0:
        say("cpu", "burn", f"killed by {signal.Signals(-r.returncode).name}")
    else:
        say("cpu", "burn", f"30 s of CPU time used (exit {r.returncode})")
    failed += 1

if phase == "build" and not failed:
    with open("probe.txt", "w") as f:
        f.write("ok\n")
sys.exit(1 if failed else 0)
