/* due_table.h: when each job's next timeout falls (sched/timers.h), kept in
 * memory so that the server looks again only at the jobs it changed and at
 * the ones whose time has come, not at every active job on every turn.
 *
 * A table of (job id, due time) pairs, at most one per job.  Small and flat:
 * a server has as many entries as active jobs with a timeout running.
 */
#ifndef WEIR_SCHED_DUE_TABLE_H
#define WEIR_SCHED_DUE_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct due_table {
	struct due_entry {
		int64_t job_id;
		int64_t due_ms;
	} * e;
	size_t n, cap;
};

/* Sets the job's due time; TIMER_NEVER (sched/timers.h) removes the job.
 * -1 when out of memory (the table is unchanged). */
int due_table_set(struct due_table *t, int64_t job_id, int64_t due_ms);

/* The earliest due time; TIMER_NEVER when the table is empty. */
int64_t due_table_earliest(const struct due_table *t);

/* The jobs due at or before now_ms, in a new array (*n of them; NULL when
 * none or out of memory, then *n is 0).  They stay in the table. */
int64_t *due_table_due(const struct due_table *t, int64_t now_ms, size_t *n);

void due_table_clear(struct due_table *t);

#endif
