/* json_util.c: null-when-absent strings and times for the JSON views. */
#include "lib/json_util.h"

#include "lib/clock.h"

json_t *json_util_string(const char *s)
{
	return s ? json_string(s) : json_null();
}

int json_util_set_string(json_t *o, const char *key, const char *s)
{
	return json_object_set_new(o, key, json_util_string(s));
}

json_t *json_util_time_iso(int64_t ms)
{
	char buf[40];
	return ms <= 0 ? json_null() : json_string(clock_format_iso(ms, buf, sizeof buf));
}

json_t *json_util_time_airflow(int64_t ms)
{
	char buf[48];
	return ms <= 0 ? json_null() : json_string(clock_format_airflow(ms, buf, sizeof buf));
}
