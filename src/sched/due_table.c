/* due_table.c: jobs' next timeout times (due_table.h). */
#include "sched/due_table.h"

#include <stdlib.h>

#include "lib/grow.h"
#include "sched/timers.h"

static size_t find(const struct due_table *t, int64_t job_id)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->e[i].job_id == job_id)
			return i;
	return t->n;
}

int due_table_set(struct due_table *t, int64_t job_id, int64_t due_ms)
{
	size_t i = find(t, job_id);

	if (due_ms == TIMER_NEVER) {
		if (i < t->n)
			t->e[i] = t->e[--t->n];
		return 0;
	}
	if (i == t->n) {
		if (ALLOC_GROW(t->e, t->n + 1, t->cap) < 0)
			return -1;
		t->n++;
	}
	t->e[i].job_id = job_id;
	t->e[i].due_ms = due_ms;
	return 0;
}

int64_t due_table_earliest(const struct due_table *t)
{
	int64_t min = TIMER_NEVER;

	for (size_t i = 0; i < t->n; i++)
		if (t->e[i].due_ms < min)
			min = t->e[i].due_ms;
	return min;
}

int64_t *due_table_due(const struct due_table *t, int64_t now_ms, size_t *n)
{
	int64_t *ids = NULL;
	size_t k = 0;

	*n = 0;
	for (size_t i = 0; i < t->n; i++)
		k += t->e[i].due_ms <= now_ms;
	if (k == 0 || !(ids = malloc(k * sizeof *ids)))
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		if (t->e[i].due_ms <= now_ms)
			ids[(*n)++] = t->e[i].job_id;
	return ids;
}

void due_table_clear(struct due_table *t)
{
	free(t->e);
	t->e = NULL;
	t->n = t->cap = 0;
}
