/* test_dag_run.c: DAG run states, trigger rules, run progression, retries,
 * clear and marks, foreach joins, pools and max_active_tasks/runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/dag_pool.h"
#include "sched/dag_run.h"
#include "sched/dag_states.h"
#include "sched/dag_trigger.h"

/* ---- helpers ---- */

#define MAX_TIS 32

struct run {
	struct dag_graph g;
	struct dag_ti tis[MAX_TIS];
	size_t n;
	enum dag_run_state state;
	struct dag_run_decision d; /* the last decision */
};

static void run_init(struct run *r, const struct dag_task_node *tasks, size_t n_tasks)
{
	memset(r, 0, sizeof(*r));
	r->g.tasks = tasks;
	r->g.n_tasks = n_tasks;
	r->n = dag_graph_ti_count(&r->g);
	assert_true(r->n <= MAX_TIS);
	r->state = DAG_RUN_QUEUED;
}

static void run_free(struct run *r)
{
	dag_run_decision_release(&r->d);
}

/* Decides for `ev` at `now` and applies the decision. */
static void step(struct run *r, const struct dag_event *ev, int64_t now)
{
	struct weir_error err = {0};
	dag_run_decision_release(&r->d);
	if (dag_run_decide(&r->g, r->state, r->tis, r->n, ev, now, &r->d, &err) != 0)
		fail_msg("decide: %s", err.msg);
	dag_run_apply(&r->d, r->tis, &r->state);
}

static void ev_simple(struct run *r, enum dag_event_kind kind, int64_t now)
{
	struct dag_event ev = {.kind = kind};
	step(r, &ev, now);
}

/* What the server does when a scheduled TI becomes a job and runs. */
static void start_ti(struct run *r, size_t i)
{
	assert_int_equal(r->tis[i].state, DAG_TI_SCHEDULED);
	r->tis[i].state = DAG_TI_RUNNING;
	r->tis[i].try_number++;
}

static void end_ti(struct run *r, size_t i, bool success, int64_t now)
{
	struct dag_event ev = {.kind = DAG_EV_TI_ENDED,
	                       .ti = i,
	                       .try_number = r->tis[i].try_number,
	                       .success = success};
	step(r, &ev, now);
}

/* The TIs the last decision made scheduled, as a string of task ids. */
static const char *scheduled_now(struct run *r, char *buf, size_t size)
{
	buf[0] = '\0';
	for (size_t k = 0; k < r->d.n_changes; k++) {
		const struct dag_ti_change *c = &r->d.changes[k];
		if (c->to != DAG_TI_SCHEDULED)
			continue;
		size_t t = 0;
		while (t + 1 < r->g.n_tasks && dag_graph_ti_base(&r->g, t + 1) <= c->ti)
			t++;
		size_t len = strlen(buf);
		snprintf(buf + len, size - len, "%s%s", len ? "," : "", r->g.tasks[t].task_id);
	}
	return buf;
}

static void expect_states(struct run *r, const enum dag_ti_state *want)
{
	for (size_t i = 0; i < r->n; i++) {
		if (r->tis[i].state != want[i])
			fail_msg("ti %zu: %s, expected %s", i, dag_ti_state_name(r->tis[i].state),
			         dag_ti_state_name(want[i]));
	}
}

#define NODE(id, ups, n_ups)                                                                       \
	{                                                                                          \
		.task_id = (id), .upstream = (ups), .n_upstream = (n_ups)                          \
	}

/* ---- states ---- */

static void test_state_names(void **state)
{
	(void)state;
	for (int s = 0; s < DAG_TI_STATE_COUNT; s++) {
		enum dag_ti_state back;
		assert_int_equal(dag_ti_state_from_name(dag_ti_state_name(s), &back), 0);
		assert_int_equal(back, s);
	}
	for (int s = 0; s < DAG_RUN_STATE_COUNT; s++) {
		enum dag_run_state back;
		assert_int_equal(dag_run_state_from_name(dag_run_state_name(s), &back), 0);
		assert_int_equal(back, s);
	}
	assert_string_equal(dag_ti_state_name(DAG_TI_UP_FOR_RETRY), "up_for_retry");
	assert_string_equal(dag_ti_state_name(DAG_TI_UPSTREAM_FAILED), "upstream_failed");
	assert_string_equal(dag_ti_state_name(DAG_TI_NONE), "none");
	assert_string_equal(dag_ti_state_name((enum dag_ti_state)99), "?");
	assert_string_equal(dag_run_state_name(DAG_RUN_SUCCESS), "success");
	enum dag_ti_state t;
	enum dag_run_state rs;
	assert_int_equal(dag_ti_state_from_name("succeeded", &t), -1);
	assert_int_equal(dag_ti_state_from_name(NULL, &t), -1);
	assert_int_equal(dag_run_state_from_name("killed", &rs), -1);

	assert_true(dag_ti_state_is_final(DAG_TI_SKIPPED));
	assert_true(dag_ti_state_is_final(DAG_TI_UPSTREAM_FAILED));
	assert_false(dag_ti_state_is_final(DAG_TI_UP_FOR_RETRY));
	assert_false(dag_ti_state_is_final(DAG_TI_SCHEDULED));
	assert_true(dag_ti_state_is_active(DAG_TI_QUEUED));
	assert_false(dag_ti_state_is_active(DAG_TI_SCHEDULED));
	assert_true(dag_run_state_is_final(DAG_RUN_FAILED));
	assert_false(dag_run_state_is_final(DAG_RUN_QUEUED));

	/* the normal path, retries, cascades */
	assert_true(dag_ti_state_can_move(DAG_TI_NONE, DAG_TI_SCHEDULED));
	assert_true(dag_ti_state_can_move(DAG_TI_SCHEDULED, DAG_TI_QUEUED));
	assert_true(dag_ti_state_can_move(DAG_TI_QUEUED, DAG_TI_RUNNING));
	assert_true(dag_ti_state_can_move(DAG_TI_RUNNING, DAG_TI_UP_FOR_RETRY));
	assert_true(dag_ti_state_can_move(DAG_TI_UP_FOR_RETRY, DAG_TI_SCHEDULED));
	assert_true(dag_ti_state_can_move(DAG_TI_NONE, DAG_TI_UPSTREAM_FAILED));
	assert_true(dag_ti_state_can_move(DAG_TI_FAILED, DAG_TI_NONE));    /* clear */
	assert_true(dag_ti_state_can_move(DAG_TI_FAILED, DAG_TI_SUCCESS)); /* mark */
	/* never */
	assert_false(dag_ti_state_can_move(DAG_TI_NONE, DAG_TI_RUNNING));
	assert_false(dag_ti_state_can_move(DAG_TI_RUNNING, DAG_TI_SCHEDULED));
	assert_false(dag_ti_state_can_move(DAG_TI_SUCCESS, DAG_TI_RUNNING));
	assert_false(dag_ti_state_can_move(DAG_TI_UPSTREAM_FAILED, DAG_TI_SCHEDULED));
	assert_false(dag_ti_state_can_move(DAG_TI_REMOVED, DAG_TI_SCHEDULED));
	assert_false(dag_ti_state_can_move(DAG_TI_SUCCESS, DAG_TI_UP_FOR_RETRY));

	assert_true(dag_run_state_can_move(DAG_RUN_QUEUED, DAG_RUN_RUNNING));
	assert_true(dag_run_state_can_move(DAG_RUN_RUNNING, DAG_RUN_FAILED));
	assert_true(dag_run_state_can_move(DAG_RUN_FAILED, DAG_RUN_QUEUED));
	assert_false(dag_run_state_can_move(DAG_RUN_SUCCESS, DAG_RUN_RUNNING));
	assert_false(dag_run_state_can_move((enum dag_run_state)9, DAG_RUN_RUNNING));
}

/* ---- trigger rules ---- */

static enum dag_ti_state st_of(char c)
{
	switch (c) {
	case 's':
		return DAG_TI_SUCCESS;
	case 'f':
		return DAG_TI_FAILED;
	case 'u':
		return DAG_TI_UPSTREAM_FAILED;
	case 'k':
		return DAG_TI_SKIPPED;
	case 'n':
		return DAG_TI_NONE;
	case 'r':
		return DAG_TI_RUNNING;
	case 'y':
		return DAG_TI_UP_FOR_RETRY;
	}
	fail_msg("bad state letter %c", c);
	return DAG_TI_NONE;
}

static char verdict_letter(enum dag_trigger_verdict v)
{
	switch (v) {
	case DAG_TRIGGER_WAIT:
		return 'W';
	case DAG_TRIGGER_READY:
		return 'R';
	case DAG_TRIGGER_UPSTREAM_FAILED:
		return 'U';
	case DAG_TRIGGER_SKIPPED:
		return 'S';
	}
	return '?';
}

/* Two upstreams: n unfinished, s success, f failed, u upstream_failed, k
 * skipped.  Verdicts W wait, R ready, U upstream_failed, S skipped, per rule
 * in the order all_success, all_done, all_failed, one_success, one_failed,
 * none_failed, none_skipped, always, none_failed_min_one_success,
 * all_skipped, one_done, all_done_setup_success (no setup upstream here:
 * all_done's column; test_setup_counts has the setups).  Worked out by hand from Airflow's
 * TriggerRuleDep, not from the code under test. */
static const struct {
	const char *ups;
	const char *want;
} truth[] = {
    {"nn", "WWWWWWWRWWWW"},
    {"ns", "WWSRWWWRWSRW"},
    {"nf", "UWWWRUWRUSRW"},
    {"nu", "UWWWRUWRUSWW"},
    {"nk", "SWSWWWSRWWWW"},
    {"ss", "RRSRSRRRRSRR"},
    {"sf", "URSRRURRUSRR"},
    {"su", "URSRRURRUSRR"},
    {"sk", "SRSRSRSRRSRR"},
    {"ff", "URRURURRUSRR"},
    {"fu", "URRURURRUSRR"},
    {"fk", "URSURUSRUSRR"},
    {"uu", "URRURURRUSSR"},
    {"uk", "URSURUSRUSSR"},
    {"kk", "SRSSSRSRSRSR"},
    /* one upstream, and unfinished states other than none */
    {"s", "RRSRSRRRRSRR"},
    {"f", "URRURURRUSRR"},
    {"k", "SRSSSRSRSRSR"},
    {"r", "WWWWWWWRWWWW"},
    {"y", "WWWWWWWRWWWW"},
    {"rs", "WWSRWWWRWSRW"},
    {"yf", "UWWWRUWRUSRW"},
    /* three: the first success is enough for one_success */
    {"nnf", "UWWWRUWRUSRW"},
    {"nsf", "UWSRRUWRUSRW"},
    {"ssk", "SRSRSRSRRSRR"},
    /* three, all skipped or one not yet */
    {"nkk", "SWSWWWSRWWWW"},
    {"kkk", "SRSSSRSRSRSR"},
};

static void test_trigger_truth_table(void **state)
{
	(void)state;
	for (size_t row = 0; row < sizeof(truth) / sizeof(truth[0]); row++) {
		const char *ups = truth[row].ups;
		size_t n = strlen(ups);
		/* both orders must agree */
		for (int rev = 0; rev < 2; rev++) {
			struct dag_upstream_counts c = {0};
			for (size_t i = 0; i < n; i++)
				dag_upstream_counts_add(&c, st_of(ups[rev ? n - 1 - i : i]));
			for (int rule = 0; rule < DAG_TRIGGER_RULE_COUNT; rule++) {
				char got = verdict_letter(dag_trigger_evaluate(rule, &c));
				if (got != truth[row].want[rule])
					fail_msg("upstreams %s, %s: %c, expected %c", ups,
					         trigger_rule_name(rule), got,
					         truth[row].want[rule]);
			}
		}
	}
	/* no upstreams: ready under every rule */
	struct dag_upstream_counts none = {0};
	for (int rule = 0; rule < DAG_TRIGGER_RULE_COUNT; rule++)
		assert_int_equal(dag_trigger_evaluate(rule, &none), DAG_TRIGGER_READY);

	/* names */
	for (int rule = 0; rule < DAG_TRIGGER_RULE_COUNT; rule++) {
		enum trigger_rule back;
		assert_int_equal(trigger_rule_from_name(trigger_rule_name(rule), &back), 0);
		assert_int_equal(back, rule);
	}
	enum trigger_rule r;
	assert_int_equal(trigger_rule_from_name("none_failed_or_skipped", &r), -1);
	assert_int_equal(trigger_rule_from_name("all_skipped", &r), 0);
	assert_int_equal(r, TRIGGER_ALL_SKIPPED);
	assert_string_equal(trigger_rule_name(TRIGGER_NONE_SKIPPED), "none_skipped");
	assert_string_equal(dag_trigger_verdict_name(DAG_TRIGGER_UPSTREAM_FAILED),
	                    "upstream_failed");
}

/* all_done_setup_success with setup upstreams (Airflow's teardown rule):
 * skipped when every setup was, upstream_failed when none succeeded, else
 * ready once every upstream is done. */
static void test_setup_counts(void **state)
{
	const struct {
		const char *ups;   /* the upstreams' states (as the truth table) */
		const char *setup; /* '1' where the upstream is a setup */
		char want;
	} rows[] = {
	    {"ss", "10", 'R'}, {"sf", "10", 'R'}, {"fs", "10", 'U'}, {"us", "10", 'U'},
	    {"ks", "10", 'S'}, {"kk", "11", 'S'}, {"sk", "11", 'R'}, {"fk", "11", 'U'},
	    {"ns", "10", 'W'}, {"sn", "10", 'W'}, {"ff", "00", 'R'},
	};
	(void)state;
	for (size_t row = 0; row < sizeof rows / sizeof rows[0]; row++) {
		struct dag_upstream_counts c = {0};
		for (size_t i = 0; rows[row].ups[i]; i++) {
			dag_upstream_counts_add(&c, st_of(rows[row].ups[i]));
			if (rows[row].setup[i] == '1')
				dag_upstream_counts_setup(&c, st_of(rows[row].ups[i]));
		}
		char got = verdict_letter(dag_trigger_evaluate(TRIGGER_ALL_DONE_SETUP_SUCCESS, &c));
		if (got != rows[row].want)
			fail_msg("upstreams %s (setups %s): %c, expected %c", rows[row].ups,
			         rows[row].setup, got, rows[row].want);
	}
}

static void test_group_state(void **state)
{
	(void)state;
	enum dag_ti_state s[4];
	const struct {
		const char *in;
		enum dag_ti_state want;
	} rows[] = {
	    {"sss", DAG_TI_SUCCESS}, {"srs", DAG_TI_RUNNING},        {"fsn", DAG_TI_RUNNING},
	    {"sfs", DAG_TI_FAILED},  {"su", DAG_TI_UPSTREAM_FAILED}, {"uf", DAG_TI_FAILED},
	    {"sk", DAG_TI_SKIPPED},  {"kk", DAG_TI_SKIPPED},         {"", DAG_TI_SKIPPED},
	    {"sy", DAG_TI_RUNNING},
	};
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		int n = (int)strlen(rows[r].in);
		for (int i = 0; i < n; i++)
			s[i] = st_of(rows[r].in[i]);
		if (dag_trigger_group_state(s, n) != rows[r].want)
			fail_msg("group %s: %s, expected %s", rows[r].in,
			         dag_ti_state_name(dag_trigger_group_state(s, n)),
			         dag_ti_state_name(rows[r].want));
	}
}

/* ---- graphs ---- */

static void test_graph_check(void **state)
{
	(void)state;
	struct weir_error err = {0};
	size_t up_b[] = {1}, up_a[] = {0}, up_far[] = {7};
	struct dag_task_node cyc[] = {NODE("a", up_b, 1), NODE("b", up_a, 1)};
	struct dag_graph g = {cyc, 2};
	assert_int_equal(dag_graph_check(&g, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);
	assert_non_null(strstr(err.msg, "cycle"));

	struct dag_task_node self[] = {NODE("a", up_a, 1)};
	g = (struct dag_graph){self, 1};
	assert_int_equal(dag_graph_check(&g, &err), -1);
	assert_non_null(strstr(err.msg, "task a: upstream 0 is itself"));

	struct dag_task_node far[] = {NODE("a", NULL, 0), NODE("b", up_far, 1)};
	g = (struct dag_graph){far, 2};
	assert_int_equal(dag_graph_check(&g, &err), -1);
	assert_non_null(strstr(err.msg, "task b: upstream 7 is out of range"));

	struct dag_task_node fe[] = {NODE("a", NULL, 0), NODE("f", up_a, 1)};
	fe[1].foreach = true;
	fe[1].n_instances = 3;
	g = (struct dag_graph){fe, 2};
	assert_int_equal(dag_graph_check(&g, &err), 0);
	assert_int_equal(dag_graph_ti_count(&g), 4);
	assert_int_equal(dag_graph_ti_base(&g, 1), 1);
	assert_int_equal(dag_graph_task_tis(&g, 1), 3);
	fe[1].n_instances = -1;
	assert_int_equal(dag_graph_check(&g, &err), -1);
	assert_non_null(strstr(err.msg, "foreach count -1"));

	/* a run whose TI count does not match its graph */
	fe[1].n_instances = 3;
	struct dag_ti tis[2] = {0};
	struct dag_event ev = {.kind = DAG_EV_EVALUATE};
	struct dag_run_decision d;
	assert_int_equal(dag_run_decide(&g, DAG_RUN_RUNNING, tis, 2, &ev, 0, &d, &err), -1);
	assert_non_null(strstr(err.msg, "2 task instances; its DAG has 4"));
	/* events out of range */
	struct dag_ti tis4[4] = {0};
	ev = (struct dag_event){.kind = DAG_EV_TI_ENDED, .ti = 4};
	assert_int_equal(dag_run_decide(&g, DAG_RUN_RUNNING, tis4, 4, &ev, 0, &d, &err), -1);
	ev = (struct dag_event){.kind = DAG_EV_MARK_TI, .ti = 0, .mark_ti = DAG_TI_RUNNING};
	assert_int_equal(dag_run_decide(&g, DAG_RUN_RUNNING, tis4, 4, &ev, 0, &d, &err), -1);
	assert_non_null(strstr(err.msg, "expected success or failed"));
	size_t bad = 2;
	ev = (struct dag_event){.kind = DAG_EV_CLEAR, .tasks = &bad, .n_tasks = 1};
	assert_int_equal(dag_run_decide(&g, DAG_RUN_RUNNING, tis4, 4, &ev, 0, &d, &err), -1);
	assert_non_null(strstr(err.msg, "clear task 2"));
}

/* ---- progression ---- */

/*    b
 *  a   d
 *    c      */
static const size_t up_a[] = {0};
static const size_t up_bc[] = {1, 2};

static void test_diamond_in_order(void **state)
{
	(void)state;
	struct dag_task_node t[] = {NODE("a", NULL, 0), NODE("b", up_a, 1), NODE("c", up_a, 1),
	                            NODE("d", up_bc, 2)};
	struct run r;
	char buf[128];
	run_init(&r, t, 4);

	/* a queued run schedules nothing until it starts */
	ev_simple(&r, DAG_EV_EVALUATE, 0);
	assert_int_equal(r.d.n_changes, 0);
	assert_int_equal(r.state, DAG_RUN_QUEUED);

	ev_simple(&r, DAG_EV_START, 0);
	assert_int_equal(r.state, DAG_RUN_RUNNING);
	assert_string_equal(scheduled_now(&r, buf, sizeof(buf)), "a");
	assert_int_equal(r.d.n_scheduled, 1);

	start_ti(&r, 0);
	ev_simple(&r, DAG_EV_EVALUATE, 1); /* nothing new while a runs */
	assert_int_equal(r.d.n_changes, 0);
	end_ti(&r, 0, true, 10);
	/* the same call schedules both successors */
	assert_string_equal(scheduled_now(&r, buf, sizeof(buf)), "b,c");
	assert_int_equal(r.d.n_scheduled, 2);
	start_ti(&r, 1);
	start_ti(&r, 2);
	end_ti(&r, 2, true, 20);
	assert_string_equal(scheduled_now(&r, buf, sizeof(buf)), ""); /* d waits for b */
	assert_int_equal(r.tis[3].state, DAG_TI_NONE);
	end_ti(&r, 1, true, 30);
	assert_string_equal(scheduled_now(&r, buf, sizeof(buf)), "d");
	assert_int_equal(r.state, DAG_RUN_RUNNING);
	start_ti(&r, 3);
	end_ti(&r, 3, true, 40);
	assert_int_equal(r.state, DAG_RUN_SUCCESS);
	assert_int_equal(r.d.run_from, DAG_RUN_RUNNING);
	assert_string_equal(r.d.reason, "");

	/* a late duplicate report changes nothing */
	struct dag_event ev = {.kind = DAG_EV_TI_ENDED, .ti = 3, .try_number = 1};
	step(&r, &ev, 50);
	assert_int_equal(r.d.n_changes, 0);
	assert_int_equal(r.state, DAG_RUN_SUCCESS);
	run_free(&r);
}

/* a -> b -> c; a fails: b and c are upstream_failed in the same call */
static void test_failure_cascades(void **state)
{
	(void)state;
	static const size_t up_b[] = {1};
	struct dag_task_node t[] = {NODE("a", NULL, 0), NODE("b", up_a, 1), NODE("c", up_b, 1)};
	struct run r;
	run_init(&r, t, 3);
	ev_simple(&r, DAG_EV_START, 0);
	start_ti(&r, 0);
	end_ti(&r, 0, false, 5);
	const enum dag_ti_state want[] = {DAG_TI_FAILED, DAG_TI_UPSTREAM_FAILED,
	                                  DAG_TI_UPSTREAM_FAILED};
	expect_states(&r, want);
	assert_int_equal(r.d.n_changes, 3);
	assert_int_equal(r.state, DAG_RUN_FAILED);
	assert_string_equal(r.d.reason, "task a failed (leaf c upstream_failed)");
	assert_int_equal(r.d.next_wakeup, 0);
	run_free(&r);
}

/* Airflow's run rule: leaves decide.  a -> cleanup(all_done): a failing does
 * not fail the run; a -> b(all_success) beside it does. */
static void test_run_result_rules(void **state)
{
	(void)state;
	struct dag_task_node t[] = {NODE("a", NULL, 0), NODE("cleanup", up_a, 1)};
	t[1].trigger_rule = TRIGGER_ALL_DONE;
	struct run r;
	run_init(&r, t, 2);
	ev_simple(&r, DAG_EV_START, 0);
	start_ti(&r, 0);
	end_ti(&r, 0, false, 1);
	assert_int_equal(r.tis[1].state, DAG_TI_SCHEDULED);
	assert_int_equal(r.state, DAG_RUN_RUNNING);
	start_ti(&r, 1);
	end_ti(&r, 1, true, 2);
	assert_int_equal(r.state, DAG_RUN_SUCCESS);
	run_free(&r);

	struct dag_task_node t2[] = {NODE("a", NULL, 0), NODE("cleanup", up_a, 1),
	                             NODE("b", up_a, 1)};
	t2[1].trigger_rule = TRIGGER_ALL_DONE;
	run_init(&r, t2, 3);
	ev_simple(&r, DAG_EV_START, 0);
	start_ti(&r, 0);
	end_ti(&r, 0, false, 1);
	assert_int_equal(r.tis[2].state, DAG_TI_UPSTREAM_FAILED);
	assert_int_equal(r.state, DAG_RUN_RUNNING); /* cleanup still to run */
	start_ti(&r, 1);
	end_ti(&r, 1, true, 2);
	assert_int_equal(r.state, DAG_RUN_FAILED);
	assert_string_equal(r.d.reason, "task a failed (leaf b upstream_failed)");
	run_free(&r);

	/* a failed leaf itself */
	struct dag_task_node t3[] = {NODE("only", NULL, 0)};
	run_init(&r, t3, 1);
	ev_simple(&r, DAG_EV_START, 0);
	start_ti(&r, 0);
	end_ti(&r, 0, false, 1);
	assert_int_equal(r.state, DAG_RUN_FAILED);
	assert_string_equal(r.d.reason, "task only failed");
	run_free(&r);

	/* a skipped leaf counts as success: on_failure (one_failed) after a
	 * success is skipped and the run succeeds */
	struct dag_task_node t4[] = {NODE("a", NULL, 0), NODE("on_failure", up_a, 1)};
	t4[1].trigger_rule = TRIGGER_ONE_FAILED;
	run_init(&r, t4, 2);
	ev_simple(&r, DAG_EV_START, 0);
	start_ti(&r, 0);
	end_ti(&r, 0, true, 1);
	assert_int_equal(r.tis[1].state, DAG_TI_SKIPPED);
	assert_int_equal(r.state, DAG_RUN_SUCCESS);
	run_free(&r);

	/* an empty DAG succeeds when it starts */
	run_init(&r, NULL, 0);
	ev_simple(&r, DAG_EV_START, 0);
	assert_int_equal(r.state, DAG_RUN_SUCCESS);
	run_free(&r);
}

/* Setup and teardown (Airflow's): s -> w -> t, t also below s, t under
 * all_done_setup_success and ignorable.  A failed teardown does not fail
 * the run; a failed work task does, though its only downstream is the
 * teardown, which runs; a failed setup leaves the teardown upstream_failed. */
static void test_setup_and_teardown(void **state)
{
	(void)state;
	size_t up_s[] = {0}, up_sw[] = {0, 1};
	struct run r;
	for (int round = 0; round < 3; round++) {
		struct dag_task_node t[] = {NODE("s", NULL, 0), NODE("w", up_s, 1),
		                            NODE("t", up_sw, 2)};
		t[0].setup = true;
		t[2].trigger_rule = TRIGGER_ALL_DONE_SETUP_SUCCESS;
		t[2].ignorable = true;
		run_init(&r, t, 3);
		ev_simple(&r, DAG_EV_START, 0);
		start_ti(&r, 0);
		end_ti(&r, 0, round != 2, 1);
		if (round == 2) {
			assert_int_equal(r.tis[1].state, DAG_TI_UPSTREAM_FAILED);
			assert_int_equal(r.tis[2].state, DAG_TI_UPSTREAM_FAILED);
			assert_int_equal(r.state, DAG_RUN_FAILED);
			run_free(&r);
			continue;
		}
		start_ti(&r, 1);
		end_ti(&r, 1, round == 0, 2);
		assert_int_equal(r.tis[2].state, DAG_TI_SCHEDULED); /* the teardown runs */
		start_ti(&r, 2);
		end_ti(&r, 2, round == 1, 3);
		/* round 0: only the teardown failed; round 1: the work task did */
		assert_int_equal(r.state, round == 0 ? DAG_RUN_SUCCESS : DAG_RUN_FAILED);
		run_free(&r);
	}
}

static void test_retry_delays(void **state)
{
	(void)state;
	struct dag_retry_policy fixed = {.retries = 3, .delay_ms = 10000};
	assert_int_equal(dag_retry_delay_ms(&fixed, 1), 10000);
	assert_int_equal(dag_retry_delay_ms(&fixed, 5), 10000);
	struct dag_retry_policy exp = {.retries = 5, .delay_ms = 10000, .exponential = true};
	assert_int_equal(dag_retry_delay_ms(&exp, 1), 10000);
	assert_int_equal(dag_retry_delay_ms(&exp, 2), 20000);
	assert_int_equal(dag_retry_delay_ms(&exp, 3), 40000);
	assert_int_equal(dag_retry_delay_ms(&exp, 4), 80000);
	assert_int_equal(dag_retry_delay_ms(&exp, 200), INT64_MAX); /* saturates */
	exp.max_delay_ms = 25000;
	assert_int_equal(dag_retry_delay_ms(&exp, 2), 20000);
	assert_int_equal(dag_retry_delay_ms(&exp, 3), 25000);
	assert_int_equal(dag_retry_delay_ms(&exp, 200), 25000);
	fixed.max_delay_ms = 5000;
	assert_int_equal(dag_retry_delay_ms(&fixed, 1), 5000);
	struct dag_retry_policy zero = {.retries = 1};
	assert_int_equal(dag_retry_delay_ms(&zero, 3), 0);
}

/* a flaky task: retries 2 with a fixed delay, then a third failure fails */
static void test_retries_fixed(void **state)
{
	(void)state;
	struct dag_task_node t[] = {NODE("flaky", NULL, 0), NODE("next", up_a, 1)};
	t[0].retry = (struct dag_retry_policy){.retries = 2, .delay_ms = 10000};
	struct run r;
	run_init(&r, t, 2);
	ev_simple(&r, DAG_EV_START, 0);
	start_ti(&r, 0);
	end_ti(&r, 0, false, 1000);
	assert_int_equal(r.tis[0].state, DAG_TI_UP_FOR_RETRY);
	assert_int_equal(r.tis[0].next_retry_at, 11000);
	assert_int_equal(r.d.changes[0].retry_at, 11000);
	assert_int_equal(r.d.next_wakeup, 11000);
	assert_int_equal(r.tis[1].state, DAG_TI_NONE); /* next waits */
	assert_int_equal(r.state, DAG_RUN_RUNNING);

	ev_simple(&r, DAG_EV_TIMER, 10999); /* not yet */
	assert_int_equal(r.d.n_changes, 0);
	assert_int_equal(r.d.next_wakeup, 11000);
	ev_simple(&r, DAG_EV_TIMER, 11000);
	assert_int_equal(r.tis[0].state, DAG_TI_SCHEDULED);
	assert_int_equal(r.d.n_scheduled, 1);
	assert_int_equal(r.d.next_wakeup, 0);

	start_ti(&r, 0); /* try 2 */
	/* a late report of try 1 is stale */
	struct dag_event ev = {.kind = DAG_EV_TI_ENDED, .ti = 0, .try_number = 1};
	step(&r, &ev, 12000);
	assert_int_equal(r.d.n_changes, 0);
	end_ti(&r, 0, false, 20000);
	assert_int_equal(r.tis[0].state, DAG_TI_UP_FOR_RETRY);
	assert_int_equal(r.tis[0].next_retry_at, 30000);
	ev_simple(&r, DAG_EV_TIMER, 30000);
	start_ti(&r, 0); /* try 3, the last */
	end_ti(&r, 0, false, 40000);
	assert_int_equal(r.tis[0].state, DAG_TI_FAILED);
	assert_int_equal(r.tis[1].state, DAG_TI_UPSTREAM_FAILED);
	assert_int_equal(r.state, DAG_RUN_FAILED);
	assert_int_equal(r.tis[0].try_number, 3);
	run_free(&r);

	/* succeeding on a retry lets the run go on */
	run_init(&r, t, 2);
	ev_simple(&r, DAG_EV_START, 0);
	start_ti(&r, 0);
	end_ti(&r, 0, false, 0);
	ev_simple(&r, DAG_EV_TIMER, 10000);
	start_ti(&r, 0);
	end_ti(&r, 0, true, 10500);
	assert_int_equal(r.tis[1].state, DAG_TI_SCHEDULED);
	run_free(&r);

	/* a failure not to retry (a user's kill) fails at once */
	run_init(&r, t, 2);
	ev_simple(&r, DAG_EV_START, 0);
	start_ti(&r, 0);
	ev =
	    (struct dag_event){.kind = DAG_EV_TI_ENDED, .ti = 0, .try_number = 1, .no_retry = true};
	step(&r, &ev, 5);
	assert_int_equal(r.tis[0].state, DAG_TI_FAILED);
	run_free(&r);
}

static void test_retries_exponential_capped(void **state)
{
	(void)state;
	struct dag_task_node t[] = {NODE("flaky", NULL, 0)};
	t[0].retry = (struct dag_retry_policy){
	    .retries = 4, .delay_ms = 1000, .exponential = true, .max_delay_ms = 3000};
	struct run r;
	run_init(&r, t, 1);
	ev_simple(&r, DAG_EV_START, 0);
	const int64_t waits[] = {1000, 2000, 3000, 3000};
	int64_t now = 0;
	for (int k = 0; k < 4; k++) {
		start_ti(&r, 0);
		end_ti(&r, 0, false, now);
		assert_int_equal(r.tis[0].state, DAG_TI_UP_FOR_RETRY);
		if (r.tis[0].next_retry_at != now + waits[k])
			fail_msg("after try %d: retry at %lld, expected %lld", k + 1,
			         (long long)r.tis[0].next_retry_at, (long long)(now + waits[k]));
		now += waits[k];
		ev_simple(&r, DAG_EV_TIMER, now);
		assert_int_equal(r.tis[0].state, DAG_TI_SCHEDULED);
	}
	start_ti(&r, 0);
	end_ti(&r, 0, false, now);
	assert_int_equal(r.tis[0].state, DAG_TI_FAILED);
	assert_int_equal(r.tis[0].try_number, 5);
	assert_int_equal(r.state, DAG_RUN_FAILED);
	run_free(&r);
}

/* a -> b -> c: b fails for good; clear b with its downstream and the run
 * goes again; the retries are given back */
static void test_clear_downstream(void **state)
{
	(void)state;
	static const size_t up_b[] = {1};
	struct dag_task_node t[] = {NODE("a", NULL, 0), NODE("b", up_a, 1), NODE("c", up_b, 1)};
	t[1].retry.retries = 1;
	struct run r;
	run_init(&r, t, 3);
	ev_simple(&r, DAG_EV_START, 0);
	start_ti(&r, 0);
	end_ti(&r, 0, true, 1);
	start_ti(&r, 1);
	end_ti(&r, 1, false, 2);
	ev_simple(&r, DAG_EV_TIMER, 2);
	start_ti(&r, 1);
	end_ti(&r, 1, false, 3);
	assert_int_equal(r.state, DAG_RUN_FAILED);
	assert_int_equal(r.tis[1].try_number, 2);

	/* clear b alone: c stays upstream_failed */
	size_t b = 1;
	struct dag_event ev = {.kind = DAG_EV_CLEAR, .tasks = &b, .n_tasks = 1};
	struct run r2 = r;
	r2.d = (struct dag_run_decision){0};
	step(&r2, &ev, 4);
	assert_int_equal(r2.tis[1].state, DAG_TI_NONE);
	assert_int_equal(r2.tis[2].state, DAG_TI_UPSTREAM_FAILED);
	assert_int_equal(r2.state, DAG_RUN_QUEUED);
	run_free(&r2);

	ev.downstream = true;
	step(&r, &ev, 4);
	const enum dag_ti_state want[] = {DAG_TI_SUCCESS, DAG_TI_NONE, DAG_TI_NONE};
	expect_states(&r, want);
	assert_int_equal(r.d.n_changes, 2);
	assert_int_equal(r.d.run_from, DAG_RUN_FAILED);
	assert_int_equal(r.state, DAG_RUN_QUEUED);
	assert_int_equal(r.tis[1].max_tries, 2 + 1 + 1); /* try 2 + retries 1 + 1 */
	assert_false(r.d.changes[0].stop);

	ev_simple(&r, DAG_EV_START, 5);
	assert_int_equal(r.tis[1].state, DAG_TI_SCHEDULED);
	start_ti(&r, 1); /* try 3 */
	end_ti(&r, 1, false, 6);
	assert_int_equal(r.tis[1].state, DAG_TI_UP_FOR_RETRY); /* its retry again */
	ev_simple(&r, DAG_EV_TIMER, 6);
	start_ti(&r, 1);
	end_ti(&r, 1, true, 7);
	start_ti(&r, 2);
	end_ti(&r, 2, true, 8);
	assert_int_equal(r.state, DAG_RUN_SUCCESS);
	run_free(&r);
}

/* the diamond with b failing: clearing only failed TIs of the whole run
 * resets b and d, not a or c; a running TI that is cleared is stopped */
static void test_clear_only_failed(void **state)
{
	(void)state;
	struct dag_task_node t[] = {NODE("a", NULL, 0), NODE("b", up_a, 1), NODE("c", up_a, 1),
	                            NODE("d", up_bc, 2)};
	struct run r;
	run_init(&r, t, 4);
	ev_simple(&r, DAG_EV_START, 0);
	start_ti(&r, 0);
	end_ti(&r, 0, true, 1);
	start_ti(&r, 1);
	start_ti(&r, 2);
	end_ti(&r, 1, false, 2);
	assert_int_equal(r.tis[3].state, DAG_TI_UPSTREAM_FAILED); /* before c ends */
	assert_int_equal(r.state, DAG_RUN_RUNNING);
	end_ti(&r, 2, true, 3);
	assert_int_equal(r.state, DAG_RUN_FAILED);

	struct dag_event ev = {.kind = DAG_EV_CLEAR, .only_failed = true};
	step(&r, &ev, 4);
	const enum dag_ti_state want[] = {DAG_TI_SUCCESS, DAG_TI_NONE, DAG_TI_SUCCESS, DAG_TI_NONE};
	expect_states(&r, want);
	assert_int_equal(r.state, DAG_RUN_QUEUED);
	ev_simple(&r, DAG_EV_START, 5);
	assert_int_equal(r.tis[1].state, DAG_TI_SCHEDULED);
	assert_int_equal(r.tis[3].state, DAG_TI_NONE);

	/* clearing a running TI of a running run stops it and schedules it again
	 * in the same call */
	start_ti(&r, 1);
	size_t b = 1;
	ev = (struct dag_event){.kind = DAG_EV_CLEAR, .tasks = &b, .n_tasks = 1};
	step(&r, &ev, 6);
	assert_int_equal(r.state, DAG_RUN_RUNNING);
	assert_int_equal(r.d.n_changes, 1);
	assert_true(r.d.changes[0].stop);
	assert_int_equal(r.d.changes[0].from, DAG_TI_RUNNING);
	assert_int_equal(r.d.changes[0].to, DAG_TI_SCHEDULED);
	/* not a move of its own: a clear (to none), then the rules (to
	 * scheduled), which the change says so that the server's door checks
	 * both legs */
	assert_true(r.d.changes[0].cleared);
	assert_false(dag_ti_state_can_move(DAG_TI_RUNNING, DAG_TI_SCHEDULED));
	assert_true(dag_ti_state_can_move(DAG_TI_RUNNING, DAG_TI_NONE));
	assert_true(dag_ti_state_can_move(DAG_TI_NONE, DAG_TI_SCHEDULED));
	/* the stopped job's end report is stale: its try is not the current one
	 * once the server starts the next */
	start_ti(&r, 1);
	struct dag_event late = {.kind = DAG_EV_TI_ENDED, .ti = 1, .try_number = 2};
	step(&r, &late, 7);
	assert_int_equal(r.d.n_changes, 0);
	end_ti(&r, 1, true, 8);
	assert_false(r.d.changes[0].cleared); /* an end is a move of its own */
	start_ti(&r, 3);
	end_ti(&r, 3, true, 9);
	assert_int_equal(r.state, DAG_RUN_SUCCESS);

	/* clearing nothing (only_failed in a good run) leaves the run alone */
	ev = (struct dag_event){.kind = DAG_EV_CLEAR, .only_failed = true};
	step(&r, &ev, 10);
	assert_int_equal(r.d.n_changes, 0);
	assert_int_equal(r.state, DAG_RUN_SUCCESS);
	run_free(&r);
}

static void test_marks(void **state)
{
	(void)state;
	struct dag_task_node t[] = {NODE("a", NULL, 0), NODE("b", up_a, 1), NODE("c", up_a, 1),
	                            NODE("d", up_bc, 2)};
	struct run r;
	run_init(&r, t, 4);
	ev_simple(&r, DAG_EV_START, 0);
	start_ti(&r, 0);
	/* mark the running a success: its job is stopped, b and c scheduled */
	struct dag_event ev = {.kind = DAG_EV_MARK_TI, .ti = 0, .mark_ti = DAG_TI_SUCCESS};
	step(&r, &ev, 1);
	assert_int_equal(r.tis[0].state, DAG_TI_SUCCESS);
	assert_true(r.d.changes[0].stop);
	assert_int_equal(r.tis[1].state, DAG_TI_SCHEDULED);
	assert_int_equal(r.tis[2].state, DAG_TI_SCHEDULED);

	/* mark the run failed: the running b fails, the rest is skipped */
	start_ti(&r, 1);
	ev = (struct dag_event){.kind = DAG_EV_MARK_RUN, .mark_run = DAG_RUN_FAILED};
	step(&r, &ev, 2);
	const enum dag_ti_state want[] = {DAG_TI_SUCCESS, DAG_TI_FAILED, DAG_TI_SKIPPED,
	                                  DAG_TI_SKIPPED};
	expect_states(&r, want);
	assert_int_equal(r.state, DAG_RUN_FAILED);
	for (size_t k = 0; k < r.d.n_changes; k++)
		assert_int_equal(r.d.changes[k].stop, r.d.changes[k].ti == 1);
	/* late end of b's job: stale, the run stays failed */
	end_ti(&r, 1, true, 3);
	assert_int_equal(r.d.n_changes, 0);
	assert_int_equal(r.state, DAG_RUN_FAILED);
	run_free(&r);

	/* mark a run success: everything unfinished succeeds */
	run_init(&r, t, 4);
	ev_simple(&r, DAG_EV_START, 0);
	ev = (struct dag_event){.kind = DAG_EV_MARK_RUN, .mark_run = DAG_RUN_SUCCESS};
	step(&r, &ev, 1);
	const enum dag_ti_state all_ok[] = {DAG_TI_SUCCESS, DAG_TI_SUCCESS, DAG_TI_SUCCESS,
	                                    DAG_TI_SUCCESS};
	expect_states(&r, all_ok);
	assert_int_equal(r.state, DAG_RUN_SUCCESS);
	assert_false(r.d.changes[0].stop); /* a was only scheduled */
	run_free(&r);

	/* mark a TI failed: no retry, downstream upstream_failed */
	t[0].retry.retries = 3;
	run_init(&r, t, 4);
	ev_simple(&r, DAG_EV_START, 0);
	ev = (struct dag_event){.kind = DAG_EV_MARK_TI, .ti = 0, .mark_ti = DAG_TI_FAILED};
	step(&r, &ev, 1);
	assert_int_equal(r.tis[0].state, DAG_TI_FAILED);
	assert_int_equal(r.tis[3].state, DAG_TI_UPSTREAM_FAILED);
	assert_int_equal(r.state, DAG_RUN_FAILED);
	run_free(&r);
}

/* dagrun_timeout: the deadline of a running run, and the run failed with
 * every unfinished TI skipped, the running one stopped */
static void test_timed_out(void **state)
{
	(void)state;
	struct dag_task_node t[] = {NODE("a", NULL, 0), NODE("b", up_a, 1), NODE("c", up_a, 1),
	                            NODE("d", up_bc, 2)};
	struct run r;

	assert_int_equal(dag_run_timeout_at(DAG_RUN_RUNNING, 1000, 30), 31000);
	assert_int_equal(dag_run_timeout_at(DAG_RUN_RUNNING, 1000, 0), 0);  /* no timeout */
	assert_int_equal(dag_run_timeout_at(DAG_RUN_RUNNING, 0, 30), 0);    /* not started */
	assert_int_equal(dag_run_timeout_at(DAG_RUN_QUEUED, 1000, 30), 0);  /* waits to start */
	assert_int_equal(dag_run_timeout_at(DAG_RUN_FAILED, 1000, 30), 0);  /* over */
	assert_int_equal(dag_run_timeout_at(DAG_RUN_SUCCESS, 1000, 30), 0); /* over */
	assert_int_equal(dag_run_timeout_at(DAG_RUN_RUNNING, INT64_MAX - 10, 30), 0);

	run_init(&r, t, 4);
	t[2].retry.retries = 2;
	ev_simple(&r, DAG_EV_START, 0);
	start_ti(&r, 0);
	end_ti(&r, 0, true, 1);
	start_ti(&r, 1);
	start_ti(&r, 2);
	end_ti(&r, 2, false, 2); /* c waits for its retry */
	assert_int_equal(r.tis[2].state, DAG_TI_UP_FOR_RETRY);
	struct dag_event ev = {.kind = DAG_EV_TIMED_OUT};
	step(&r, &ev, 3);
	const enum dag_ti_state want[] = {DAG_TI_SUCCESS, DAG_TI_SKIPPED, DAG_TI_SKIPPED,
	                                  DAG_TI_SKIPPED};
	expect_states(&r, want);
	assert_int_equal(r.state, DAG_RUN_FAILED);
	assert_string_equal(r.d.reason, DAG_REASON_TIMED_OUT);
	assert_int_equal(r.d.n_changes, 3);
	for (size_t k = 0; k < r.d.n_changes; k++)
		assert_int_equal(r.d.changes[k].stop, r.d.changes[k].ti == 1);
	assert_int_equal(r.d.next_wakeup, 0); /* c's retry is no more */
	/* the killed job's end is stale */
	end_ti(&r, 1, false, 4);
	assert_int_equal(r.d.n_changes, 0);
	assert_int_equal(r.state, DAG_RUN_FAILED);
	/* a late timeout of a run that ended changes nothing */
	step(&r, &ev, 5);
	assert_int_equal(r.d.n_changes, 0);
	assert_int_equal(r.state, DAG_RUN_FAILED);
	assert_string_equal(r.d.reason, "");
	run_free(&r);

	/* a queued run does not time out */
	run_init(&r, t, 4);
	step(&r, &ev, 1);
	assert_int_equal(r.state, DAG_RUN_QUEUED);
	assert_int_equal(r.d.n_changes, 0);
	run_free(&r);
}

/* a -> f (foreach 3) -> join: the join waits for every instance */
static void test_foreach_join(void **state)
{
	(void)state;
	static const size_t up_f[] = {1};
	struct dag_task_node t[] = {NODE("a", NULL, 0), NODE("f", up_a, 1), NODE("join", up_f, 1)};
	t[1].foreach = true;
	t[1].n_instances = 3;
	struct run r;
	char buf[128];
	run_init(&r, t, 3);
	assert_int_equal(r.n, 5);
	ev_simple(&r, DAG_EV_START, 0);
	start_ti(&r, 0);
	end_ti(&r, 0, true, 1);
	assert_string_equal(scheduled_now(&r, buf, sizeof(buf)), "f,f,f");
	for (size_t i = 1; i <= 3; i++)
		start_ti(&r, i);
	end_ti(&r, 2, true, 2);
	end_ti(&r, 1, true, 3);
	assert_int_equal(r.tis[4].state, DAG_TI_NONE);
	end_ti(&r, 3, true, 4);
	assert_string_equal(scheduled_now(&r, buf, sizeof(buf)), "join");
	start_ti(&r, 4);
	end_ti(&r, 4, true, 5);
	assert_int_equal(r.state, DAG_RUN_SUCCESS);
	run_free(&r);

	/* one instance fails: the join still waits for the others, then is
	 * upstream_failed */
	run_init(&r, t, 3);
	ev_simple(&r, DAG_EV_START, 0);
	start_ti(&r, 0);
	end_ti(&r, 0, true, 1);
	for (size_t i = 1; i <= 3; i++)
		start_ti(&r, i);
	end_ti(&r, 1, false, 2);
	assert_int_equal(r.tis[4].state, DAG_TI_NONE);
	end_ti(&r, 2, true, 3);
	assert_int_equal(r.tis[4].state, DAG_TI_NONE);
	end_ti(&r, 3, true, 4);
	assert_int_equal(r.tis[4].state, DAG_TI_UPSTREAM_FAILED);
	assert_int_equal(r.state, DAG_RUN_FAILED);
	assert_string_equal(r.d.reason, "task f failed (leaf join upstream_failed)");
	run_free(&r);

	/* foreach over nothing: the join is skipped (all_success), the run
	 * succeeds */
	t[1].n_instances = 0;
	run_init(&r, t, 3);
	assert_int_equal(r.n, 2);
	ev_simple(&r, DAG_EV_START, 0);
	start_ti(&r, 0);
	end_ti(&r, 0, true, 1);
	assert_int_equal(r.tis[1].state, DAG_TI_SKIPPED);
	assert_int_equal(r.state, DAG_RUN_SUCCESS);
	run_free(&r);
}

/* recovery: EVALUATE of a running run decides as the live path did */
static void test_evaluate_recovers(void **state)
{
	(void)state;
	struct dag_task_node t[] = {NODE("a", NULL, 0), NODE("b", up_a, 1), NODE("c", up_a, 1),
	                            NODE("d", up_bc, 2)};
	struct run r;
	run_init(&r, t, 4);
	r.state = DAG_RUN_RUNNING;
	r.tis[0] = (struct dag_ti){.state = DAG_TI_SUCCESS, .try_number = 1};
	r.tis[1] = (struct dag_ti){.state = DAG_TI_FAILED, .try_number = 1};
	ev_simple(&r, DAG_EV_EVALUATE, 0);
	/* the server died between writing b failed and deciding: c scheduled, d
	 * upstream_failed */
	assert_int_equal(r.tis[2].state, DAG_TI_SCHEDULED);
	assert_int_equal(r.tis[3].state, DAG_TI_UPSTREAM_FAILED);
	assert_int_equal(r.state, DAG_RUN_RUNNING);
	ev_simple(&r, DAG_EV_EVALUATE, 1); /* idempotent */
	assert_int_equal(r.d.n_changes, 0);
	run_free(&r);
}

/* ---- pools and limits ---- */

static void test_pools(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct dag_pool pools[] = {{"gpu_pool", 1, 0}, {DAG_DEFAULT_POOL, 128, 0}};
	struct dag_limit dags[] = {{"train", 0, 0}};
	struct dag_candidate c[] = {
	    {.dag = 0, .run_order = 100, .ti_order = 1, .pool = "gpu_pool"},
	    {.dag = 0, .run_order = 100, .ti_order = 2, .pool = "gpu_pool"},
	    {.dag = 0, .run_order = 100, .ti_order = 3},
	};
	struct dag_pool_decision d[4];
	assert_int_equal(dag_pool_decide(c, 3, dags, 1, pools, 2, d, &err), 0);
	assert_int_equal(d[0].candidate, 0);
	assert_int_equal(d[0].action, DAG_POOL_QUEUE);
	assert_string_equal(d[0].reason, "");
	assert_int_equal(d[1].candidate, 1);
	assert_int_equal(d[1].action, DAG_POOL_WAIT);
	assert_string_equal(d[1].reason, "waiting: pool gpu_pool full (1/1)");
	/* a full pool blocks nobody else */
	assert_int_equal(d[2].candidate, 2);
	assert_int_equal(d[2].action, DAG_POOL_QUEUE);
	assert_int_equal(pools[0].used, 1);
	assert_int_equal(pools[1].used, 1);
	assert_int_equal(dags[0].active, 2);

	/* the pool serialises: once the first ends (used back to 0), the second goes */
	pools[0].used = 0;
	assert_int_equal(dag_pool_decide(&c[1], 1, dags, 1, pools, 2, d, &err), 0);
	assert_int_equal(d[0].action, DAG_POOL_QUEUE);

	/* priority first, then older runs, then task order */
	struct dag_pool p1[] = {{"p", 1, 0}};
	struct dag_candidate pr[] = {
	    {.dag = 0, .run_order = 100, .ti_order = 0, .pool = "p", .priority = 1},
	    {.dag = 0, .run_order = 200, .ti_order = 0, .pool = "p", .priority = 5},
	    {.dag = 0, .run_order = 50, .ti_order = 9, .pool = "p", .priority = 1},
	};
	dags[0].active = 0;
	assert_int_equal(dag_pool_decide(pr, 3, dags, 1, p1, 1, d, &err), 0);
	assert_int_equal(d[0].candidate, 1);
	assert_int_equal(d[0].action, DAG_POOL_QUEUE);
	assert_int_equal(d[1].candidate, 2);
	assert_int_equal(d[2].candidate, 0);
	assert_string_equal(d[2].reason, "waiting: pool p full (1/1)");

	/* a slot-hungry TI, an unknown pool, an unlimited pool */
	struct dag_pool p2[] = {{"small", 2, 0}, {"any", -1, 500}};
	struct dag_candidate odd[] = {
	    {.dag = 0, .ti_order = 0, .pool = "small", .pool_slots = 3},
	    {.dag = 0, .ti_order = 1, .pool = "gpus"},
	    {.dag = 0, .ti_order = 2, .pool = "any", .pool_slots = 50},
	    {.dag = 0, .ti_order = 3, .pool = "small", .pool_slots = 2},
	};
	dags[0].active = 0;
	assert_int_equal(dag_pool_decide(odd, 4, dags, 1, p2, 2, d, &err), 0);
	assert_string_equal(d[0].reason, "waiting: needs 3 slots; pool small has 2");
	assert_string_equal(d[1].reason, "waiting: no pool named gpus");
	assert_int_equal(d[2].action, DAG_POOL_QUEUE);
	assert_int_equal(d[3].action, DAG_POOL_QUEUE);
	assert_int_equal(p2[0].used, 2);

	/* a candidate naming a DAG that is not there */
	struct dag_candidate bad = {.dag = 3};
	assert_int_equal(dag_pool_decide(&bad, 1, dags, 1, p2, 2, d, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);
	assert_int_equal(dag_pool_decide(NULL, 0, dags, 1, p2, 2, d, &err), 0);
}

static void test_max_active(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct dag_pool pools[] = {{DAG_DEFAULT_POOL, 128, 0}};
	struct dag_limit dags[] = {{"etl", 2, 1}, {"other", 0, 0}};
	struct dag_candidate c[] = {{.dag = 0, .ti_order = 0},
	                            {.dag = 0, .ti_order = 1},
	                            {.dag = 1, .ti_order = 2},
	                            {.dag = 0, .ti_order = 3}};
	struct dag_pool_decision d[4];
	assert_int_equal(dag_pool_decide(c, 4, dags, 2, pools, 1, d, &err), 0);
	assert_int_equal(d[0].action, DAG_POOL_QUEUE);
	assert_int_equal(d[1].action, DAG_POOL_WAIT);
	assert_string_equal(d[1].reason, "waiting: dag etl max_active_tasks reached (2/2)");
	assert_int_equal(d[2].action, DAG_POOL_QUEUE); /* another DAG is not held */
	assert_int_equal(d[3].action, DAG_POOL_WAIT);
	assert_int_equal(dags[0].active, 2);
	assert_int_equal(pools[0].used, 2);

	assert_int_equal(dag_runs_startable(1, 0, 3), 1);
	assert_int_equal(dag_runs_startable(1, 1, 3), 0);
	assert_int_equal(dag_runs_startable(16, 3, 2), 2);
	assert_int_equal(dag_runs_startable(2, 5, 2), 0);
	assert_int_equal(dag_runs_startable(0, 5, 7), 7);
}

/* A whole run driven to its end through pools: a pool of 1 serialises two
 * independent tasks. */
static void test_pool_serialises_run(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct dag_task_node t[] = {NODE("x", NULL, 0), NODE("y", NULL, 0)};
	t[0].pool = t[1].pool = "one";
	struct run r;
	run_init(&r, t, 2);
	ev_simple(&r, DAG_EV_START, 0);
	assert_int_equal(r.d.n_scheduled, 2);
	struct dag_pool pools[] = {{"one", 1, 0}};
	struct dag_limit dags[] = {{"d", 0, 0}};
	struct dag_candidate c[2];
	struct dag_pool_decision d[2];
	for (size_t i = 0; i < 2; i++)
		c[i] = (struct dag_candidate){.dag = 0, .ti_order = i, .pool = t[i].pool};
	assert_int_equal(dag_pool_decide(c, 2, dags, 1, pools, 1, d, &err), 0);
	assert_int_equal(d[0].action, DAG_POOL_QUEUE);
	assert_int_equal(d[1].action, DAG_POOL_WAIT);
	start_ti(&r, 0);
	end_ti(&r, 0, true, 1);
	pools[0].used--;
	dags[0].active--;
	assert_int_equal(dag_pool_decide(&c[1], 1, dags, 1, pools, 1, d, &err), 0);
	assert_int_equal(d[0].action, DAG_POOL_QUEUE);
	start_ti(&r, 1);
	end_ti(&r, 1, true, 2);
	assert_int_equal(r.state, DAG_RUN_SUCCESS);
	run_free(&r);
}

/* The prefix decision stops at the first TI that waits once every pool is
 * full, in the same order and with the same reasons as the whole one; an
 * unlimited pool or a pool with room left keeps it going. */
static void test_pool_prefix(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct dag_limit dags[] = {{"d", 0, 0}};
	struct dag_pool_decision d[4];
	size_t n = 99;
	struct dag_candidate c[] = {
	    {.dag = 0, .run_order = 100, .ti_order = 0, .pool = "p", .priority = 1},
	    {.dag = 0, .run_order = 200, .ti_order = 0, .pool = "p", .priority = 5},
	    {.dag = 0, .run_order = 50, .ti_order = 9, .pool = "p", .priority = 1},
	    {.dag = 0, .run_order = 60, .ti_order = 9, .pool = "q", .priority = 0},
	};
	struct dag_pool p1[] = {{"p", 1, 0}, {"q", 1, 1}};
	assert_int_equal(dag_pool_decide_prefix(c, 4, dags, 1, p1, 2, d, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(d[0].candidate, 1); /* priority first */
	assert_int_equal(d[0].action, DAG_POOL_QUEUE);
	assert_int_equal(d[1].candidate, 2);
	assert_int_equal(d[1].action, DAG_POOL_WAIT);
	assert_string_equal(d[1].reason, "waiting: pool p full (1/1)");
	assert_int_equal(p1[0].used, 1);

	/* q has room: every candidate is decided, as dag_pool_decide does */
	struct dag_pool p2[] = {{"p", 1, 0}, {"q", 1, 0}};
	dags[0].active = 0;
	assert_int_equal(dag_pool_decide_prefix(c, 4, dags, 1, p2, 2, d, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_int_equal(d[3].candidate, 3);
	assert_int_equal(d[3].action, DAG_POOL_QUEUE);
	assert_string_equal(d[2].reason, "waiting: pool p full (1/1)");

	/* an unlimited pool never fills */
	struct dag_pool p3[] = {{"p", 1, 1}, {"q", -1, 7}};
	dags[0].active = 0;
	assert_int_equal(dag_pool_decide_prefix(c, 4, dags, 1, p3, 2, d, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_int_equal(d[3].action, DAG_POOL_QUEUE);
	assert_int_equal(dag_pool_decide_prefix(c, 0, dags, 1, p3, 2, d, &n, &err), 0);
	assert_int_equal(n, 0);
}

/* Many waiting TIs, few slots: decided a batch at a time, in order, the
 * decision is the whole one's (the same TIs started, the same reasons,
 * the same stop, the same counts), whatever the batches' sizes. */
static void test_pool_batches(void **state)
{
	(void)state;
	enum { N = 2000 };
	struct weir_error err = {0};
	static struct dag_candidate c[N];
	static struct dag_pool_decision whole[N], part[N];
	static const char *pools_of[] = {"p", "q", NULL, "none"};
	unsigned seed = 7;

	for (size_t i = 0; i < N; i++) {
		seed = seed * 1103515245u + 12345u;
		c[i] = (struct dag_candidate){.dag = (seed >> 8) % 2,
		                              .run_order = (int64_t)((seed >> 12) % 3),
		                              .ti_order = i,
		                              .priority = (int)((seed >> 16) % 4),
		                              .pool = pools_of[(seed >> 20) % 4],
		                              .pool_slots = (int)((seed >> 24) % 3)};
	}
	/* in the decision's order, as the pass reads them */
	for (size_t i = 1; i < N; i++)
		for (size_t j = i; j > 0; j--) {
			struct dag_candidate *x = &c[j - 1], *y = &c[j], t;
			bool before = y->priority != x->priority     ? y->priority > x->priority
			              : y->run_order != x->run_order ? y->run_order < x->run_order
			                                             : y->ti_order < x->ti_order;
			if (!before)
				break;
			t = *x, *x = *y, *y = t;
		}
	const size_t sizes[] = {1, 2, 3, 7, 64, N};
	for (int used = 0; used < 4; used++) {
		struct dag_limit d0[] = {{"a", 3, 1}, {"b", 0, 0}};
		struct dag_pool p0[] = {{"p", 4, used}, {"q", 2, 0}, {"default_pool", 3, 1}};
		size_t n_whole = 0;
		assert_int_equal(dag_pool_decide_prefix(c, N, d0, 2, p0, 3, whole, &n_whole, &err),
		                 0);
		assert_true(n_whole < N); /* few slots: it stops early */
		for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
			struct dag_limit d1[] = {{"a", 3, 1}, {"b", 0, 0}};
			struct dag_pool p1[] = {
			    {"p", 4, used}, {"q", 2, 0}, {"default_pool", 3, 1}};
			size_t at = 0, got;
			bool stopped = false;
			while (!stopped && at < N) {
				size_t take = N - at < sizes[s] ? N - at : sizes[s];
				assert_int_equal(dag_pool_decide_batch(c + at, take, d1, 2, p1, 3,
				                                       part + at, &got, &stopped,
				                                       &err),
				                 0);
				for (size_t i = at; i < at + got; i++)
					part[i].candidate += at;
				at += got;
			}
			assert_true(stopped);
			assert_int_equal(at, n_whole);
			for (size_t i = 0; i < n_whole; i++) {
				assert_int_equal(part[i].candidate, whole[i].candidate);
				assert_int_equal(part[i].action, whole[i].action);
				assert_string_equal(part[i].reason, whole[i].reason);
			}
			for (size_t i = 0; i < 3; i++)
				assert_int_equal(p1[i].used, p0[i].used);
			assert_int_equal(d1[0].active, d0[0].active);
			assert_int_equal(d1[1].active, d0[1].active);
		}
	}
}

/* A try that could not become a job: the server's own fault spends no try;
 * a missing variable or connection fails the try with its retries; any
 * other input fails it for good. */
static void test_start_fault(void **state)
{
	(void)state;
	assert_int_equal(dag_start_fault_of(WEIR_E_INTERNAL), DAG_START_WAIT);
	assert_int_equal(dag_start_fault_of(WEIR_E_UNAVAILABLE), DAG_START_WAIT);
	assert_int_equal(dag_start_fault_of(WEIR_E_NOT_FOUND), DAG_START_RETRY);
	assert_int_equal(dag_start_fault_of(WEIR_E_INVALID), DAG_START_FAIL);
	assert_int_equal(dag_start_fault_of(WEIR_E_UNFIT), DAG_START_FAIL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_state_names),
	    cmocka_unit_test(test_trigger_truth_table),
	    cmocka_unit_test(test_setup_counts),
	    cmocka_unit_test(test_setup_and_teardown),
	    cmocka_unit_test(test_group_state),
	    cmocka_unit_test(test_graph_check),
	    cmocka_unit_test(test_diamond_in_order),
	    cmocka_unit_test(test_failure_cascades),
	    cmocka_unit_test(test_run_result_rules),
	    cmocka_unit_test(test_retry_delays),
	    cmocka_unit_test(test_retries_fixed),
	    cmocka_unit_test(test_retries_exponential_capped),
	    cmocka_unit_test(test_clear_downstream),
	    cmocka_unit_test(test_clear_only_failed),
	    cmocka_unit_test(test_marks),
	    cmocka_unit_test(test_timed_out),
	    cmocka_unit_test(test_foreach_join),
	    cmocka_unit_test(test_evaluate_recovers),
	    cmocka_unit_test(test_pools),
	    cmocka_unit_test(test_pool_prefix),
	    cmocka_unit_test(test_pool_batches),
	    cmocka_unit_test(test_max_active),
	    cmocka_unit_test(test_pool_serialises_run),
	    cmocka_unit_test(test_start_fault),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
