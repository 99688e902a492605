/* report.c: the `exited` report's fields, written and read (report.h). */
#include "launch/report.h"

#include <string.h>

static bool starts_with(const char *s, const char *prefix)
{
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

enum end_cause exit_report_derive_cause(int signal, bool oom_killed, const char *reason)
{
	if (oom_killed)
		return END_CAUSE_OOM;
	if (starts_with(reason, "execution timeout"))
		return END_CAUSE_EXEC_TIMEOUT;
	if (starts_with(reason, "gang registration timeout"))
		return END_CAUSE_GANG_TIMEOUT;
	if (starts_with(reason, "launch failed"))
		return END_CAUSE_LAUNCH_FAILED;
	if (starts_with(reason, "killed (launcher got"))
		return END_CAUSE_STOPPED;
	return signal > 0 ? END_CAUSE_SIGNALLED : END_CAUSE_EXITED;
}

int exit_report_to_json(const struct exit_report *r, json_t *body)
{
	int rc = 0;

	rc |= json_object_set_new(body, "exit_code", json_integer(r->exit_code));
	rc |=
	    json_object_set_new(body, "signal", r->signal ? json_integer(r->signal) : json_null());
	rc |= json_object_set_new(body, "oom_killed", json_boolean(r->oom_killed));
	rc |= json_object_set_new(body, "peak_memory_bytes",
	                          json_integer((json_int_t)r->peak_memory_bytes));
	rc |= json_object_set_new(body, "cpu_time_ms", json_integer(r->cpu_time_ms));
	rc |= json_object_set_new(body, "reason", json_string(r->reason ? r->reason : ""));
	rc |= json_object_set_new(body, "cause", json_string(end_cause_name(r->cause)));
	return rc ? -1 : 0;
}

static int64_t int_or(const json_t *body, const char *key, int64_t none)
{
	const json_t *v = json_object_get(body, key);
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : none;
}

void exit_report_from_json(const json_t *body, struct exit_report *out)
{
	const json_t *v;

	memset(out, 0, sizeof *out);
	out->exit_code = (int)int_or(body, "exit_code", -1);
	out->signal = (int)int_or(body, "signal", 0);
	out->oom_killed = json_is_true(json_object_get(body, "oom_killed"));
	out->peak_memory_bytes = int_or(body, "peak_memory_bytes", -1);
	out->cpu_time_ms = int_or(body, "cpu_time_ms", -1);
	v = json_object_get(body, "reason");
	out->reason = json_is_string(v) ? json_string_value(v) : NULL;
	v = json_object_get(body, "cause");
	if (!json_is_string(v) || end_cause_from_name(json_string_value(v), &out->cause) < 0 ||
	    out->cause == END_CAUSE_NONE)
		out->cause = exit_report_derive_cause(out->signal, out->oom_killed, out->reason);
}
