#!/bin/sh
# Tests tools/check_state_doors.py on small trees built in a temporary
# folder: the setters themselves, a copy of a state and a designated
# initializer pass; a state assigned outside its setter (a job's, a TI's, an
# agent task's) fails and names the file and line.
# Run: sh tests/tools/test_check_state_doors.sh
set -u
script=$(cd "$(dirname "$0")/../.." && pwd)/tools/check_state_doors.py
. "$(dirname "$0")/tree_fixture.sh"

clean_tree() {
	rm -rf "$tmp/src"
	put server/job_manager/manager.c \
	    'int jm_job_set_state(struct job_row *job, enum job_state s)' '{' \
	    '	job->state = s;' '	return 0;' '}' \
	    'void jm_copy(struct task_end *out, const struct task_row *t)' '{' \
	    '	out->state = t->state;' '}'
	put server/dag_manager/run_ctx.c \
	    'static void f(void)' '{' \
	    '	struct dag_try_row t = {.dag_id = "d",' '	                        .state = DAG_TI_QUEUED};' \
	    '	if (x->state == DAG_TI_NONE)' '		return;' '}'
	put launch/agent_task.c \
	    'int agent_task_set_state(struct agent_task *t, enum agent_task_state to)' '{' \
	    '	t->state = to; /* the door */' '	return 0;' '}'
}

# expect WHAT RC PATTERN: the check's exit status is RC and, when PATTERN is
# not empty, its output holds it.
expect() {
	out=$(python3 "$script" "$tmp/src" 2>&1)
	rc=$?
	if [ "$rc" -eq "$2" ] && { [ -z "$3" ] || printf '%s' "$out" | grep -q -- "$3"; }; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: $1 (exit $rc, wanted $2; output: $out)"
	fi
}

clean_tree
expect "the setters, a copy and an initializer" 0 ""

clean_tree
put server/job_manager/ops.c 'static void born(void)' '{' '	row.state = JOB_QUEUED;' '}'
expect "a job's state outside its setter" 1 "job_manager/ops.c:3: row.state = JOB_QUEUED;"

clean_tree
put server/dag_manager/trigger.c 'void dm_trigger_start(void)' '{' '	if (ok)' '		r->state = DAG_TI_RUNNING;' '}'
expect "a TI's state outside its setter" 1 "dag_manager/trigger.c:4:"

clean_tree
put launch/agent_conn.c 'static void on_kill(void)' '{' '	t->state = AGENT_TASK_STOPPING;' '}'
expect "an agent task's state outside its setter" 1 "launch/agent_conn.c:3:"

clean_tree
put server/dag_manager/run_ctx.c 'static void f(void)' '{' '	rc->run.state = d.run_to; /* a move */' '}'
expect "a run's state from a decision" 1 "run_ctx.c:3:"

echo "check_state_doors: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
