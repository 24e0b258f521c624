#!/bin/sh
# Less noise per pair (issue 16): on this machine, which way of running
# the demo profile's gated benchmarks gives the tightest paired
# base/patched log ratios for the same wall time.  Both sides run the very
# same build (an A/A pair; two copies of the programs, as a job has two
# build directories), so every ratio is noise.  The gated keys: the
# mempool_perf subset's cached and uncached 32-object rates
# (mempool.cache, mempool.nocache) and testpmd io's fwd.rx_pps on net_null
# ports, run with the profile's arguments, as the agent runs them
# (stdbuf -oL, dpdk-test to its end, testpmd's stdin held for duration_s
# from "Press enter to exit", fwd.rx_pps = RX-packets / that time).
# Schemes, each run as "jobs" (rounds) of PG_BENCH_NOISE_REPS repetitions
# (default 4), PG_BENCH_NOISE_ROUNDS rounds each (default 4), the rounds
# of the schemes interleaved and their order rotated from one set of
# rounds to the next, so that the machine's changing load falls on all of
# them alike (PG_BENCH_NOISE_SCHEMES picks them, default "a b d e"; empty
# for the calibration alone):
#   a  today's runner: per repetition each benchmark on both sides, base
#      first on even repetitions, patched first on odd ones (AB, BA, ...);
#   b  as a, with one discarded warm-up run per side and benchmark at the
#      start of each round (paid for in wall time);
#   c  ABBA: a's runs, consecutive AB and BA pairs of a round taken as one
#      unit whose log ratio is the mean of theirs (a linear drift and a
#      first/second position bias cancel);
#   d  longer runs, half the repetitions: the mempool subset at twice its
#      time_s (a build of its own), testpmd at twice duration_s;
#   e  as a with EAL's --main-lcore 1: the mempool test on CPU 1 and
#      testpmd's forwarding lcore on CPU 0 (where the profile has them
#      the other way round), for the price of nothing.
# Per scheme and key: the number of pairs (units for c), the robust spread
# of their log ratios (1.4826 * MAD, in %), the scheme's wall time
# (warm-ups, process starts and exits included), the spread against a's,
# and the standard error of the mean log ratio at a's wall time against
# a's (se_vs_a_equal_wall: below 1 means more precision for the same
# time), with a 90 % bootstrap interval.  Diagnostics over every scheme's
# pairs: position bias (the second run of a pair against the first), the
# first pair of a round against the others, the spread of the pairs by
# the load other processes (and steal) put on the machine during their
# runs (/proc/stat less the runs' own CPU time): quiet (under 0.2 CPU),
# some (free CPUs left besides the benchmark's), contended (more: a
# benchmark thread shares its CPU), and, from b, warm-up runs against
# the measured runs of their round.  Each scheme's line says its rounds'
# median load, so that a scheme favoured by a quiet minute shows.
# Then, for each patch kind of PG_BENCH_NOISE_KINDS (default slowdown5;
# tests/integration/dpdk_lib.sh's dpdk_patch), PG_BENCH_NOISE_CAL_PAIRS
# (default 12) interleaved pairs base against patched, as scheme a: the
# measured effect per key (median, 90 % bootstrap interval) and the pairs'
# spread.
# Sources, build directories and ccache live in PG_BENCH_NOISE_DIR
# (default $PG_CACHE/noise) and are reused: a first run pays a cold
# release build (about 4 minutes here) and one mostly from ccache per
# other variant; then about 20 minutes of runs with the defaults (4
# rounds: 240 runs), plus 4 per calibrated kind.  The runs' records (JSON
# lines) are kept in PG_BENCH_NOISE_DIR/last-*.jsonl, and
# PG_BENCH_NOISE_REPLAY=FILE prints the comparison again from such a file
# without running anything.  Skips (exit 0) when the DPDK tree cannot be
# made (scripts/dpdk-tree.sh: no deb-src access).
set -u
PG_BUILD=${PG_BUILD:?run through make bench}
PG_TOP=$(cd "$(dirname "$0")/.." && pwd)
export PG_BUILD PG_TOP
. "$PG_TOP/tests/integration/lib.sh"
. "$PG_TOP/tests/integration/dpdk_lib.sh"
rounds=${PG_BENCH_NOISE_ROUNDS:-4}
reps=${PG_BENCH_NOISE_REPS:-4}
kinds=${PG_BENCH_NOISE_KINDS-slowdown5}
cal_pairs=${PG_BENCH_NOISE_CAL_PAIRS:-12}
replay=${PG_BENCH_NOISE_REPLAY:-}
schemes=${PG_BENCH_NOISE_SCHEMES-a b d e}
PGB=$PG_BUILD/tests/tools/pg_build
HT=$PG_BUILD/tests/tools/harness-tool

# The measuring program: runs a scheme set or a calibration, prints the figures.
cat >"$TMP/np.py" <<'PY'
import json, math, os, random, re, resource, select, shutil, signal, statistics, subprocess, sys, time

CFG = json.load(open(sys.argv[1]))
PROFILE = json.load(open(CFG["profile"]))
CTX = PROFILE["contexts"]["perfgate-demo-Performance"]
HC = PROFILE["host_classes"][CTX["host_class"]]
MP = PROFILE["benchmarks"]["mempool_perf_demo"]
TP = PROFILE["benchmarks"]["testpmd_io_demo"]
CLK = os.sysconf("SC_CLK_TCK")
MP_RE = re.compile(r"^mempool_autotest cache=(\d+) cores=(\d+) n_get_bulk=(\d+) n_put_bulk=(\d+) "
                   r"n_keep=(\d+)(?: constant_n=(\d+))? rate_persec=(\d+)\s*$")
KEYS = ["mempool.cache", "mempool.nocache", "fwd.rx_pps"]
# Load bins: other processes' CPU (and steal) during a run, in CPUs.  A run
# keeps one CPU busy; beyond the others (FREE) something shares its CPU.
QUIET = 0.2
FREE = (os.cpu_count() or 2) - 1
DESC = {
    "a": "today: AB, BA, ... one process per run",
    "b": "a, with a discarded warm-up run per side and benchmark per round",
    "c": "ABBA units from a's runs (mean of consecutive AB and BA log ratios)",
    "d": "mempool time_s and testpmd duration_s doubled, half the repetitions",
    "e": "a with --main-lcore 1 (mempool on CPU 1, testpmd forwarding on CPU 0)",
}
seq = [0]


def cpu_stat():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal
    return v[0] + v[1] + v[2] + v[5] + v[6], v[7] if len(v) > 7 else 0


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def expand(args, prefix, extra):
    """The profile's arguments as the planner and the agent expand them."""
    out = []
    for a in args:
        if a == "{mem_args}":
            out += (["--no-huge"] if not HC.get("hugepages") else []) + ["-m", str(HC["memory_mb"])]
            continue
        out.append(a.replace("{lcores}", HC["lcores"]).replace("{file_prefix}", prefix))
    i = out.index("--") if "--" in out else len(out)  # EAL options before "--"
    return out[:i] + extra + out[i:]


def start(bench, build, extra, stdin):
    seq[0] += 1
    prefix = "pgnp%d_%d" % (os.getpid(), seq[0])
    argv = ["stdbuf", "-oL", "-eL", os.path.join(build, bench["program"])] + \
        expand(bench["args"], prefix, extra)
    env = dict(os.environ)
    env.update(bench.get("env", {}))
    p = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         env=env, start_new_session=True)
    return p, prefix


def finish(p, prefix):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()
    shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)


def run_mempool(build, extra):
    p, prefix = start(MP, build, extra, subprocess.DEVNULL)
    try:
        out, _ = p.communicate(timeout=MP["timeout_s"])
    except subprocess.TimeoutExpired:
        finish(p, prefix)
        return None, "timed out"
    finish(p, prefix)
    vals = {}
    for line in out.decode(errors="replace").splitlines():
        m = MP_RE.match(line.strip())
        if m:
            vals["mempool.nocache" if m.group(1) == "0" else "mempool.cache"] = float(m.group(7))
    if p.returncode != 0 or len(vals) != 2:
        return None, "exit %s, %d result lines" % (p.returncode, len(vals))
    return vals, ""


def run_testpmd(build, extra, duration):
    p, prefix = start(TP, build, extra, subprocess.PIPE)
    fd = p.stdout.fileno()
    buf, t0, t1, end = b"", None, None, time.monotonic() + TP["timeout_s"]
    while True:
        now = time.monotonic()
        if now > end:
            finish(p, prefix)
            return None, "timed out"
        if t0 is not None and t1 is None and now - t0 >= duration:
            p.stdin.close()
            t1 = now
        r, _, _ = select.select([fd], [], [], 0.05 if t1 is None else 1.0)
        if r:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            buf += chunk
            if t0 is None and b"Press enter to exit" in buf:
                t0 = time.monotonic()
    finish(p, prefix)
    text = buf.decode(errors="replace")
    acc = text.rfind("Accumulated forward statistics for all ports")
    m = re.search(r"RX-packets:\s*(\d+)", text[acc:]) if acc >= 0 else None
    if not m or t1 is None or p.returncode != 0:
        return None, "exit %s, no accumulated statistics" % p.returncode
    return {"fwd.rx_pps": int(m.group(1)) / (t1 - t0)}, ""


def run_once(bench, build, extra, duration):
    b0, s0 = cpu_stat()
    c0 = child_cpu()
    t = time.monotonic()
    vals, why = run_mempool(build, extra) if bench == "mempool" else \
        run_testpmd(build, extra, duration)
    wall = time.monotonic() - t
    b1, s1 = cpu_stat()
    own = child_cpu() - c0
    # other processes' CPU use during the run, in CPUs, and the VM's steal
    return {"vals": vals, "why": why, "wall": wall,
            "other": max(0.0, ((b1 - b0) / CLK - own) / wall) if wall > 0 else 0.0,
            "steal": (s1 - s0) / CLK / wall if wall > 0 else 0.0}


def run_round(sch, rnd, log):
    """One job's benchmark stage in scheme sch: its repetitions, each
    benchmark on both sides, base first on even repetitions (the runner's
    order), after the warm-ups if any."""
    t = time.monotonic()
    builds, extra, recs = sch["builds"], sch.get("extra", []), []
    if sch.get("warmup"):
        for bench in ("mempool", "testpmd"):
            for side in (0, 1):
                r = run_once(bench, builds[side], extra, sch["duration"])
                r.update(scheme=sch["name"], round=rnd, rep=-1, bench=bench, side=side,
                         warmup=True)
                recs.append(r)
    for rep in range(sch["reps"]):
        for bench in ("mempool", "testpmd"):
            for k in (0, 1):
                side = 1 - k if rep % 2 else k
                r = run_once(bench, builds[side], extra, sch["duration"])
                r.update(scheme=sch["name"], round=rnd, rep=rep, bench=bench, side=side,
                         warmup=False)
                recs.append(r)
    wall = time.monotonic() - t
    for r in recs:
        log.write(json.dumps(r) + "\n")
    log.flush()
    return recs, wall


def pairs_of(recs):
    """{key: [(round, rep, log(patched/base), busy)]} from the measured
    runs; busy: the larger of the two runs' other CPU + steal."""
    by, out = {}, {}
    for r in recs:
        if not r["warmup"] and r["vals"]:
            by.setdefault((r["round"], r["rep"], r["bench"]), {})[r["side"]] = r
    for (rnd, rep, bench), s in sorted(by.items()):
        if 0 not in s or 1 not in s:
            continue
        for key, v in s[1]["vals"].items():
            if key in s[0]["vals"] and v > 0 and s[0]["vals"][key] > 0:
                out.setdefault(key, []).append(
                    (rnd, rep, math.log(v / s[0]["vals"][key]),
                     max(s[0]["other"] + s[0]["steal"], s[1]["other"] + s[1]["steal"])))
    return out


def abba(pl):
    """Repetitions 2k (AB) and 2k+1 (BA) of a round as one unit: the mean
    of their log ratios (the geometric mean of the two ratios)."""
    by = {}
    for rnd, rep, lr, o in pl:
        by.setdefault((rnd, rep // 2), []).append((lr, o))
    return [(k[0], k[1], (v[0][0] + v[1][0]) / 2, max(v[0][1], v[1][1]))
            for k, v in sorted(by.items()) if len(v) == 2]


def rsd(x):
    if len(x) < 3:
        return float("nan")
    m = statistics.median(x)
    return 100 * 1.4826 * statistics.median(abs(v - m) for v in x)


def boot_ratio(x, y, scale, n=2000):
    """90 % bootstrap interval of rsd(x) / rsd(y) * scale."""
    rng, rs = random.Random(1), []
    for _ in range(n):
        a, b = rsd([rng.choice(x) for _ in x]), rsd([rng.choice(y) for _ in y])
        if b > 0:
            rs.append(a / b * scale)
    rs.sort()
    return (rs[int(0.05 * len(rs))], rs[int(0.95 * len(rs)) - 1]) if rs else (math.nan, math.nan)


def pct(lr):
    return (math.exp(lr) - 1) * 100


def compare(recs, wall):
    pl = {n: pairs_of(r) for n, r in recs.items()}
    if "a" in pl:
        pl["c"] = {k: abba(v) for k, v in pl["a"].items()}
        wall["c"] = wall["a"]
    order = [n for n in ("a", "b", "c", "d", "e") if n in pl]
    for n in order:
        src = recs["a" if n == "c" else n]
        other = ",".join("%.2f" % statistics.median(r["other"] + r["steal"] for r in src
                                                    if r["round"] == rnd)
                         for rnd in sorted({r["round"] for r in src}))
        print("bench noise_pairs: scheme=%s: %s; other CPU + steal per round: %s"
              % (n, DESC[n], other))
    for key in KEYS:
        ref = [x[2] for x in pl["a"].get(key, [])] if "a" in pl else []
        ua = wall["a"] / len(ref) if ref else math.nan
        for n in order:
            x = [v[2] for v in pl[n].get(key, [])]
            if len(x) < 3:
                print("bench noise_pairs: scheme=%s key=%s pairs=%d (too few)" % (n, key, len(x)))
                continue
            u = wall[n] / len(x)
            line = ("bench noise_pairs: scheme=%s key=%s pairs=%d robust_sd_pct=%.2f wall_s=%.0f "
                    "s_per_pair=%.1f median_pct=%+.2f" % (n, key, len(x), rsd(x), wall[n], u,
                                                          pct(statistics.median(x))))
            if len(ref) >= 3 and rsd(ref) > 0:
                # the standard error of the mean log ratio at a's wall time
                # (sd / sqrt(W_a / u)) against a's (sd_a / sqrt(n_a))
                eq = math.sqrt(u / ua)
                lo, hi = boot_ratio(x, ref, eq)
                line += " sd_vs_a=%.2f se_vs_a_equal_wall=%.2f (90%% boot %.2f-%.2f)" % (
                    rsd(x) / rsd(ref), rsd(x) / rsd(ref) * eq, lo, hi)
            print(line)
    for key in KEYS:
        pos, first, rest, bins = [], [], [], [[], [], []]
        for n in ("a", "b", "d", "e"):
            for rnd, rep, lr, o in pl.get(n, {}).get(key, []):
                pos.append(lr if rep % 2 == 0 else -lr)  # log(second run / first run)
                (first if rep == 0 else rest).append(abs(lr))
                bins[0 if o < QUIET else 1 if o < FREE + 0.05 else 2].append(lr)
        if pos:
            print("bench noise_pairs: diag key=%s pairs=%d second_vs_first_pct=%+.2f "
                  "abs_dev_pct first_pair_of_round=%.2f others=%.2f"
                  % (key, len(pos), pct(statistics.median(pos)),
                     100 * statistics.median(first) if first else math.nan,
                     100 * statistics.median(rest) if rest else math.nan))
            print("bench noise_pairs: diag key=%s robust_sd_pct by other CPU + steal during "
                  "the pair: quiet (< %.1f) %.2f (%d pairs), some (< %.2f: free CPUs left) "
                  "%.2f (%d pairs), contended %.2f (%d pairs)"
                  % (key, QUIET, rsd(bins[0]), len(bins[0]), FREE + 0.05, rsd(bins[1]),
                     len(bins[1]), rsd(bins[2]), len(bins[2])))
    warm = [r for rs in recs.values() for r in rs if r["warmup"] and r["vals"]]
    for key in KEYS if warm else []:
        d = []
        for w in warm:
            m = [r["vals"][key] for r in recs[w["scheme"]] if not r["warmup"] and r["vals"]
                 and r["round"] == w["round"] and r["side"] == w["side"] and key in r["vals"]]
            if key in w["vals"] and m:
                d.append(math.log(w["vals"][key] / statistics.median(m)))
        if d:
            print("bench noise_pairs: diag key=%s warmup_vs_round_median_pct=%+.2f (%d runs)"
                  % (key, pct(statistics.median(d)), len(d)))


def calibrate(recs, wall):
    for n, rs in recs.items():
        pl = pairs_of(rs)
        for key in KEYS:
            x = [v[2] for v in pl.get(key, [])]
            if len(x) < 3:
                print("bench noise_pairs: kind=%s key=%s pairs=%d (too few)" % (n, key, len(x)))
                continue
            rng = random.Random(2)
            meds = sorted(statistics.median([rng.choice(x) for _ in x]) for _ in range(2000))
            print("bench noise_pairs: kind=%s key=%s pairs=%d effect_pct=%+.2f "
                  "(90%% boot %+.2f to %+.2f) robust_sd_pct=%.2f wall_s=%.0f"
                  % (n, key, len(x), pct(statistics.median(x)), pct(meds[100]),
                     pct(meds[1899]), rsd(x), wall[n]))


def main():
    t = time.monotonic()
    if CFG.get("replay"):
        # the records of an earlier run, its wall times the sum of its runs'
        recs, wall = {}, {}
        for line in open(CFG["replay"]):
            r = json.loads(line)
            recs.setdefault(r["scheme"], []).append(r)
            wall[r["scheme"]] = wall.get(r["scheme"], 0.0) + r["wall"]
        compare(recs, wall)
        return
    log = open(CFG["log"], "w")
    names = [s["name"] for s in CFG["schemes"]]
    recs, wall = {n: [] for n in names}, {n: 0.0 for n in names}
    for rnd in range(CFG["rounds"]):
        # each scheme in each place of the order in turn: the load changes
        # over minutes, and a fixed order gives the last one the quiet end
        k = rnd % len(CFG["schemes"])
        for s in CFG["schemes"][k:] + CFG["schemes"][:k]:
            r, w = run_round(s, rnd, log)
            recs[s["name"]] += r
            wall[s["name"]] += w
            bad = [x for x in r if not x["vals"]]
            for x in bad:
                print("bench noise_pairs: failed run: scheme %s round %d repetition %d %s side %d: %s"
                      % (s["name"], rnd, x["rep"], x["bench"], x["side"], x["why"]), file=sys.stderr)
            if len(bad) > len(r) // 4:
                sys.exit("bench noise_pairs: scheme %s: %d of %d runs failed" % (s["name"], len(bad), len(r)))
    (calibrate if CFG["mode"] == "calibrate" else compare)(recs, wall)
    allr = [r for rs in recs.values() for r in rs]
    runs = {b: [r["wall"] for r in allr if r["bench"] == b] for b in ("mempool", "testpmd")}
    print("bench noise_pairs: %s runs=%d failed=%d total_s=%.0f run_s_median mempool=%.1f "
          "testpmd=%.1f other_cpu median=%.2f max=%.2f steal_max=%.3f"
          % (CFG["mode"], len(allr), sum(1 for r in allr if not r["vals"]), time.monotonic() - t,
             statistics.median(runs["mempool"]), statistics.median(runs["testpmd"]),
             statistics.median(r["other"] for r in allr), max(r["other"] for r in allr),
             max(r["steal"] for r in allr)))


main()
PY

# PG_BENCH_NOISE_REPLAY=FILE: the analysis again on the records an
# earlier run kept (PG_BENCH_NOISE_DIR/last-schemes.jsonl), nothing run;
# a scheme's wall time is then the sum of its runs'.
if [ -n "$replay" ]; then
	jq -n --arg profile "$PG_TOP/profiles/demo.json" --arg replay "$replay" \
		'{profile: $profile, mode: "compare", replay: $replay, schemes: []}' >"$TMP/replay.json"
	python3 "$TMP/np.py" "$TMP/replay.json" || fail "the replay of $replay failed"
	exit 0
fi

skip() {
	echo "bench noise_pairs: skipped ($*)"
	exit 0
}
for t in meson ninja python3 jq git stdbuf; do
	command -v $t >/dev/null 2>&1 || skip "no $t"
done
[ -x "$PGB" ] && [ -x "$HT" ] || fail "$PGB or $HT missing (make bench builds them)"
[ "$(id -u)" -eq 0 ] || [ -w /var/run/dpdk ] || skip "EAL needs /var/run/dpdk: run as root"
"$PG_TOP/scripts/dpdk-tree.sh" >/dev/null 2>"$TMP/tree.err" ||
	skip "no DPDK tree: $(tail -n 1 "$TMP/tree.err")"
dpdk_setup
dpdk_profile '.'
profile=$TMP/profiles/demo.json
dir=${PG_BENCH_NOISE_DIR:-$PG_CACHE/noise}
mkdir -p "$dir"
subset=$(jq -c '.benchmarks.mempool_perf_demo.subset' "$profile")
duration=$(jq -r '.benchmarks.testpmd_io_demo.duration_s' "$profile")

# variant NAME KIND TIME_S: $dir/src-NAME, the tree with KIND's patch
# (none: no patch) and the subset harness at TIME_S, built release into
# $dir/build-NAME; sources reset only when the patch or subset changed, so
# that the build stays incremental.
variant() {
	name=$1 kind=$2 time_s=$3
	src=$dir/src-$name
	sub=$(printf '%s' "$subset" | jq -c --argjson t "$time_s" '.time_s = $t')
	if [ "$kind" = none ]; then
		echo none >"$TMP/$name.mbox"
	else
		dpdk_patch "$kind" "$TMP/$name.mbox" "noise-$kind@example.org"
	fi
	stamp=$({ cat "$TMP/$name.mbox"; echo "$sub"; } | sha256sum | cut -d' ' -f1)
	if [ ! -d "$src/.git" ] || [ "$(cat "$src.stamp" 2>/dev/null)" != "$stamp" ]; then
		rm -f "$src.stamp"
		[ -d "$src/.git" ] || git clone -q "$tree" "$src" || fail "clone of $tree"
		git -C "$src" fetch -q origin &&
			git -C "$src" checkout -q -f -B main origin/main &&
			git -C "$src" clean -q -fdx || fail "reset of $src"
		if [ "$kind" != none ]; then
			git -C "$src" apply "$TMP/$name.mbox" || fail "the $kind patch does not apply"
		fi
		"$HT" apply "$src" "$sub" | grep -qx applied || fail "the subset harness on $src"
		echo "$stamp" >"$src.stamp"
	fi
	t0=$(date +%s)
	"$PGB" --src "$src" --build "$dir/build-$name" --log "$TMP/build-$name.log" \
		--profile "$profile" --build-mode demo-release --ccache "$dir/ccache" \
		--basedir "$dir" --no-sandbox --target app/test/dpdk-test \
		--target app/dpdk-testpmd --timeout 7200 >"$TMP/build-$name.json" ||
		{ tail -n 20 "$TMP/build-$name.log"; fail "build of $name"; }
	[ "$(jq -r .ok "$TMP/build-$name.json")" = true ] ||
		{ jq -r .tail "$TMP/build-$name.json"; fail "build of $name failed"; }
	echo "bench noise_pairs: build $name ($kind, time_s $time_s): $(jq -r .steps "$TMP/build-$name.json") steps in $(( $(date +%s) - t0 )) s"
}

# copy NAME SIDE: the programs of build NAME in $TMP/run/NAME-SIDE, as a
# job's base and patched build directories (a file each, own page cache).
copy() {
	d=$TMP/run/$1-$2
	mkdir -p "$d/app/test"
	cp "$dir/build-$1/app/test/dpdk-test" "$d/app/test/" &&
		cp "$dir/build-$1/app/dpdk-testpmd" "$d/app/" || fail "copy of build $1"
	echo "$d"
}

variant base none "$(printf '%s' "$subset" | jq .time_s)"
case " $schemes " in *" d "*)
	variant base2 none "$(printf '%s' "$subset" | jq '.time_s * 2')" ;;
esac
for kind in $kinds; do
	variant "$kind" "$kind" "$(printf '%s' "$subset" | jq .time_s)"
done
A=$(copy base A) B=$(copy base B)

# The schemes' configuration for the measuring program below.
cfg() {	# cfg MODE LOG ROUNDS SCHEMES_JSON
	jq -n --arg profile "$profile" --arg mode "$1" --arg log "$2" --argjson rounds "$3" \
		--arg replay "$replay" --argjson schemes "$4" \
		'{profile: $profile, mode: $mode, log: $log, rounds: $rounds, replay: $replay,
		  schemes: $schemes}'
}
sj='[]'
for s in $schemes; do
	case $s in
	a) sj=$(echo "$sj" | jq --arg a "$A" --arg b "$B" --argjson r "$reps" --argjson d "$duration" \
		'. + [{name: "a", builds: [$a, $b],
		       reps: $r, duration: $d}]') ;;
	b) sj=$(echo "$sj" | jq --arg a "$A" --arg b "$B" --argjson r "$reps" --argjson d "$duration" \
		'. + [{name: "b",
		       builds: [$a, $b], reps: $r, duration: $d, warmup: true}]') ;;
	d) A2=$(copy base2 A) B2=$(copy base2 B)
	   sj=$(echo "$sj" | jq --arg a "$A2" --arg b "$B2" --argjson r "$reps" --argjson d "$duration" \
		'. + [{name: "d",
		       builds: [$a, $b], reps: ($r / 2 | ceil), duration: ($d * 2)}]') ;;
	e) sj=$(echo "$sj" | jq --arg a "$A" --arg b "$B" --argjson r "$reps" --argjson d "$duration" \
		'. + [{name: "e",
		       builds: [$a, $b], reps: $r, duration: $d, extra: ["--main-lcore", "1"]}]') ;;
	*) fail "PG_BENCH_NOISE_SCHEMES: unknown scheme $s (a b d e; c comes from a)" ;;
	esac
done


uptime | sed 's/^ */bench noise_pairs: before: /'
if [ -n "$schemes" ]; then
	cfg compare "$dir/last-schemes.jsonl" "$rounds" "$sj" >"$TMP/schemes.json"
	python3 "$TMP/np.py" "$TMP/schemes.json" || fail "the scheme runs failed"
fi
if [ -n "$kinds" ]; then
	kj='[]'
	for kind in $kinds; do
		P=$(copy "$kind" P)
		kj=$(echo "$kj" | jq --arg k "$kind" --arg a "$A" --arg p "$P" --argjson r "$cal_pairs" \
			--argjson d "$duration" \
			'. + [{name: $k, builds: [$a, $p], reps: $r, duration: $d}]')
	done
	cfg calibrate "$dir/last-calibrate.jsonl" 1 "$kj" >"$TMP/cal.json"
	python3 "$TMP/np.py" "$TMP/cal.json" || fail "the calibration runs failed"
fi
uptime | sed 's/^ */bench noise_pairs: after: /'
