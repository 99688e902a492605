/* sensor_store.h: a sensor's pokes on record (the table sensor_pokes,
 * store/schema.c): one row per task instance, for its current try: when
 * it first poked, how often, the last result and when the next poke is
 * due, so that the API and the UI show "waiting since T, N pokes" and a
 * restarted server goes on where it was.  A new try starts the row again.
 * The row goes with its TI (ON DELETE CASCADE).
 *
 * Also the reads an external_task sensor makes: the state of another DAG's
 * task (or run) at a logical date, or of all the task instances of that
 * run (several tasks, a task group).
 */
#ifndef WEIR_STORE_SENSOR_STORE_H
#define WEIR_STORE_SENSOR_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "store/store.h"

#define SENSOR_RESULT_MAX 256

struct sensor_poke_row {
	char *dag_id;
	char *run_id;
	char *task_id;
	int map_index;
	int try_number;
	int64_t first_poke_at; /* epoch ms: the try's first poke (its timeout counts from it) */
	int64_t last_poke_at;  /* 0 before the first */
	int64_t next_poke_at;  /* 0: none due (it ended, or a poke is under way) */
	int pokes;
	char last_result[SENSOR_RESULT_MAX];
};

/* Inserts or replaces the TI's row. */
int sensor_store_put(struct store *s, const struct sensor_poke_row *r, struct weir_error *err);
/* The TI's row; WEIR_E_NOT_FOUND when it never poked. */
int sensor_store_get(struct store *s, const char *dag_id, const char *run_id, const char *task_id,
                     int map_index, struct sensor_poke_row *out, struct weir_error *err);
/* The rows of the TIs that are up_for_reschedule now (a restart's waiting
 * sensors).  *rows is newly allocated (sensor_poke_rows_free()). */
int sensor_store_waiting(struct store *s, struct sensor_poke_row **rows, size_t *n,
                         struct weir_error *err);
void sensor_poke_row_release(struct sensor_poke_row *r);
void sensor_poke_rows_free(struct sensor_poke_row *rows, size_t n);

/* The state of DAG dag_id's task task_id (NULL: of the run itself) in its
 * run at logical date `logical_ms` (map index -1, or the first instance)
 * into state (size bytes); "" when there is no such run or TI. */
int sensor_store_external_state(struct store *s, const char *dag_id, const char *task_id,
                                int64_t logical_ms, char *state, size_t size,
                                struct weir_error *err);

/* A task instance of another DAG's run: its task and its state. */
struct sensor_ext_row {
	char *task_id;
	char *state;
};

/* The task instances (each map index) of DAG dag_id's run at logical date
 * `logical_ms`, by task id, and whether that run exists (*run_found).
 * *rows is newly allocated (sensor_ext_rows_free()). */
int sensor_store_external_tis(struct store *s, const char *dag_id, int64_t logical_ms,
                              bool *run_found, struct sensor_ext_row **rows, size_t *n,
                              struct weir_error *err);
void sensor_ext_rows_free(struct sensor_ext_row *rows, size_t n);

/* The id of DAG dag_id's run at logical date `logical_ms` into run_id (size
 * bytes); "" when it has none (an ExternalTaskMarker's clear). */
int sensor_store_external_run(struct store *s, const char *dag_id, int64_t logical_ms, char *run_id,
                              size_t size, struct weir_error *err);

#endif
