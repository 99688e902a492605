/* continuous_due.c: @continuous's next run, decided (continuous_due.h). */
#include "sched/continuous_due.h"

bool schedule_continuous_due(int64_t start_ms, int64_t end_ms, int64_t last_end_ms, bool active,
                             int64_t now_ms, struct schedule_interval *iv)
{
	if (active || start_ms == CRON_NEVER)
		return false;
	if (last_end_ms == CRON_NEVER) {
		iv->start_ms = start_ms;
		iv->end_ms = start_ms > now_ms ? start_ms : now_ms;
	} else {
		iv->start_ms = last_end_ms;
		iv->end_ms = now_ms;
	}
	if (end_ms != CRON_NEVER && iv->end_ms > end_ms)
		return false;
	return iv->end_ms <= now_ms && iv->start_ms <= iv->end_ms;
}
