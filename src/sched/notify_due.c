/* notify_due.c: a delivery's next attempt and SLA misses (notify_due.h). */
#include "sched/notify_due.h"

struct notify_retry notify_retry_decide(int attempt, int retries, int64_t delay_ms, int64_t now_ms)
{
	struct notify_retry r = {0};
	int64_t wait = delay_ms > 0 ? delay_ms : 0;

	if (attempt < 1 || attempt > retries)
		return r;
	for (int i = 1; i < attempt && wait < NOTIFY_RETRY_CAP_MS; i++)
		wait *= 2;
	if (wait > NOTIFY_RETRY_CAP_MS)
		wait = NOTIFY_RETRY_CAP_MS;
	r.again = true;
	r.at_ms = now_ms + wait;
	return r;
}

int64_t sla_due_ms(const struct dag_sla *sla, int64_t logical_ms, int64_t run_start_ms)
{
	int64_t anchor;

	if (!sla || sla->within_s <= 0)
		return 0;
	anchor = sla->from == SLA_FROM_RUN_START ? run_start_ms : logical_ms;
	if (anchor <= 0)
		return 0;
	return anchor + sla->within_s * 1000;
}

/* Whether a TI in this state has met (or can no longer miss) its SLA. */
static bool sla_met(enum dag_ti_state s)
{
	return s == DAG_TI_SUCCESS || s == DAG_TI_SKIPPED || s == DAG_TI_REMOVED;
}

void sla_decide(const struct sla_item *items, size_t n, int64_t now_ms, size_t *missed,
                size_t *n_missed, int64_t *next_ms)
{
	*n_missed = 0;
	*next_ms = 0;
	for (size_t i = 0; i < n; i++) {
		const struct sla_item *it = &items[i];
		if (it->due_ms <= 0 || it->recorded || sla_met(it->state))
			continue;
		if (it->due_ms <= now_ms)
			missed[(*n_missed)++] = i;
		else if (*next_ms == 0 || it->due_ms < *next_ms)
			*next_ms = it->due_ms;
	}
}
