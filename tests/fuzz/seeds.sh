#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Make the seed corpora of the targets whose seeds come from the
# repository's own fixtures (configs, profiles, mboxes) or from examples
# of the formats written here (Patchwork answers, agent bodies, job
# specs), into tests/fuzz/corpus/NAME/.  Run it from anywhere; it
# rewrites those directories, and the result is committed (small files:
# the whole is under a megabyte).  A target whose input starts with a
# selector byte (see its source) gets the byte prepended here.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
c=$top/tests/fuzz/corpus

fresh() {
	rm -rf "${c:?}/$1"
	mkdir -p "$c/$1"
}

# seed TARGET NAME SELECTOR FILE: FILE's bytes after one selector byte
# (SELECTOR as an octal escape, "" for none).
seed() {
	if [ -n "$3" ]; then
		{ printf "\\$3"; cat "$4"; } >"$c/$1/$2"
	else
		cp "$4" "$c/$1/$2"
	fi
}

# text TARGET NAME SELECTOR TEXT
text() {
	if [ -n "$3" ]; then
		printf "\\$3%s" "$4" >"$c/$1/$2"
	else
		printf '%s' "$4" >"$c/$1/$2"
	fi
}

# ---- configuration files --------------------------------------------
fresh config_ctl
for f in "$top"/tests/configs/controller/*.json "$top"/etc/controller.json; do
	seed config_ctl "$(basename "$f" .json)" "" "$f"
done
fresh config_agent
for f in "$top"/tests/configs/agent/*.json "$top"/etc/agent.json; do
	seed config_agent "$(basename "$f" .json)" "" "$f"
done

# ---- profiles -------------------------------------------------------
fresh profile
for f in "$top"/profiles/*.json "$top"/tests/profiles/broken/*.json "$top"/tests/planner/profile.json; do
	n=$(basename "$(dirname "$f")")-$(basename "$f" .json)
	seed profile "$n" "" "$f"
done

# ---- base64 ---------------------------------------------------------
fresh base64
text base64 empty "" ""
text base64 one-pad "" "aGVsbG8gd29ybGQ="
text base64 two-pad "" "aGk="
text base64 none "" "AAECAwQFBgcICQ=="
text base64 bad-char "" "aGV*bG8="
text base64 mid-pad "" "aG==bG8="
text base64 mbox "" "RnJvbSAxIE1vbiBTZXAgMTcgMDA6MDA6MDAgMjAwMQpTdWJqZWN0OiBbUEFUQ0hdIHgKCi0tLQo="

# ---- apply: mboxes onto fuzz_apply's small tree, and the real ones ------
fresh apply
# selector: bit 0 mboxrd, bit 1 tight limits
for f in "$top"/patches/samples/demo/*.mbox; do
	seed apply "demo-$(basename "$f" .mbox)" 000 "$f"
done
for n in 05-mempool-bucket-count 07-test-ring-sizes-new-file 09-devtools-rename-cocci \
	10-test-hugepage-script-mode 11-doc-vm-comms-image; do
	seed apply "dpdk-$n" 000 "$top/tests/apply/corpus/$n.patch"
done
mail() {
	printf 'From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n'
	printf 'From: A U Thor <author@example.org>\nDate: Fri, 1 Mar 2024 08:00:00 +0000\n'
	printf 'Subject: [PATCH %s] %s\n\nWhy.\n\nSigned-off-by: A U Thor <author@example.org>\n---\n' "$1" "$2"
	printf '%s' "$3"
	printf '%s\n' '-- ' '2.39.5' ''
}
exact='diff --git a/a.c b/a.c
index 0000000..1111111 100644
--- a/a.c
+++ b/a.c
@@ -9,7 +9,7 @@ int line8 = 8;
 int line9 = 9;
 int line10 = 10;
 int line11 = 11;
-int line12 = 12;
+int line12 = 1200;
 int line13 = 13;
 int line14 = 14;
 int line15 = 15;
'
moved='diff --git a/a.c b/a.c
--- a/a.c
+++ b/a.c
@@ -2,3 +2,3 @@
 int line20 = 20;
-int line21 = 21;
+int line21 = 2100;
 int line22 = 22;
'
newfile='diff --git a/lib/new.c b/lib/new.c
new file mode 100644
index 0000000..2222222
--- /dev/null
+++ b/lib/new.c
@@ -0,0 +1,2 @@
+#include "b.h"
+int n = B;
'
rename='diff --git a/README b/doc/README
similarity index 100%
rename from README
rename to doc/README
'
escape='diff --git a/../outside/keep b/../outside/keep
--- a/../outside/keep
+++ b/../outside/keep
@@ -1 +1 @@
-keep
+gone
'
link='diff --git a/lnk b/lnk
new file mode 120000
index 0000000..3333333
--- /dev/null
+++ b/lnk
@@ -0,0 +1 @@
+../outside
\ No newline at end of file
diff --git a/lnk/keep b/lnk/keep
--- a/lnk/keep
+++ b/lnk/keep
@@ -1 +1 @@
-keep
+gone
'
mail 1/1 "a: exact" "$exact" >"$c/apply/.m" && seed apply mini-exact 000 "$c/apply/.m"
mail 1/1 "a: offset" "$moved" >"$c/apply/.m" && seed apply mini-offset 000 "$c/apply/.m"
mail 1/1 "lib: new file" "$newfile" >"$c/apply/.m" && seed apply mini-new-tight 002 "$c/apply/.m"
mail 1/1 "rename" "$rename" >"$c/apply/.m" && seed apply mini-rename 000 "$c/apply/.m"
mail 1/1 "escape" "$escape" >"$c/apply/.m" && seed apply mini-dotdot 000 "$c/apply/.m"
mail 1/1 "link" "$link" >"$c/apply/.m" && seed apply mini-symlink 000 "$c/apply/.m"
{ mail 1/3 "a: exact" "$exact"; mail 2/3 "lib: new" "$newfile"; mail 3/3 "again" "$exact"; } \
	>"$c/apply/.m" && seed apply mini-series 001 "$c/apply/.m"
rm -f "$c/apply/.m"
# Fixed findings (tests/fuzz/regress/README), selector byte included.
for f in "$top"/tests/fuzz/regress/apply-*; do
	seed apply "regress-$(basename "$f" | sed 's/^apply-//')" "" "$f"
done

# ---- Patchwork answers (selector: patches/patchwork.h parser) ---------
fresh patchwork
pw=http://pw.example.org/api/1.3
patch_ref() {
	printf '{"id": %s, "url": "%s/patches/%s/", "web_url": "http://pw.example.org/project/dpdk/patch/%s/", "msgid": "<%s@example.org>", "list_archive_url": null, "date": "2026-11-30T10:0%s:00", "name": "%s", "mbox": "http://pw.example.org/project/dpdk/patch/%s/mbox/"}' \
		"$1" "$pw" "$1" "$1" "$1" "$2" "$3" "$1"
}
series='{"id": 7, "url": "'$pw'/series/7/", "web_url": "http://pw.example.org/project/dpdk/list/?series=7", "project": {"id": 1, "url": "'$pw'/projects/1/", "name": "DPDK", "link_name": "dpdk", "list_id": "dev.dpdk.org", "list_email": "dev@dpdk.org", "web_url": null, "scm_url": null, "webscm_url": null, "list_archive_url": "", "list_archive_url_format": "", "commit_url_format": ""}, "name": "mempool: speed up", "date": "2026-11-30T10:00:00", "submitter": {"id": 3, "url": "'$pw'/people/3/", "name": "A U Thor", "email": "author@example.org"}, "version": 2, "total": 2, "received_total": 2, "received_all": true, "mbox": "http://pw.example.org/series/7/mbox/", "cover_letter": {"id": 50, "url": "'$pw'/covers/50/", "web_url": "x", "msgid": "<50@example.org>", "list_archive_url": null, "date": "2026-11-30T10:00:00", "name": "[v2,0/2] mempool: speed up", "mbox": "http://pw.example.org/cover/50/mbox/"}, "patches": ['"$(patch_ref 102 2 '[v2,2/2] mempool: b')"', '"$(patch_ref 101 1 '[v2,1/2] mempool: a')"']}'
text patchwork series 000 "$series"
text patchwork series-nocover 000 '{"id": 8, "name": null, "date": "2026-11-30T10:00:00", "version": 1, "total": 1, "received_total": 1, "received_all": true, "mbox": "http://pw.example.org/series/8/mbox/", "cover_letter": null, "submitter": {"id": 1, "name": null, "email": "x@example.org"}, "patches": ['"$(patch_ref 103 3 'lone')"']}'
text patchwork events 001 '[{"id": 900, "category": "series-completed", "project": {"id": 1}, "date": "2026-11-30T10:05:00.123456", "actor": null, "payload": {"series": {"id": 7, "url": "'$pw'/series/7/"}}}, {"id": 901, "category": "patch-comment-created", "project": {"id": 1}, "date": "2026-11-30T10:06:00", "payload": {"patch": {"id": 101}, "comment": {"id": 7001, "url": "'$pw'/patches/101/comments/7001/"}}}, {"id": 902, "category": "series-completed", "date": "2026-11-30T10:07:00", "payload": {"patch": {"id": 101}, "comment": {"id": 7002}}}]'
text patchwork events-empty 001 '[]'
text patchwork comment 002 '{"id": 7001, "web_url": "x", "msgid": "<reply@example.org>", "list_archive_url": null, "date": "2026-11-30T11:00:00", "subject": "Re: [PATCH v2 1/2] mempool: a", "submitter": {"id": 4, "url": "'$pw'/people/4/", "name": "Re Viewer", "email": "rv@example.org"}, "content": "Recheck-request: perfgate-intel-Performance\n\nAcked-by: Re Viewer <rv@example.org>\n", "headers": {}, "addressed": null}'
text patchwork comment-null 002 '{"id": 7002, "msgid": "<c@x>", "content": null, "submitter": null}'
text patchwork patch-list 003 '[{"id": 101, "msgid": "<20240101.1@example.org>", "name": "x"}, {"id": 102, "msgid": "<other@example.org>"}]'
text patchwork check-list 004 '[{"id": 1, "url": "'$pw'/patches/101/checks/1/", "user": {"id": 2, "username": "ci"}, "date": "2026-11-30T12:00:00", "state": "success", "target_url": null, "context": "perfgate-intel", "description": "Performance"}, {"id": 2, "date": "2026-11-30T12:00:01", "state": "fail", "target_url": "http://x/", "context": "perfgate-intel", "description": "Performance"}]'
text patchwork link 005 '<http://pw.example.org/api/1.3/events/?page=2>; rel="next", <http://pw.example.org/api/1.3/events/?page=1>; rel="prev"'
text patchwork link-relative 005 '</api/1.3/events/?page=3>; rel="next"'
text patchwork name 006 '[v2,3/10] net/ice: fix'
text patchwork name-rfc 006 '[RFC,PATCH,v3,01/12] x'

# ---- agent API bodies (selector: controller/api_int.h parser) ---------
fresh agent_api
text agent_api register 000 '{"labels": {"vendor": "intel", "arch": "x86_64"}, "facts": {"cpus": 8, "kernel": "6.1.0"}}'
text agent_api register-empty 000 ''
text agent_api lease 001 '{"wait_s": 30}'
text agent_api heartbeat 002 '{"attempt": 1, "stage": "build-base", "progress": 40}'
text agent_api heartbeat-null 002 '{"attempt": 2, "stage": null, "progress": null}'
text agent_api result 003 '{"attempt": 1, "outcome": "ok", "detail": "applied 2/2 patches", "fingerprint": {"kernel": "6.1", "cpu": "x"}, "samples": [{"side": "base", "benchmark": "mempool_perf", "metric": "mempool.cache.cores1.keep128.get32.put32.const0", "repetition": 0, "value": 1.5e9, "unit": "obj/s"}, {"side": "patched", "benchmark": "mempool_perf", "metric": "m", "repetition": 0, "value": 1.4e9, "unit": null}]}'
text agent_api result-failure 003 '{"attempt": 3, "outcome": "apply-failure", "detail": null, "samples": null}'
text agent_api cancel 004 '{"reason": "superseded by v3"}'
text agent_api recheck 005 '{"contexts": ["perfgate-demo-Performance"], "rebase": "main"}'
text agent_api recheck-all 005 '{}'
printf '\006%s\000%s\000%s' 1 build-base.log 4096 >"$c/agent_api/logs-query"
printf '\006%s\000%s' 2 run >"$c/agent_api/logs-query-nooffset"

# ---- the job spec the agent leases (lib/jobspec.h) ---------------------
fresh jobspec
spec='{"id": 12, "attempt": 1, "lease_s": 600, "heartbeat_s": 10, "lease_expires": "2026-11-30T12:00:00Z", "format": 1, "run": 12, "reason": "new", "context": "perfgate-intel-Performance", "host_class": "intel", "build_mode": "release", "tree": {"name": "dpdk", "url": "https://dpdk.org/git/dpdk", "branch": "main", "base_commit": "0123456789abcdef0123456789abcdef01234567", "base_source": "branch-tip", "version": "24.11.0"}, "series": {"id": 7, "title": "mempool: speed up", "version": 2, "patches": 3, "mbox_url": "http://ctl/api/v1/series/7/mbox"}, "depends_on": [{"series": 5, "kind": "series", "ref": "31234", "missing": false, "mbox_url": "http://ctl/api/v1/series/5/mbox"}, {"series": null, "kind": "msgid", "ref": "x@example.org", "missing": true, "mbox_url": null}], "build": {"buildtype": "release", "meson_options": {"tests": "true"}, "c_args": "-DX"}, "host": {"labels": {"vendor": "intel"}, "lcores": "2-5", "memory_mb": 2048, "hugepages": true, "numa_node": 0, "max_load": 2.0, "max_load_wait_s": 300, "require": {"governor": "performance", "turbo": "off", "smt": "off", "isolated_cpus": true, "nohz_full": true}}, "benchmarks": [{"name": "mempool_perf", "program": "app/test/dpdk-test", "args": ["-l", "2-5", "-m", "2048", "--file-prefix={file_prefix}"], "env": {"DPDK_TEST": "mempool_perf_autotest"}, "stdin": "null", "parser": "mempool_perf", "gate": ["mempool.nocache.*"], "timeout_s": 600, "stop_after_lines": 40, "warmup_runs": 1, "mode": "subset", "subset": {"cores": [1], "cache": [0, 512], "bulk": [32], "keep": [128], "constant_n": [0], "time_s": 1}}, {"name": "testpmd_io", "program": "app/dpdk-testpmd", "args": ["-l", "2-4", "--", "-i"], "env": {}, "stdin": "hold", "duration_s": 10, "parser": "testpmd", "gate": ["fwd.*"], "timeout_s": 120}], "repetitions": 5, "max_repetitions": 15, "threshold_pct": 5, "alpha": 0.05, "noise_limit_pct": 5, "notes": ["n"], "round": 1, "repetition_base": 5, "pin_agent": "lab-3"}'
text jobspec full 000 "$spec"
text jobspec baseline 000 '{"id": 3, "attempt": 2, "format": 1, "run": 3, "reason": "baseline", "baseline": {"trigger": "head"}, "context": "c", "host_class": "h", "build_mode": "debug", "tree": {"name": "dpdk", "url": "https://dpdk.org/git/dpdk", "branch": "main", "base_commit": "0123456789abcdef0123456789abcdef01234567", "base_source": "commit", "version": null}, "build": {"buildtype": "debug", "meson_options": {}}, "host": {"labels": {}, "lcores": "0", "memory_mb": 512, "hugepages": false}, "benchmarks": [], "repetitions": 1}'
text jobspec cpus 001 '0-3,8,10-11'
text jobspec cpus-bad 001 '5-2,'

# ---- mail headers (selector: bit 0 a bound of byte >> 1) ----------------
fresh mail_header
text mail_header b64 000 '=?UTF-8?B?w6lsw6h2ZQ==?= [PATCH v2 1/3] net/ice: fix'
text mail_header qp 000 '=?iso-8859-1?q?Andr=E9?= <a@b>'
text mail_header adjacent 000 '=?utf-8?q?a?= =?utf-8?q?b?='
text mail_header plain 000 'plain [PATCH] x: y'
text mail_header charsets-tight 021 '=?gb2312?B?1tDOxA==?= =?koi8-r?Q?=F0=D2=C9?='
text mail_header broken 000 '=?UTF-8?B?broken'

# ---- mails and mboxes: tests/mail's fixtures beside the hand-picked seeds
# (added, not replaced; the 300 KiB huge-header one left out) ------------
for f in "$top"/tests/mail/*.eml; do
	n=$(basename "$f" .eml)
	[ "$n" != huge-header ] || continue
	seed mail "fixture-$n" 000 "$f"
done
seed mbox fixture-git-mboxrd 001 "$top/tests/mail/git-mboxrd.mbox"
for d in series-a series-b single; do
	for f in "$top"/tests/patchwork/$d/*; do
		seed mail "patchwork-$d-$(basename "$f")" 000 "$f"
	done
done
seed mail patchwork-recheck-reply 000 "$top/tests/patchwork/recheck-reply.eml"
