/* dag_trigger.c: trigger rules and foreach group states (dag_trigger.h). */
#include "sched/dag_trigger.h"

#include <string.h>

const char *dag_trigger_verdict_name(enum dag_trigger_verdict v)
{
	switch (v) {
	case DAG_TRIGGER_WAIT:
		return "wait";
	case DAG_TRIGGER_READY:
		return "ready";
	case DAG_TRIGGER_UPSTREAM_FAILED:
		return "upstream_failed";
	case DAG_TRIGGER_SKIPPED:
		return "skipped";
	}
	return "?";
}

void dag_upstream_counts_add(struct dag_upstream_counts *c, enum dag_ti_state s)
{
	c->total++;
	switch (s) {
	case DAG_TI_SUCCESS:
		c->success++;
		break;
	case DAG_TI_FAILED:
		c->failed++;
		break;
	case DAG_TI_UPSTREAM_FAILED:
		c->upstream_failed++;
		break;
	case DAG_TI_SKIPPED:
		c->skipped++;
		break;
	case DAG_TI_REMOVED:
		break;
	default:
		return; /* unfinished */
	}
	c->done++;
}

void dag_upstream_counts_setup(struct dag_upstream_counts *c, enum dag_ti_state s)
{
	c->setups++;
	if (s == DAG_TI_SUCCESS)
		c->setup_success++;
	else if (s == DAG_TI_SKIPPED)
		c->setup_skipped++;
}

enum dag_trigger_verdict dag_trigger_evaluate(enum trigger_rule rule,
                                              const struct dag_upstream_counts *c)
{
	if (rule == TRIGGER_ALWAYS || c->total == 0)
		return DAG_TRIGGER_READY;
	bool all_done = c->done >= c->total;
	int failures = c->failed + c->upstream_failed;

	switch (rule) {
	case TRIGGER_ALL_SUCCESS:
		if (failures > 0)
			return DAG_TRIGGER_UPSTREAM_FAILED;
		if (c->skipped > 0)
			return DAG_TRIGGER_SKIPPED;
		return c->success >= c->total ? DAG_TRIGGER_READY : DAG_TRIGGER_WAIT;
	case TRIGGER_ALL_FAILED:
		if (c->success > 0 || c->skipped > 0)
			return DAG_TRIGGER_SKIPPED;
		return failures >= c->total ? DAG_TRIGGER_READY : DAG_TRIGGER_WAIT;
	case TRIGGER_ALL_DONE:
		return all_done ? DAG_TRIGGER_READY : DAG_TRIGGER_WAIT;
	case TRIGGER_ONE_SUCCESS:
		/* Airflow checks the cascades before readiness; with every
		 * upstream done they cannot hide a success */
		if (all_done && c->skipped == c->done)
			return DAG_TRIGGER_SKIPPED;
		if (all_done && c->success == 0)
			return DAG_TRIGGER_UPSTREAM_FAILED;
		return c->success > 0 ? DAG_TRIGGER_READY : DAG_TRIGGER_WAIT;
	case TRIGGER_ONE_FAILED:
		if (all_done && failures == 0)
			return DAG_TRIGGER_SKIPPED;
		return failures > 0 ? DAG_TRIGGER_READY : DAG_TRIGGER_WAIT;
	case TRIGGER_NONE_FAILED:
		if (failures > 0)
			return DAG_TRIGGER_UPSTREAM_FAILED;
		return c->success + c->skipped >= c->total ? DAG_TRIGGER_READY : DAG_TRIGGER_WAIT;
	case TRIGGER_NONE_SKIPPED:
		if (c->skipped > 0)
			return DAG_TRIGGER_SKIPPED;
		return all_done ? DAG_TRIGGER_READY : DAG_TRIGGER_WAIT;
	case TRIGGER_NONE_FAILED_MIN_ONE_SUCCESS:
		if (failures > 0)
			return DAG_TRIGGER_UPSTREAM_FAILED;
		if (c->skipped >= c->total)
			return DAG_TRIGGER_SKIPPED;
		return c->success + c->skipped >= c->total ? DAG_TRIGGER_READY : DAG_TRIGGER_WAIT;
	case TRIGGER_ALL_SKIPPED:
		if (c->success > 0 || failures > 0)
			return DAG_TRIGGER_SKIPPED;
		return c->skipped >= c->total ? DAG_TRIGGER_READY : DAG_TRIGGER_WAIT;
	case TRIGGER_ALL_DONE_SETUP_SUCCESS:
		if (all_done && c->setups > 0 && c->setup_skipped >= c->setups)
			return DAG_TRIGGER_SKIPPED;
		if (all_done && c->setups > 0 && c->setup_success == 0)
			return DAG_TRIGGER_UPSTREAM_FAILED;
		return all_done ? DAG_TRIGGER_READY : DAG_TRIGGER_WAIT;
	case TRIGGER_ONE_DONE:
		if (all_done && c->success + c->failed == 0)
			return DAG_TRIGGER_SKIPPED;
		return c->success + c->failed > 0 ? DAG_TRIGGER_READY : DAG_TRIGGER_WAIT;
	case TRIGGER_ALWAYS:
		return DAG_TRIGGER_READY;
	}
	return DAG_TRIGGER_WAIT;
}

enum dag_ti_state dag_trigger_group_state(const enum dag_ti_state *states, int n)
{
	bool failed = false, upstream_failed = false, skipped = false, any = false;
	for (int i = 0; i < n; i++) {
		switch (states[i]) {
		case DAG_TI_SUCCESS:
			any = true;
			break;
		case DAG_TI_FAILED:
			failed = any = true;
			break;
		case DAG_TI_UPSTREAM_FAILED:
			upstream_failed = any = true;
			break;
		case DAG_TI_SKIPPED:
			skipped = any = true;
			break;
		case DAG_TI_REMOVED:
			break;
		default:
			return DAG_TI_RUNNING;
		}
	}
	if (failed)
		return DAG_TI_FAILED;
	if (upstream_failed)
		return DAG_TI_UPSTREAM_FAILED;
	if (skipped || !any)
		return DAG_TI_SKIPPED;
	return DAG_TI_SUCCESS;
}
