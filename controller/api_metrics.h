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

/* The figures; a snapshot is a plain copy. */
struct api_counts {
	uint64_t by_code[API_METRICS_CODES];
	uint64_t count[API_EP_COUNT];
	double sum[API_EP_COUNT];
	uint64_t bucket[API_EP_COUNT][API_METRICS_BUCKETS];	/* not cumulative */
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
