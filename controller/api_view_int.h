/* SPDX-License-Identifier: MIT */
#ifndef CTL_API_VIEW_INT_H
#define CTL_API_VIEW_INT_H

/*
 * What api_view.c (series, runs, jobs, agents) and api_view_dash.c (the
 * dashboard's queue, trends and samples) share: one object per row.
 */

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "store.h"

/* Fills one object from the current row; false when out of memory. */
typedef bool (*vw_fill_fn)(cJSON *o, sqlite3_stmt *stmt);

/* Column i as text ("" for NULL). */
const char *vw_col_text(sqlite3_stmt *stmt, int i);

/* o[key] = column i; false when out of memory.  The _or_null forms add
 * null for a NULL column; vw_json parses a column of JSON text (null when
 * it does not parse). */
bool vw_text(cJSON *o, const char *key, sqlite3_stmt *stmt, int i);
bool vw_int(cJSON *o, const char *key, sqlite3_stmt *stmt, int i);
bool vw_real(cJSON *o, const char *key, sqlite3_stmt *stmt, int i);
bool vw_real_or_null(cJSON *o, const char *key, sqlite3_stmt *stmt, int i);
bool vw_bool(cJSON *o, const char *key, bool v);
bool vw_text_or_null(cJSON *o, const char *key, sqlite3_stmt *stmt, int i);
bool vw_int_or_null(cJSON *o, const char *key, sqlite3_stmt *stmt, int i);
bool vw_json(cJSON *o, const char *key, sqlite3_stmt *stmt, int i);

/* A row's columns as an object's members, one table per kind of row
 * instead of a function of calls: each entry adds o[key] from column col
 * as the vw_* function of its kind would; a NULL key ends the table. */
enum vw_kind {
	VW_TEXT, VW_TEXT_OR_NULL, VW_INT, VW_INT_OR_NULL, VW_REAL, VW_REAL_OR_NULL, VW_JSON,
};

struct vw_col {
	const char *key;
	enum vw_kind kind;
	int col;
};

bool vw_cols(cJSON *o, sqlite3_stmt *stmt, const struct vw_col *cols);

/* Run sql with args and append one object per row, filled by fill, to
 * arr.  Returns 0 or -1. */
int vw_rows(struct store *st, cJSON *arr, const char *what, const char *sql,
	    const struct store_arg *args, size_t nargs, vw_fill_fn fill, struct pg_err *err);

/* Like vw_rows() into a new array o[key]. */
int vw_add_rows(struct store *st, cJSON *o, const char *key, const char *sql,
		const struct store_arg *args, size_t nargs, vw_fill_fn fill, struct pg_err *err);

/* Like vw_rows() into a new array *out (NULL on failure). */
int vw_list(struct store *st, const char *what, const char *sql, const struct store_arg *args,
	    size_t nargs, vw_fill_fn fill, cJSON **out, struct pg_err *err);

/* Run sql (one row expected, its id bound as ?1) and fill *out;
 * PG_ENOTFOUND names `what` and the id when there is no row. */
int vw_one(struct store *st, const char *what, int64_t id, const char *sql, vw_fill_fn fill,
	   cJSON **out, struct pg_err *err);

/* A job as the lists show it, from JOB_COLUMNS JOB_FROM (api_view.h). */
#define JOB_COLUMNS \
	"j.id, j.run_id, r.series_id, j.context, j.host_class, j.build_mode, j.state," \
	" j.priority, j.attempt, ag.name, j.lease_expires, j.stage, j.progress, j.stage_at," \
	" j.outcome, j.outcome_detail, j.created_at, j.started_at, j.finished_at, j.spec"
#define JOB_FROM \
	" FROM jobs j JOIN runs r ON r.id = j.run_id LEFT JOIN agents ag ON ag.id = j.agent_id"
#define JOB_NCOLUMNS 20
bool vw_fill_job(cJSON *o, sqlite3_stmt *stmt);

#endif
