/* SPDX-License-Identifier: MIT */
/* Counters for /metrics and their Prometheus text (see api_metrics.h). */
#include "api_metrics.h"

#include <stdio.h>
#include <string.h>

/* Fine below 20 ms (the API's latency goal) and up to a long poll. */
const double api_metrics_le[API_METRICS_BUCKETS] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 30, 60,
};

static const char *const api_stage_names[API_STAGE_COUNT] = { "writer", "sync", "send" };

static const char *const api_result_names[API_RESULT_KINDS] = {
	"recorded", "duplicate", "acknowledged", "conflict",
};

int api_metrics_init(struct api_metrics *m)
{
	memset(m, 0, sizeof(*m));
	return pthread_mutex_init(&m->lock, NULL) == 0 ? 0 : -1;
}

void api_metrics_destroy(struct api_metrics *m)
{
	pthread_mutex_destroy(&m->lock);
}

/* Count `seconds` in h; the caller holds the lock. */
static void api_hist_add(struct api_hist *h, double seconds)
{
	size_t b = 0;

	if (seconds < 0)
		seconds = 0;
	while (b < API_METRICS_BUCKETS && seconds > api_metrics_le[b])
		b++;
	h->count++;
	h->sum += seconds;
	if (b < API_METRICS_BUCKETS)
		h->bucket[b]++;
}

void api_metrics_request(struct api_metrics *m, enum api_ep ep, unsigned int code,
			 double seconds)
{
	if (ep >= API_EP_COUNT)
		ep = API_EP_NONE;
	if (code < 100 || code >= API_METRICS_CODES)
		code = 0;
	pthread_mutex_lock(&m->lock);
	m->c.by_code[code]++;
	api_hist_add(&m->c.route[ep], seconds);
	pthread_mutex_unlock(&m->lock);
}

void api_metrics_stage(struct api_metrics *m, enum api_stage stage, double seconds)
{
	if (stage >= API_STAGE_COUNT)
		return;
	pthread_mutex_lock(&m->lock);
	api_hist_add(&m->c.stage[stage], seconds);
	pthread_mutex_unlock(&m->lock);
}

void api_metrics_wal_sync(struct api_metrics *m, double seconds)
{
	pthread_mutex_lock(&m->lock);
	api_hist_add(&m->c.wal_sync, seconds);
	pthread_mutex_unlock(&m->lock);
}

void api_metrics_lease(struct api_metrics *m)
{
	pthread_mutex_lock(&m->lock);
	m->c.leases++;
	pthread_mutex_unlock(&m->lock);
}

void api_metrics_result(struct api_metrics *m, enum api_result_count kind)
{
	if (kind >= API_RESULT_KINDS)
		return;
	pthread_mutex_lock(&m->lock);
	m->c.results[kind]++;
	pthread_mutex_unlock(&m->lock);
}

void api_metrics_waiting(struct api_metrics *m, int64_t n)
{
	pthread_mutex_lock(&m->lock);
	m->c.waiting = n;
	pthread_mutex_unlock(&m->lock);
}

void api_metrics_snapshot(struct api_metrics *m, struct api_counts *out)
{
	pthread_mutex_lock(&m->lock);
	*out = m->c;
	pthread_mutex_unlock(&m->lock);
}

/* The _bucket, _sum and _count lines of h, under name, with the label
 * `label="value"` when label is not NULL. */
static int api_hist_format(struct pg_buf *out, const char *name, const char *label,
			   const char *value, const struct api_hist *h)
{
	char lab[96], lab_le[112];
	uint64_t cum = 0;
	int n;

	n = label ? snprintf(lab, sizeof(lab), "%s=\"%s\"", label, value)
		  : snprintf(lab, sizeof(lab), "%s", "");
	if (n < 0 || (size_t)n >= sizeof(lab))
		return -1;
	for (size_t b = 0; b <= API_METRICS_BUCKETS; b++) {
		char le[24];

		if (b < API_METRICS_BUCKETS) {
			cum += h->bucket[b];
			n = snprintf(le, sizeof(le), "%g", api_metrics_le[b]);
		} else {
			cum = h->count;
			n = snprintf(le, sizeof(le), "+Inf");
		}
		if (n < 0 || (size_t)n >= sizeof(le))
			return -1;
		n = snprintf(lab_le, sizeof(lab_le), "%s%sle=\"%s\"", lab, *lab ? "," : "", le);
		if (n < 0 || (size_t)n >= sizeof(lab_le) ||
		    pg_buf_printf(out, "%s_bucket{%s} %llu\n", name, lab_le,
				  (unsigned long long)cum) < 0)
			return -1;
	}
	if (*lab)
		return pg_buf_printf(out, "%s_sum{%s} %.6f\n%s_count{%s} %llu\n", name, lab,
				     h->sum, name, lab, (unsigned long long)h->count) < 0 ? -1 : 0;
	return pg_buf_printf(out, "%s_sum %.6f\n%s_count %llu\n", name, h->sum, name,
			     (unsigned long long)h->count) < 0 ? -1 : 0;
}

static int api_gauge(struct pg_buf *out, const char *name, const char *help, int64_t v)
{
	return pg_buf_printf(out, "# HELP %s %s\n# TYPE %s gauge\n%s %lld\n", name, help, name,
			     name, (long long)v);
}

/* perfgate_change_points{state, direction} and perfgate_host_drift{state}. */
static int lab_metrics(const struct api_lab_counts *lab, struct pg_buf *out)
{
	static const char *const states[3] = { "suspected", "confirmed", "dismissed" };

	if (pg_buf_adds(out, "# HELP perfgate_change_points Change points found on main "
			"branches, by state (confirmed: located at one commit) and direction.\n"
			"# TYPE perfgate_change_points gauge\n") < 0)
		return -1;
	for (int i = 0; i < 3; i++)
		for (int w = 1; w >= 0; w--)
			if (pg_buf_printf(out, "perfgate_change_points{state=\"%s\",direction=\"%s\"} "
					  "%lld\n", states[i], w ? "regression" : "improvement",
					  (long long)lab->change_points[i][w]) < 0)
				return -1;
	if (pg_buf_printf(out, "# HELP perfgate_host_drift Open host drift flags, by state "
			  "(drained: the host leases nothing until cleared).\n"
			  "# TYPE perfgate_host_drift gauge\n"
			  "perfgate_host_drift{state=\"flagged\"} %lld\n"
			  "perfgate_host_drift{state=\"drained\"} %lld\n",
			  (long long)lab->drift_flagged, (long long)lab->drift_drained) < 0 ||
	    pg_buf_adds(out, "# HELP perfgate_ssh_hosts Hosts driven over SSH, by the state of "
			"their connection (error: the last one failed).\n"
			"# TYPE perfgate_ssh_hosts gauge\n") < 0)
		return -1;
	for (int i = 0; i < SSH_STATE_COUNT; i++)
		if (pg_buf_printf(out, "perfgate_ssh_hosts{state=\"%s\"} %lld\n",
				  ssh_state_name((enum ssh_state)i), (long long)lab->ssh_hosts[i]) < 0)
			return -1;
	return 0;
}

int api_metrics_format(const struct api_counts *c, const struct sched_stats *s,
		       const struct api_lab_counts *lab, struct pg_buf *out)
{
	const struct {
		const char *state;
		int64_t n;
	} jobs[] = {
		{ "queued", s->queued }, { "held", s->held }, { "leased", s->leased },
		{ "running", s->running }, { "done", s->done }, { "cancelled", s->cancelled },
		{ "infra-error", s->infra_error },
	};

	if (pg_buf_adds(out, "# HELP perfgate_jobs Jobs per state (held: queued but held "
			"back, also counted as queued).\n# TYPE perfgate_jobs gauge\n") < 0)
		return -1;
	for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++)
		if (pg_buf_printf(out, "perfgate_jobs{state=\"%s\"} %lld\n", jobs[i].state,
				  (long long)jobs[i].n) < 0)
			return -1;
	if (api_gauge(out, "perfgate_agents", "Agents registered.", s->agents) < 0 ||
	    api_gauge(out, "perfgate_agents_online", "Enabled agents seen recently.",
		      s->agents_online) < 0 ||
	    api_gauge(out, "perfgate_agents_busy", "Agents holding a leased or running job.",
		      s->agents_busy) < 0 ||
	    api_gauge(out, "perfgate_leases_waiting", "Lease requests waiting for a job.",
		      c->waiting) < 0)
		return -1;
	if (pg_buf_printf(out, "# HELP perfgate_leases_total Leases given since start.\n"
			  "# TYPE perfgate_leases_total counter\nperfgate_leases_total %llu\n",
			  (unsigned long long)c->leases) < 0 ||
	    pg_buf_adds(out, "# HELP perfgate_results_total Results received, by what became "
			"of them.\n# TYPE perfgate_results_total counter\n") < 0)
		return -1;
	for (size_t i = 0; i < API_RESULT_KINDS; i++)
		if (pg_buf_printf(out, "perfgate_results_total{status=\"%s\"} %llu\n",
				  api_result_names[i], (unsigned long long)c->results[i]) < 0)
			return -1;
	if (pg_buf_adds(out, "# HELP perfgate_http_requests_total HTTP requests answered, by "
			"status code.\n# TYPE perfgate_http_requests_total counter\n") < 0)
		return -1;
	for (size_t code = 0; code < API_METRICS_CODES; code++)
		if (c->by_code[code] &&
		    pg_buf_printf(out, "perfgate_http_requests_total{code=\"%zu\"} %llu\n", code,
				  (unsigned long long)c->by_code[code]) < 0)
			return -1;
	if (pg_buf_adds(out, "# HELP perfgate_http_request_duration_seconds Time from a "
			"request's headers to its response, by route.\n"
			"# TYPE perfgate_http_request_duration_seconds histogram\n") < 0)
		return -1;
	for (size_t ep = 0; ep < API_EP_COUNT; ep++)
		if (api_hist_format(out, "perfgate_http_request_duration_seconds", "route",
				    api_route_name((enum api_ep)ep), &c->route[ep]) < 0)
			return -1;
	if (pg_buf_adds(out, "# HELP perfgate_api_stage_duration_seconds Where the requests "
			"that change the store spent their time: queued for the writer until "
			"their batch committed (writer), then until the WAL was on disk, for "
			"those whose answers wait for it (sync), then until the answer was "
			"sent (send).\n"
			"# TYPE perfgate_api_stage_duration_seconds histogram\n") < 0)
		return -1;
	for (size_t i = 0; i < API_STAGE_COUNT; i++)
		if (api_hist_format(out, "perfgate_api_stage_duration_seconds", "stage",
				    api_stage_names[i], &c->stage[i]) < 0)
			return -1;
	if (pg_buf_adds(out, "# HELP perfgate_store_wal_sync_duration_seconds Time of each "
			"sync (fdatasync) of the store's write-ahead log by the API.\n"
			"# TYPE perfgate_store_wal_sync_duration_seconds histogram\n") < 0 ||
	    api_hist_format(out, "perfgate_store_wal_sync_duration_seconds", NULL, NULL,
			    &c->wal_sync) < 0)
		return -1;
	return lab ? lab_metrics(lab, out) : 0;
}
