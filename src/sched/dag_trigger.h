/* dag_trigger.h: trigger rules: whether a task instance may run, must wait,
 * or will never run, from the states of its upstream tasks.
 *
 * Airflow's semantics (its TriggerRuleDep with flag_upstream_failed), so a
 * DAG behaves as it did there.  With `total` upstreams of which `done` are
 * finished (success, failed, upstream_failed, skipped):
 *
 *   rule          cascades (checked first)              ready when
 *   all_success   failed|upstream_failed>0: UPSTREAM_FAILED;   success == total
 *                 else skipped>0: SKIPPED
 *   all_failed    success|skipped>0: SKIPPED                   failed+upstream_failed == total
 *   all_done      -                                             done == total
 *   one_success   done == total and all skipped: SKIPPED;       success > 0
 *                 done == total and success == 0: UPSTREAM_FAILED
 *   one_failed    done == total and no failed|upstream_failed:  failed+upstream_failed > 0
 *                 SKIPPED
 *   none_failed   failed|upstream_failed>0: UPSTREAM_FAILED     success+skipped == total
 *   none_skipped  skipped>0: SKIPPED                            done == total
 *   none_failed_  failed|upstream_failed>0: UPSTREAM_FAILED;   success+skipped == total
 *   min_one_      else skipped == total: SKIPPED
 *   success
 *   all_skipped   success|failed|upstream_failed>0: SKIPPED    skipped == total
 *   one_done      done == total and no success|failed: SKIPPED success+failed > 0
 *                 (upstream_failed does not count, as Airflow)
 *   all_done_     done == total, setups and all skipped: SKIPPED; done == total
 *   setup_        done == total, setups and none succeeded:
 *   success       UPSTREAM_FAILED (a teardown's: it runs once a setup it
 *                 tears down ran; without setup upstreams, all_done)
 *   always        -                                             at once, even before its
 *                                                               upstreams (as Airflow)
 *
 * A task without upstreams is READY under every rule (Airflow skips the
 * check).  Otherwise WAIT.  The cascades decide as soon as the outcome is
 * certain, not when every upstream is done: all_success gives
 * UPSTREAM_FAILED on the first failure, one_success READY on the first
 * success.
 *
 * Pure; no allocation.
 */
#ifndef WEIR_SCHED_DAG_TRIGGER_H
#define WEIR_SCHED_DAG_TRIGGER_H

#include "model/dag_spec.h"
#include "sched/dag_states.h"

/* The rules are the model's (model/dag_spec.h: enum trigger_rule and
 * trigger_rule_name()), so a parsed task's rule is used as it is. */
#define DAG_TRIGGER_RULE_COUNT (TRIGGER_ALL_DONE_SETUP_SUCCESS + 1)

/* What a TI in state none becomes. */
enum dag_trigger_verdict {
	DAG_TRIGGER_WAIT = 0,
	DAG_TRIGGER_READY,           /* -> scheduled */
	DAG_TRIGGER_UPSTREAM_FAILED, /* -> upstream_failed */
	DAG_TRIGGER_SKIPPED,         /* -> skipped */
};

/* The states of a task's upstreams, one count per upstream task (a foreach
 * group counts once: dag_trigger_group_state()). */
struct dag_upstream_counts {
	int total; /* upstream tasks */
	int success;
	int failed;
	int upstream_failed;
	int skipped;
	int done;          /* finished in any of the four states above (removed counts too) */
	int setups;        /* upstream setup tasks (dag_upstream_counts_setup()) */
	int setup_success; /* ... that succeeded */
	int setup_skipped; /* ... that were skipped */
};

/* Upstream setup task in state `s`, counted (beside dag_upstream_counts_add). */
void dag_upstream_counts_setup(struct dag_upstream_counts *c, enum dag_ti_state s);

const char *dag_trigger_verdict_name(enum dag_trigger_verdict v);

enum dag_trigger_verdict dag_trigger_evaluate(enum trigger_rule rule,
                                              const struct dag_upstream_counts *c);

/* Adds one upstream in state `s` to `c` (unfinished states only count in
 * total). */
void dag_upstream_counts_add(struct dag_upstream_counts *c, enum dag_ti_state s);

/* The state a foreach group of `n` instances shows its downstream, so the
 * join waits for all of them:
 *   - any instance unfinished (none .. running, up_for_retry): that
 *     unfinished state (DAG_TI_RUNNING stands for all of them) -- the join waits;
 *   - else any failed: failed; else any upstream_failed: upstream_failed;
 *   - else any skipped: skipped (an empty group, n == 0, is skipped, as
 *     Airflow skips a task mapped over nothing); else success.
 * Removed instances are left out. */
enum dag_ti_state dag_trigger_group_state(const enum dag_ti_state *states, int n);

#endif
