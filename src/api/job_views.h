/* job_views.h: the JSON of weir's job routes (docs/api.md): Job, Task and
 * Event objects and their lists, rendered from typed rows (store/store.h)
 * and job specs (model/job_spec.h).
 *
 * Pure: nothing here reads the store or the job manager.  What a row alone
 * does not say comes in as a plain value: where the job runs (struct
 * job_place).  The ops of api/job_api.h hand a job over as a struct
 * job_view, which the routes render and release.  Every render function
 * returns a new reference, or NULL out of memory; inputs are borrowed.
 * The long poll's answers are written as text instead (job_view_job_write),
 * once per change, and never built as a tree.
 */
#ifndef WEIR_API_JOB_VIEWS_H
#define WEIR_API_JOB_VIEWS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "lib/strbuf.h"
#include "model/job_spec.h"
#include "store/store.h"

#define JOB_PLACE_QUEUE_MAX 72

/* Where a job runs: the backend chosen at submission and the queue it
 * named. */
struct job_place {
	bool gang;                       /* the gang backend (Slurm); else local */
	char queue[JOB_PLACE_QUEUE_MAX]; /* "" when none */
};

/* A job as an op hands it to the routes: its row, its place and its
 * current attempt's tasks.  Owned: job_view_release() frees what it holds
 * (and leaves it zeroed). */
struct job_view {
	struct job_row row;
	struct job_place place;
	struct task_row *tasks;
	size_t n_tasks;
};

void job_view_release(struct job_view *v);
/* Releases each of n views and frees the array (NULL: nothing). */
void job_views_free(struct job_view *v, size_t n);

/* A Task. */
json_t *job_view_task(const struct task_row *t);
/* [Task...] in the rows' order. */
json_t *job_view_tasks(const struct task_row *rows, size_t n);
/* A Job in full: the row's fields, its executor and queue, its stored spec
 * and `tasks` (its current attempt's). */
json_t *job_view_job(const struct job_row *job, const struct job_place *place,
                     const struct task_row *tasks, size_t n_tasks);
/* A Job as a list shows it: the row's fields, executor and queue, then its
 * roles' shape and resources from `spec` (NULL: none) and how many of
 * `tasks` are in each state. */
json_t *job_view_job_brief(const struct job_row *job, const struct job_place *place,
                           const struct job_spec *spec, const struct task_row *tasks,
                           size_t n_tasks);
/* An Event. */
json_t *job_view_event(const struct event_row *e);
/* [Event...] in the rows' order. */
json_t *job_view_events(const struct event_row *rows, size_t n);
/* The same Job and Events written straight into sb as compact JSON, the
 * members in the order of the trees above, strings escaped as
 * json_dumps() escapes them: what a route that answers with the text
 * alone writes without building a tree.  The Job's spec is the stored
 * text as it is (compact, as the job manager stores it: what the tree
 * shows of it), or {} when that is not an object's text.  A task or an
 * event with a string that is not UTF-8 is left out, as the trees leave
 * out the element they cannot make.  0, or -1 when out of memory (or one
 * of the Job's own strings is not UTF-8: sb->failed tells them apart). */
int job_view_job_write(struct strbuf *sb, const struct job_row *job, const struct job_place *place,
                       const struct task_row *tasks, size_t n_tasks);
int job_view_events_write(struct strbuf *sb, const struct event_row *rows, size_t n);

/* {key: items}; items is stolen. */
json_t *job_view_collection(const char *key, json_t *items);

#endif
