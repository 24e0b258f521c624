#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Re-create the source fixtures of the mempool_perf harness tests
# (tests/unit/test_harness.c) from DPDK 22.11.11's test_mempool_perf.c:
#
#   2211.in   app/test/test_mempool_perf.c of DPDK 22.11.11 as Debian ships
#             it (scripts/dpdk-tree.sh makes the tree; fixed commit
#             a358448428201a795050f6d3242f0c614f1f0058), unchanged
#   2311.in   the same with REGISTER_PERF_TEST (e0a8442ccd, v23.11): the
#             23.11 file found in the search tool's code corpus has exactly
#             this text (10955 characters, read side by side)
#   2407.in   2311.in with the C11 alignas() and the struct attribute moved,
#             as on DPDK's main before 24.11 reworked the test (DPDK/dpdk
#             at 0efea35a in the code corpus: 10964 characters, same text)
#   2111.in   2211.in taken back to the 21.11 layout that
#             /work/shared/reference/dpdk_bench.md describes and a 21.11-era
#             copy in the code corpus (ovsrobot/dpdk at 05c2e29f) has:
#             MAX_KEEP 128, tables {1, 4, 32} and {32, 128}, no constant_n
#             runs and no constant_n= in the result line.  Synthetic: the
#             harness was also checked on that copy itself (not kept here,
#             it is third-party text), which it rewrites the same way.
#
#   tests/harness/make-fixtures.sh [DPDK_GIT_DIR]
#
# The NAME.CASE.json subsets are written by hand; NAME.CASE.ok are what
# the harness makes of them (PG_UPDATE_GOLDEN=1 build/tests/test_harness
# rewrites them; read the diff before keeping it).
set -eu
git_dir=${1:-/var/cache/perfgate/dpdk-22.11.11.git}
here=$(cd "$(dirname "$0")" && pwd)
git --git-dir="$git_dir" show a358448428201a795050f6d3242f0c614f1f0058:app/test/test_mempool_perf.c \
	>"$here/2211.in"
python3 - "$here" <<'PY'
import sys
d = sys.argv[1]
src = open(d + "/2211.in").read()

def sub(text, old, new):
    assert text.count(old) == 1, old
    return text.replace(old, new)

v23 = sub(src, "REGISTER_TEST_COMMAND(mempool_perf_autotest", "REGISTER_PERF_TEST(mempool_perf_autotest")
open(d + "/2311.in", "w").write(v23)

v24 = sub(v23, "struct mempool_test_stats {\n\tuint64_t enq_count;\n} __rte_cache_aligned;",
          "struct __rte_cache_aligned mempool_test_stats {\n\tuint64_t enq_count;\n};")
v24 = sub(v24, "\tvoid *obj_table[MAX_KEEP] __rte_cache_aligned;",
          "\talignas(RTE_CACHE_LINE_SIZE) void *obj_table[MAX_KEEP];")
open(d + "/2407.in", "w").write(v24)

v21 = sub(src, "#define MAX_KEEP 512", "#define MAX_KEEP 128")
v21 = sub(v21, "unsigned int bulk_tab_get[] = { 1, 4, CACHE_LINE_BURST, 32, 0 };",
          "unsigned bulk_tab_get[] = { 1, 4, 32, 0 };")
v21 = sub(v21, "unsigned int bulk_tab_put[] = { 1, 4, CACHE_LINE_BURST, 32, 0 };",
          "unsigned bulk_tab_put[] = { 1, 4, 32, 0 };")
v21 = sub(v21, "unsigned int keep_tab[] = { 32, 128, 512, 0 };", "unsigned keep_tab[] = { 32, 128, 0 };")
v21 = sub(v21, "\t\t\t\tuse_constant_values = 0;\n", "")
v21 = sub(v21, """				ret = launch_cores(mp, cores);
				if (ret < 0)
					return -1;

				/* replay test with constant values */
				if (n_get_bulk == n_put_bulk) {
					use_constant_values = 1;
					ret = launch_cores(mp, cores);
					if (ret < 0)
						return -1;
				}
""", """				ret = launch_cores(mp, cores);

				if (ret < 0)
					return -1;
""")
v21 = sub(v21, '"n_put_bulk=%u n_keep=%u constant_n=%u ",', '"n_put_bulk=%u n_keep=%u ",')
v21 = sub(v21, "cores, n_get_bulk, n_put_bulk, n_keep, use_constant_values);",
          "cores, n_get_bulk, n_put_bulk, n_keep);")
open(d + "/2111.in", "w").write(v21)
PY
