/* SPDX-License-Identifier: MIT */
#ifndef CTL_API_METRICS_H
#define CTL_API_METRICS_H

/*
 * What GET /metrics reports, in the Prometheus text format (version
 * 0.0.4):
 *
 *   perfgate_jobs{state="queued"}            jobs per state (a gauge; held
 *                                            jobs also as state="held")
 *   perfgate_agents, perfgate_agents_online, perfgate_agents_busy
 *   perfgate_leases_waiting                  long polls parked right now
 *   perfgate_leases_total                    leases given since start
 *   perfgate_results_total{status="recorded"}   and duplicate,
 *                                            acknowledged, conflict
 *   perfgate_http_requests_total{code="200"} requests answered, per code
 *   perfgate_http_request_duration_seconds_bucket{route="lease",le="0.005"}
 *                                            and _sum, _count: latency per
 *                                            route (a lease's includes its
 *                                            long-poll wait)
 *   perfgate_api_stage_duration_seconds_bucket{stage="writer",le="0.005"}
 *                                            where the requests that went
 *                                            through the writer spent their
 *                                            time (enum api_stage)
 *   perfgate_store_wal_sync_duration_seconds_bucket{le="0.005"}
 *                                            each fdatasync() of the WAL by
 *                                            the API's syncer: the disk's
 *                                            share (as etcd's
 *                                            etcd_disk_wal_fsync_duration_seconds)
 *
 * The counters live in memory (they restart at 0 with the process, as
 * Prometheus expects of counters); the gauges come from the store.  The
 * counting functions take a mutex and may be called from any thread.
 */

#include <pthread.h>
#include <stdint.h>

#include "api_route.h"
#include "buf.h"
#include "sched.h"
#include "ssh_state.h"

/* The upper bounds of the latency histogram's buckets, in seconds (+Inf
 * follows). */
#define API_METRICS_BUCKETS 15
extern const double api_metrics_le[API_METRICS_BUCKETS];

/* Status codes 100..599 are counted one by one; anything else as 0. */
#define API_METRICS_CODES 600

enum api_result_count {
	API_RESULT_RECORDED,
	API_RESULT_DUPLICATE,
	API_RESULT_ACKNOWLEDGED,
	API_RESULT_CONFLICT,
	API_RESULT_KINDS
};

/* Where a request that went through the writer (api_worker.c) spent its
 * time, once its headers were read: the three add up to most of its
 * latency, and say whether a slow answer waited for the CPU, the disk or
 * the network. */
enum api_stage {
	API_STAGE_WRITER,	/* queued for the writer until its batch committed
				 * (a lease parked for want of a job: not counted) */
	API_STAGE_SYNC,		/* committed until the WAL was on disk: the
				 * requests whose answers wait for it */
	API_STAGE_SEND,		/* answered until its last byte was sent */
	API_STAGE_COUNT
};

/* One histogram: bucket counts (not cumulative), count and sum. */
struct api_hist {
	uint64_t bucket[API_METRICS_BUCKETS];
	uint64_t count;
	double sum;
};

/* The figures; a snapshot is a plain copy. */
struct api_counts {
	uint64_t by_code[API_METRICS_CODES];
	struct api_hist route[API_EP_COUNT];
	struct api_hist stage[API_STAGE_COUNT];
	struct api_hist wal_sync;
	uint64_t leases;
	uint64_t results[API_RESULT_KINDS];
	int64_t waiting;
};

struct api_metrics {
	pthread_mutex_t lock;
	struct api_counts c;
};

/* Returns 0, or -1 when the mutex cannot be made. */
int api_metrics_init(struct api_metrics *m);
void api_metrics_destroy(struct api_metrics *m);

/* One request answered with `code` after `seconds`. */
void api_metrics_request(struct api_metrics *m, enum api_ep ep, unsigned int code,
			 double seconds);
/* One request spent `seconds` in stage. */
void api_metrics_stage(struct api_metrics *m, enum api_stage stage, double seconds);
/* One sync of the WAL took `seconds`. */
void api_metrics_wal_sync(struct api_metrics *m, double seconds);
void api_metrics_lease(struct api_metrics *m);
void api_metrics_result(struct api_metrics *m, enum api_result_count kind);
void api_metrics_waiting(struct api_metrics *m, int64_t n);

/* Copy the figures out under the lock. */
void api_metrics_snapshot(struct api_metrics *m, struct api_counts *out);

/* The lab's own findings (changes.h, drift.h). */
struct api_lab_counts {
	int64_t change_points[3][2];	/* changes_counts() */
	int64_t drift_flagged, drift_drained;
	int64_t ssh_hosts[SSH_STATE_COUNT];	/* SSH hosts per state (ssh_state.h) */
};

/*
 * Render the text exposition of c and the store's figures s and lab to
 * out.  Pure.  Returns 0, or -1 when out's cap is reached.
 */
int api_metrics_format(const struct api_counts *c, const struct sched_stats *s,
		       const struct api_lab_counts *lab, struct pg_buf *out);

#endif
