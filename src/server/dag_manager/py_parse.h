/* py_parse.h: one Python DAG file's parse, shared by pyfiles.c (a cold
 * processor: a process spawned for the file) and pywarm.c (the warm
 * processor: a child forked for it by a long-lived one).
 *
 * Whichever ran it fills the outcome (buf, len, status, term_signal,
 * timed_out, too_much) and calls dm_py_finish(), which applies the answer
 * to the file's entry once.  A parse frees itself when its last libuv
 * handle has closed (dm_py_on_closed()).
 */
#ifndef WEIR_SERVER_DAG_MANAGER_PY_PARSE_H
#define WEIR_SERVER_DAG_MANAGER_PY_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <uv.h>

#include "lib/strvec.h"
#include "server/dag_manager/dm_internal.h"

/* What a processor may write before it is killed (an import error then). */
#define PY_ANSWER_MAX (8 * 1024 * 1024)
/* After its exit, how long the rest of the answer may take (a process the
 * file forked may still hold the pipe open). */
#define PY_DRAIN_MS 1000

struct py_parse {
	struct dag_manager *dm; /* NULL once detached (the manager went away), or alone */
	struct dag_entry *e;
	const char *file;   /* the DAG file (e's, or dag_manager_py_documents()'s) */
	int64_t timeout_ms; /* dagbag_import_timeout */
	/* the latest scheduled run of each of the file's DAGs, for a custom
	 * timetable's next runs ({dag_id: {logical, start, end}} in ms; the
	 * processor's WEIR_AIRFLOW_LAST_RUNS, a warm request's last_runs);
	 * NULL: none */
	json_t *last_runs;
	/* the variables the parse is given ({"values": {KEY: text or null},
	 * "refused": [KEY]}: the file's var_names, secret keys refused): a cold
	 * processor's standard input (in, in_text), a warm request's
	 * `variables`; NULL: none (a parse alone) */
	json_t *variables;
	uv_pipe_t in;
	uv_write_t in_req;
	char *in_text;
	/* dag_manager_py_documents(): the outcome, kept by finish() */
	bool alone;
	json_t **docs_out;
	char **error_out;
	uv_process_t proc; /* a cold processor's */
	uv_pipe_t out;     /* a cold processor's output */
	uv_timer_t timer;  /* a cold one's time limit; a warm one's wait for its answer */
	int open;          /* handles still open; the struct goes with the last */
	char *buf;         /* what the processor wrote; its last line is the answer */
	size_t len, cap;
	bool exited, eof, timed_out, too_much, done;
	int64_t status;
	int term_signal;
	int64_t started_ms;
	/* pywarm.c: sent to the warm processor under this id */
	bool warm;
	uint64_t warm_id;
	struct py_parse *warm_next;
};

/* The parse's outcome applied (once): its file's DAGs or its import
 * error, the next waiting file started; for a parse alone, the outcome
 * kept for dag_manager_py_documents(). */
void dm_py_finish(struct py_parse *p);
/* A close callback of a parse's handles: the parse is freed with its last
 * (p->open counts them). */
void dm_py_on_closed(uv_handle_t *h);
/* Room to read into at buf[len] (a libuv alloc callback's answer): the
 * buffer grown (doubled, 128 KiB first) when less than 64 KiB is left,
 * one byte always kept for a NUL; a NULL room when out of memory. */
void dm_py_read_room(char **buf, size_t len, size_t *cap, uv_buf_t *room);
/* The environment of a processor: the server's as a task gets it (no
 * credential, connection or variable: lib/env_scrub.h), PYTHONPATH led by
 * weir's `airflow` folder; with a `home` (the server's, not the CLI's),
 * WEIR_AIRFLOW_WARM_DIR=HOME/airflow-warm: the processor starts the root of
 * the tasks' warm interpreters there (docs/internals/airflow_warm.md).  -1
 * when out of memory. */
int dm_py_env(const char *python_path, const char *home, struct strvec *env);

/* ---- pywarm.c ---- */

/* Hands p (p->e's file, not yet started) to the warm processor, starting
 * it when it is not running: 0 when it took p (its answer comes to
 * dm_py_finish() later), -1 when p must run cold (the warm processor is
 * off: WEIR_AIRFLOW_WARM_PROCESSOR=0, it failed lately, or it cannot
 * start). */
int dm_pywarm_send(struct dag_manager *dm, struct py_parse *p);
/* At destroy: the warm processor killed, its handles closed; its parses
 * are the caller's to detach (dm_py_stop_all()). */
void dm_pywarm_stop(struct dag_manager *dm);

#endif
