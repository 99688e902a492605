/* test_notify.c: the notification keys of a DAG file (task, default_args,
 * DAG; the lists in effect), sla:, errors that name the field, the JSON
 * written back (header values masked), the payload, the subject template
 * and a target as records show it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "model/dag_spec.h"
#include "model/notify.h"

static struct dag_spec *parse(const char *text, struct weir_error *err)
{
	return dag_spec_parse_string(text, strlen(text), "t.yaml", NULL, err);
}

static const char *const good =
    "dag_id: d\n"
    "on_failure: [{webhook: {url: 'http://h:9/run'}}]\n"
    "on_sla_miss: {command: /bin/true}\n"
    "default_args:\n"
    "  sla: 30m\n"
    "  on_retry:\n"
    "    - webhook: {url: 'http://h:9/r', headers: {X-Token: abc}}\n"
    "      retries: 1\n"
    "      retry_delay: 2s\n"
    "tasks:\n"
    "  - task_id: a\n"
    "    command: 'true'\n"
    "    sla: {within: 5m, from: run_start}\n"
    "    on_failure:\n"
    "      - email: {conn: mail, to: [ops@x.org, b@x.org], subject: '{{ dag_id }} {{ state }}'}\n"
    "      - command: 'notify.sh --x'\n"
    "        as_task_user: true\n"
    "    on_retry: []\n"
    "  - task_id: b\n"
    "    command: 'true'\n"
    "    on_sla_miss: [{webhook: {conn: hooks, url: /p}}]\n";

static void test_lists_in_effect(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct dag_spec *d = parse(good, &err);
	assert_non_null(d);
	const struct dag_task *a = dag_spec_find_task(d, "a"), *b = dag_spec_find_task(d, "b");

	/* a: its own on_failure (two), its own empty on_retry, the DAG's on_sla_miss */
	assert_int_equal(a->on[NOTIFY_ON_FAILURE]->n, 2);
	assert_int_equal(a->on[NOTIFY_ON_FAILURE]->v[0].kind, NOTIFY_EMAIL);
	assert_string_equal(a->on[NOTIFY_ON_FAILURE]->v[0].conn, "mail");
	assert_int_equal(a->on[NOTIFY_ON_FAILURE]->v[0].to.n, 2);
	assert_int_equal(a->on[NOTIFY_ON_FAILURE]->v[1].kind, NOTIFY_COMMAND);
	assert_int_equal(a->on[NOTIFY_ON_FAILURE]->v[1].retries, NOTIFY_DEFAULT_RETRIES);
	assert_true(a->on[NOTIFY_ON_FAILURE]->v[1].as_task_user);
	assert_false(a->on[NOTIFY_ON_SLA_MISS]->v[0].as_task_user);
	assert_int_equal(a->on[NOTIFY_ON_RETRY]->n, 0);
	assert_null(a->on[NOTIFY_ON_SUCCESS]);
	assert_int_equal(a->on[NOTIFY_ON_SLA_MISS]->v[0].kind, NOTIFY_COMMAND);
	assert_int_equal(a->sla.within_s, 300);
	assert_int_equal(a->sla.from, SLA_FROM_RUN_START);

	/* b: default_args' on_retry and sla, its own on_sla_miss */
	assert_int_equal(b->on[NOTIFY_ON_RETRY]->n, 1);
	assert_int_equal(b->on[NOTIFY_ON_RETRY]->v[0].retries, 1);
	assert_int_equal(b->on[NOTIFY_ON_RETRY]->v[0].retry_delay_s, 2);
	assert_null(b->on[NOTIFY_ON_FAILURE]); /* the DAG's on_failure is the run's */
	assert_string_equal(b->on[NOTIFY_ON_SLA_MISS]->v[0].url, "/p");
	assert_int_equal(b->sla.within_s, 1800);
	assert_int_equal(b->sla.from, SLA_FROM_LOGICAL_DATE);
	assert_true(d->notify->given[NOTIFY_ON_FAILURE]);

	/* written back: header values masked; it reads back the same */
	json_t *j = dag_spec_to_json(d);
	char *text = json_dumps(j, JSON_COMPACT);
	assert_null(strstr(text, "abc"));
	assert_non_null(strstr(text, "\"X-Token\":\"***\""));
	struct dag_spec *again = dag_spec_from_json(j, "t.json", NULL, &err);
	assert_non_null(again);
	assert_int_equal(dag_spec_find_task(again, "a")->on[NOTIFY_ON_FAILURE]->n, 2);
	assert_true(dag_spec_find_task(again, "a")->on[NOTIFY_ON_FAILURE]->v[1].as_task_user);
	assert_int_equal(dag_spec_find_task(again, "b")->sla.within_s, 1800);
	dag_spec_destroy(again);
	free(text);
	json_decref(j);
	dag_spec_destroy(d);
}

static void expect_error(const char *tasks_yaml, const char *want1, const char *want2)
{
	struct weir_error err = {0};
	char text[1024];
	snprintf(text, sizeof text, "dag_id: d\ntasks:\n  - task_id: a\n    command: 'true'\n%s",
	         tasks_yaml);
	struct dag_spec *d = parse(text, &err);
	if (d || !strstr(err.msg, want1) || !strstr(err.msg, want2))
		fail_msg("for %s got: %s", tasks_yaml, d ? "no error" : err.msg);
}

static void test_errors_name_the_field(void **state)
{
	(void)state;
	expect_error("    on_failure: [{webhook: {url: 'ftp://x/y'}}]\n",
	             "tasks[0].on_failure[0].webhook.url", "expected http[s]://HOST");
	expect_error("    on_failure: [{webhook: {url: 'https:///y'}}]\n",
	             "tasks[0].on_failure[0].webhook.url", "expected http[s]://HOST");
	expect_error("    on_failure: [{webhook: {url: 'https://u:p@x/y'}}]\n",
	             "tasks[0].on_failure[0].webhook.url", "in a connection");
	expect_error("    on_failure: [{webhook: {url: 'http://u:p@x/y'}}]\n",
	             "tasks[0].on_failure[0].webhook.url", "in a connection");
	expect_error("    on_failure: [{webhook: {url: /p}}]\n", "webhook.url", "needs a conn");
	expect_error("    on_retry: [{webhook: {}}]\n", "on_retry[0].webhook", "a url, a conn");
	expect_error("    on_failure: [{email: {to: a@b.c}}]\n", "email.conn", "smtp");
	expect_error("    on_failure: [{email: {conn: m, to: ['x y@z']}}]\n", "email.to[0]",
	             "address");
	expect_error("    on_failure: [{webhook: {url: 'http://x/'}, command: y}]\n",
	             "on_failure[0]", "got more");
	expect_error("    on_failure: [{pager: x}]\n", "on_failure[0]", "pager");
	expect_error("    on_failure: [{command: x, retries: 99}]\n", "on_failure[0].retries", "");
	expect_error("    on_failure: [{webhook: {url: 'http://x/', headers: {A: \"b\\nc\"}}}]\n",
	             "headers.A", "one line");
	expect_error("    sla: 0\n", "tasks[0].sla", "at least 1s");
	expect_error("    sla: {within: 1m, from: noon}\n", "tasks[0].sla.from", "run_start");
	expect_error("    on_skip: []\n", "tasks[0]", "on_skip");
	expect_error("    on_failure: [{webhook: {url: 'http://x/'}, as_task_user: true}]\n",
	             "on_failure[0].as_task_user", "command only");
	expect_error("    on_failure: [{command: x, as_task_user: 1}]\n",
	             "on_failure[0].as_task_user", "true or false");
}

static void test_payload_text_template_mask(void **state)
{
	(void)state;
	struct notify_payload p = {.event = NOTIFY_ON_FAILURE,
	                           .dag_id = "d",
	                           .run_id = "r",
	                           .task_id = "t",
	                           .map_index = -1,
	                           .try_number = 2,
	                           .state = "failed",
	                           .reason = "exit 3",
	                           .log_url = "http://l",
	                           .logical_date_ms = 1000};
	json_t *j = notify_payload_json(&p);
	assert_string_equal(json_string_value(json_object_get(j, "event")), "task_failure");
	assert_int_equal(json_integer_value(json_object_get(j, "try_number")), 2);
	assert_non_null(
	    strstr(json_string_value(json_object_get(j, "text")), "task t (try 2) failed"));
	assert_string_equal(json_string_value(json_object_get(j, "logical_date")),
	                    "1970-01-01T00:00:01+00:00");
	json_decref(j);
	p.run_level = true;
	j = notify_payload_json(&p);
	assert_null(json_object_get(j, "task_id"));
	assert_string_equal(json_string_value(json_object_get(j, "event")), "run_failure");
	json_decref(j);
	p.run_level = false;

	char *s =
	    notify_render("{{ dag_id }}.{{task_id}} {{ state }} #{{ try_number }} {{ nope }}", &p);
	assert_string_equal(s, "d.t failed #2 {{ nope }}");
	free(s);

	struct notify_target w = {.kind = NOTIFY_WEBHOOK,
	                          .url = (char *)"http://h:9/services/T/B/X"};
	s = notify_target_masked(&w);
	assert_string_equal(s, "http://h:9/***");
	free(s);
	w.url = (char *)"https://hooks.slack.com/services/T/B/X";
	s = notify_target_masked(&w);
	assert_string_equal(s, "https://hooks.slack.com/***");
	free(s);
	struct notify_target c = {.kind = NOTIFY_COMMAND, .command = (char *)"page --token=abc"};
	s = notify_target_masked(&c);
	assert_string_equal(s, "page …");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lists_in_effect),
	    cmocka_unit_test(test_errors_name_the_field),
	    cmocka_unit_test(test_payload_text_template_mask),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
