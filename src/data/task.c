/* task.c: the subcommands' shared frame (task.h): the spec read, the
 * outputs written, exit statuses; parameters and cells as JSON. */
#include "data/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fs.h"

int data_params_from_json(json_t *obj, struct data_params *out, struct weir_error *err)
{
	const char *k;
	json_t *v;
	size_t n = json_object_size(obj);

	memset(out, 0, sizeof *out);
	if (!obj || json_is_null(obj))
		return 0;
	if (!json_is_object(obj))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "parameters: expected a mapping of names to values");
	out->names = calloc(n + 1, sizeof *out->names);
	out->values = calloc(n + 1, sizeof *out->values);
	if (!out->names || !out->values)
		goto oom;
	json_object_foreach(obj, k, v)
	{
		char *s = NULL;
		if (json_is_string(v))
			s = strdup(json_string_value(v));
		else if (json_is_number(v)) {
			struct strbuf b = STRBUF_INIT;
			if (json_is_integer(v))
				strbuf_addf(&b, "%lld", (long long)json_integer_value(v));
			else
				strbuf_addf(&b, "%.17g", json_real_value(v));
			s = b.failed ? NULL : strbuf_detach(&b, NULL);
		} else if (json_is_boolean(v))
			s = strdup(json_is_true(v) ? "true" : "false");
		else if (!json_is_null(v))
			s = json_dumps(v, JSON_COMPACT);
		if (!json_is_null(v) && !s)
			goto oom;
		out->names[out->n] = strdup(k);
		out->values[out->n++] = s;
		if (!out->names[out->n - 1])
			goto oom;
	}
	return 0;
oom:
	data_params_release(out);
	return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
}

json_t *data_cell_json(const char *v, size_t len, enum data_type t)
{
	if (!v)
		return json_null();
	if (t != DATA_TEXT && len && len < 40) {
		char tmp[48], *end;
		memcpy(tmp, v, len);
		tmp[len] = '\0';
		if (t == DATA_INT) {
			long long x = strtoll(tmp, &end, 10);
			if (!*end)
				return json_integer(x);
		} else {
			double d = strtod(tmp, &end);
			if (!*end && strspn(tmp, "0123456789+-.eE") == len)
				return json_real(d);
		}
	}
	return json_stringn(v, len);
}

struct data_conn *data_open_env(const char *id, struct weir_error *err)
{
	struct connection c;
	struct data_conn *dc;

	if (data_conn_from_env(id, &c, err) < 0)
		return NULL;
	dc = data_open(&c, err);
	connection_release(&c);
	return dc;
}

static void usage(FILE *f, const char *cmd)
{
	fprintf(f,
	        "usage: weir %s [--spec FILE | --spec-json JSON]\n"
	        "  Runs a DAG's %s task: the spec is a JSON object (default: $WEIR_DATA_SPEC);\n"
	        "  connections come from WEIR_CONN_<ID>; outputs go to $WEIR_OUTPUT (or stdout).\n",
	        cmd, !strcmp(cmd, "task-sql") ? "sql:" : "transfer:");
}

static int task_main(int argc, char **argv, int (*run)(json_t *, json_t **, struct weir_error *))
{
	struct weir_error err = {0};
	json_t *spec = NULL, *outputs = NULL;
	json_error_t je;
	const char *out_path = getenv("WEIR_OUTPUT");
	int rc = 1;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout, argv[0]);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--spec"))
		spec = json_load_file(argv[2], 0, &je);
	else if (argc == 3 && !strcmp(argv[1], "--spec-json"))
		spec = json_loads(argv[2], 0, &je);
	else if (argc == 1 && getenv("WEIR_DATA_SPEC"))
		spec = json_loads(getenv("WEIR_DATA_SPEC"), 0, &je);
	else {
		usage(stderr, argv[0]);
		return 2;
	}
	if (!json_is_object(spec)) {
		fprintf(stderr, "weir %s: the spec: %s\n", argv[0],
		        spec ? "expected a JSON object" : je.text);
		json_decref(spec);
		return 2;
	}
	if (run(spec, &outputs, &err) < 0) {
		fprintf(stderr, "weir %s: %s\n", argv[0], err.msg);
		goto out;
	}
	char *text =
	    json_dumps(outputs, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	if (!text) {
		fprintf(stderr, "weir %s: out of memory\n", argv[0]);
		goto out;
	}
	if (out_path && *out_path) {
		if (fs_write_file_atomic(out_path, text, strlen(text), 0644, &err) < 0) {
			fprintf(stderr, "weir %s: %s\n", argv[0], err.msg);
			free(text);
			goto out;
		}
	} else
		printf("%s\n", text);
	free(text);
	rc = 0;
out:
	json_decref(spec);
	json_decref(outputs);
	return rc;
}

int data_task_sql_main(int argc, char **argv)
{
	return task_main(argc, argv, data_sql_run);
}

int data_task_transfer_main(int argc, char **argv)
{
	return task_main(argc, argv, data_transfer_run);
}
