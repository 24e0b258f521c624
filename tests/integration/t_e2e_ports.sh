# End to end with real DPDK over ports (issue 19): the demo profile's host
# class gets a virtual port (net_ring0: a ring that is its own RX and TX,
# so testpmd's first burst loops through it: no peer, no network namespace
# and no capability needed, and it works inside the agent's sandbox), and
# the context one testpmd benchmark with "fwd": io forwarding at frame
# sizes 64 and 1518, one testpmd per size.  A one-patch series (a comment:
# A/A) is planned in demo-release alone and one job runs through a real
# agent (--once), 3 repetitions, 2 s of forwarding each.  Checks that the
# planner built the arguments from the port (--vdev, --txpkts placeholder),
# that every per-size key arrived on both sides for every repetition with
# a plausible value, that no unsized key did, and that the fingerprint
# lists the port.  The work directory is t_e2e_dpdk's ($PG_CACHE/e2e):
# the builds are incremental.
. "$PG_TOP/tests/integration/lib.sh"
. "$PG_TOP/tests/integration/dpdk_lib.sh"

dpdk_setup
dpdk_patch comment "$TMP/series.mbox" ports-1@example.org ports
dpdk_profile '.host_classes.demo.ports = [{"vdev": "net_ring0"}]
	| .benchmarks.testpmd_ports_demo = {"program": "app/dpdk-testpmd",
	    "args": ["-l", "{lcores}", "{mem_args}", "--no-telemetry",
		     "--file-prefix={file_prefix}", "--", "--total-num-mbufs=8192"],
	    "fwd": {"mode": "io", "frame_sizes": [64, 1518], "rxd": 512, "txd": 512},
	    "stdin": "hold", "duration_s": 2, "parser": "testpmd",
	    "gate": ["fwd.size*.rx_pps"], "timeout_s": 60}
	| .contexts["perfgate-demo-Performance"] += {"build_modes": ["demo-release"],
	    "benchmarks": ["testpmd_ports_demo"], "noise_limit_pct": 100}'
dpdk_controller ports-1
stop_ctl() { kill -9 "$ctl" 2>/dev/null; }
cleanup_hooks="stop_ctl"
dpdk_ingest_plan "$TMP/series.mbox"
q() { sqlite3 "$db" "$1" || fail "sqlite3: $1"; }
[ "$(q "SELECT count(*) FROM jobs WHERE state = 'queued'")" = 1 ] ||
	{ q "SELECT id, state, spec FROM jobs"; fail "expected 1 queued job"; }
q "SELECT spec FROM jobs" >"$TMP/spec.json"
jq -e '.host.ports == [{"vdev": "net_ring0"}] and .benchmarks[0].frame_sizes == [64, 1518]
	and (.benchmarks[0].args | index("--vdev=net_ring0")) != null
	and (.benchmarks[0].args | index("--no-pci")) != null
	and (.benchmarks[0].args | index("--txpkts={frame_size}")) != null
	and (.benchmarks[0].args | index("--port-topology=loop")) != null' \
	"$TMP/spec.json" >/dev/null || { cat "$TMP/spec.json"; fail "the job spec lacks the port's arguments"; }
dpdk_agent_config ports-1
start=$(date +%s)
"$AGENT" --config "$TMP/agent.json" --once >"$TMP/agent.log" 2>&1 ||
	{ tail -n 50 "$TMP/agent.log"; fail "agent --once failed"; }
echo "e2e-ports: the job took $(( $(date +%s) - start )) s"
[ "$(q "SELECT state || ' ' || outcome FROM jobs")" = "done ok" ] ||
	fail "the job: $(q "SELECT state, outcome, outcome_detail FROM jobs")"
job=$(q "SELECT id FROM jobs")
for key in fwd.size64.rx_pps fwd.size1518.rx_pps fwd.size64.tx_pps fwd.size1518.tx_pps \
	   fwd.size64.cycles_per_pkt fwd.size1518.cycles_per_pkt fwd.size64.rx_packets; do
	for side in base patched; do
		n=$(q "SELECT group_concat(repetition) FROM (SELECT repetition FROM samples
		       WHERE job_id = $job AND side = '$side' AND metric = '$key' ORDER BY repetition)")
		[ "$n" = "0,1,2" ] || fail "$key on the $side side: repetitions $n, not 0,1,2"
	done
done
[ "$(q "SELECT count(*) FROM samples WHERE metric NOT LIKE 'fwd.size64.%'
	AND metric NOT LIKE 'fwd.size1518.%'")" = 0 ] ||
	fail "keys without a frame size: $(q "SELECT DISTINCT metric FROM samples")"
# A ring loop forwards millions of packets per second even on this VM.
low=$(q "SELECT count(*) FROM samples WHERE (metric LIKE '%rx_pps' AND value < 100000)
	OR (metric LIKE '%cycles_per_pkt' AND (value <= 0 OR value > 100000))")
[ "$low" = 0 ] || { q "SELECT side, metric, value FROM samples"; fail "$low implausible samples"; }
q "SELECT fingerprint FROM results WHERE job_id = $job" >"$TMP/fp.json"
jq_is "$TMP/fp.json" '.ports[0].vdev' net_ring0
q "SELECT side || ' ' || metric || ' ' || value FROM samples WHERE repetition = 0 AND metric LIKE '%rx_pps'" |
	sed 's/^/e2e-ports: /'
