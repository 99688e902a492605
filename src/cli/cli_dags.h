/* cli_dags.h: `weir dags list|show|trigger|state|runs|pause|unpause|backfill`.
 *
 * A client of the Airflow-compatible routes only (/api/v1/dags..., docs/api.md), so it reads
 * the same field names an Airflow client reads.  The helpers below are shared with
 * cli_tasks.c (the routes, the error report) or pure and unit-tested (conf, backfill dates).
 */
#ifndef WEIR_CLI_CLI_DAGS_H
#define WEIR_CLI_CLI_DAGS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/cli_common.h"
#include "lib/error.h"

/* argv[0] is "dags".  Returns the exit status (docs/cli.md). */
int cli_dags_main(int argc, char **argv, const struct cli_globals *g);
void cli_dags_usage(FILE *out);

/* `dags test` (one_task false: argv is "test" FILE|DAG_ID and its flags) and
 * `tasks test` (one_task true: "test" DAG TASK [DATE]): the flags --conf,
 * --logical-date, --keep, --config, --executor local, --conn, --var, --dags
 * parsed here, the run done in this process (cli/cli_dag_test.h).  `usage`
 * prints the command's usage.  Returns the test's exit status. */
int cli_dag_test_main(int argc, char **argv, const struct cli_globals *g, bool one_task,
                      void (*usage)(FILE *));

/* "/api/v1/dags/DAG" + ("/dagRuns/RUN" when run is not NULL) + rest (may be NULL), with the
 * ids percent-encoded.  Newly allocated; NULL on out of memory. */
char *cli_dag_path(const char *dag, const char *run, const char *rest);

/* Prints why an Airflow route did not succeed (problem+json's title and detail, else as
 * cli_report) and returns the exit status for it. */
int cli_dag_report(const struct cli_ctx *ctx, const struct cli_reply *r);

/* --conf: `text` must be a JSON object.  A new reference, or NULL with err saying what is
 * wrong and where. */
json_t *cli_dags_parse_conf(const char *text, struct weir_error *err);

/* The schedule of a DAG object: Airflow's schedule_interval as a string or as
 * {"__type": "CronExpression", "value": "..."}; "none" when absent or null.  Borrowed. */
const char *cli_dag_schedule_text(json_t *dag);

/* The logical dates backfill creates runs for: every fire time of `schedule` in
 * [from_ms, to_ms] (both ends included), oldest first, on the wall clock of `timezone`
 * (NULL: UTC; cron.h's rules).  At most `max` go into out; *n gets
 * how many.  -1 with err when the schedule does not parse, has no grid (none, @once), the
 * range is empty or reversed, or more than `max` runs would be created. */
/* The logical dates of a backfill of a DAG whose schedule_interval (the
 * API's JSON) is a RelativeDelta: --from, then each one plus the step, up
 * to --to (Airflow's backfill of a DeltaDataIntervalTimetable starts its
 * first interval at the range's start).  1 with *n set when it is one; 0
 * when the schedule is no RelativeDelta (*n untouched); -1 with err. */
int cli_dags_backfill_steps(json_t *schedule_interval, int64_t from_ms, int64_t to_ms, int64_t *out,
                            size_t max, size_t *n, struct weir_error *err);

/* 0 when backfill can cut the DAG's schedule into runs, from the details'
 * schedule_kind (weir's; absent from an older server: 0); -1 with err when
 * it is a custom timetable or an events schedule (Airflow's backfill walks
 * the timetable; weir's CLI knows cron and delta grids only). */
int cli_dags_backfill_refusal(json_t *details, struct weir_error *err);

int cli_dags_backfill_dates(const char *schedule, const char *timezone, int64_t from_ms,
                            int64_t to_ms, int64_t *out, size_t max, size_t *n,
                            struct weir_error *err);

/* The time zone's name of a DAG's details (Airflow's "Timezone('Europe/Amsterdam')"), or
 * NULL when absent.  Borrowed (a static buffer). */
const char *cli_dag_timezone(json_t *details);

#endif
