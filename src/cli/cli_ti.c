/* cli_ti.c: a task instance as the CLI prints it (cli_ti.h). */
#include "cli/cli_ti.h"

#include <stdio.h>
#include <string.h>

#include "cli/cli_common.h"
#include "lib/clock.h"
#include "model/states.h"

const char *cli_ti_state(json_t *ti)
{
	const char *s = json_string_value(json_object_get(ti, "state"));
	return s && *s ? s : "none";
}

bool cli_ti_state_is_final(const char *s)
{
	enum dag_ti_state st;
	return dag_ti_state_from_name(s, &st) == 0 && dag_ti_state_is_final(st);
}

/* A TI's state as the API names it; none for a name this CLI does not know. */
static enum dag_ti_state ti_state_of(const char *name)
{
	enum dag_ti_state st = DAG_TI_NONE;
	dag_ti_state_from_name(name, &st);
	return st;
}

char *cli_ti_name(json_t *ti, char *buf, size_t size)
{
	long long map = cli_json_int(ti, "map_index", -1);

	if (map >= 0)
		snprintf(buf, size, "%s[%lld]", cli_json_str(ti, "task_id", "?"), map);
	else
		snprintf(buf, size, "%s", cli_json_str(ti, "task_id", "?"));
	return buf;
}

void cli_ti_print_changes(json_t *seen, json_t *tis, const char *prefix)
{
	json_t *ti;
	size_t i;

	/* Two passes: the ends first, then the rest, so that a task seen ending and its
	 * downstream seen starting in the same look print in the order they happened. */
	for (int pass = 0; pass < 2; pass++)
		json_array_foreach(tis, i, ti)
		{
			char name[300], key[340], clock[32];
			const char *state = cli_ti_state(ti);
			long long try_n = cli_json_int(ti, "try_number", 0);

			if (cli_ti_state_is_final(state) != (pass == 0))
				continue;
			cli_ti_name(ti, name, sizeof name);
			snprintf(key, sizeof key, "%s/%lld", state, try_n);
			const char *had = json_string_value(json_object_get(seen, name));
			if (had && !strcmp(had, key))
				continue;
			json_object_set_new(seen, name, json_string(key));
			/* Nothing happened to a TI not seen yet that is still waiting. */
			enum dag_ti_state ts = ti_state_of(state);
			if (!had && (ts == DAG_TI_NONE || ts == DAG_TI_SCHEDULED))
				continue;
			printf("%s %s%s%s %s",
			       cli_format_clock(clock_now_ms(), clock, sizeof clock),
			       prefix ? prefix : "", prefix ? " " : "", name, state);
			if (try_n > 1 || ts == DAG_TI_UP_FOR_RETRY)
				printf(" (try %lld)", try_n);
			putchar('\n');
		}
	fflush(stdout);
}
