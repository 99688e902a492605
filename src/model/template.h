/* template.h: `{{ name }}` in DAG task commands and environments.
 *
 * Variables (docs/dags.md): ds, ds_nodash, ts, logical_date,
 * data_interval_start, data_interval_end, run_id, dag_id, task_id,
 * try_number (produced by weir: "trusted"), and params.NAME, item (item.KEY
 * for an object item),
 * outputs.TASK.KEY (from a trigger's conf, the DAG file's params, a foreach
 * list or another task's output: "outside"), and the server's variables and
 * connections (outside too, read at render time through a template_source):
 *   var.value.KEY             variable KEY's text
 *   var.json.KEY.F1.F2        a field of variable KEY read as JSON (objects by
 *                             name, lists by index); var.json.KEY is the whole
 *   conn.ID.FIELD             host, port, login, schema, conn_type,
 *                             description, extra (its JSON, secret-like
 *                             fields as "***")
 *   conn.ID.extra.KEY         one field of the extra
 * Never a password: conn.ID.password (or a secret-like extra field) is an
 * error at parse time; a task reads its password from $WEIR_CONN_<ID>.  A
 * DAG file's check accepts any KEY and ID (they live in the server, not the
 * file); rendering one that is not set is an error of kind WEIR_E_NOT_FOUND
 * naming it.  `{{ 'text' }}` is a literal
 * (the way to write "{{" itself).  Nothing else is understood: no filters,
 * no expressions, and an unknown variable is an error, never "".
 *
 * In a shell command (TEMPLATE_SHELL) an outside value always reaches the
 * program as exactly one literal string, whatever it contains: the
 * renderer follows the shell's quoting around each `{{ }}` and writes the
 * value single-quoted ('\'' for a quote) in plain text and inside $(...),
 * closes and reopens a "double-quoted" string around it, and continues an
 * already 'single-quoted' one.  Where no quoting is safe an outside value
 * is an error that says why and what to do instead (model/shell_context.h
 * lists the places: backticks, ${...}, $'...', here-documents, arithmetic,
 * bash's [[ ]], eval and trap, a shell's -c script, ...).
 * Trusted values are inserted as they are (they are dates and names); one
 * that holds any character outside [A-Za-z0-9_.:+,=@%/-] is quoted like an
 * outside value, so a run id chosen by a user cannot inject either.
 * In TEMPLATE_RAW (environment values, not seen by a shell) every value is
 * inserted as it is.
 *
 * Ownership: a template_ctx owns copies of its names and values; rendered
 * strings belong to the caller (free()).
 */
#ifndef WEIR_MODEL_TEMPLATE_H
#define WEIR_MODEL_TEMPLATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "lib/strvec.h"
#include "model/connection.h"

enum template_trust {
	TEMPLATE_TRUSTED = 0, /* produced by weir */
	TEMPLATE_OUTSIDE,     /* from a user, a file or a task's output */
};

enum template_mode {
	TEMPLATE_SHELL = 0, /* a command run by /bin/sh -c */
	TEMPLATE_RAW,       /* an environment value, a path */
};

struct template_var {
	char *name; /* "ds", "params.x", "outputs.extract.rows" */
	char *value;
	enum template_trust trust;
};

/* Where var.* and conn.* are read when rendering (the server's
 * connections and variables).  Each returns 0 with the value (the caller's
 * to free or release), or -1 with err (WEIR_E_NOT_FOUND: not defined). */
struct template_source {
	int (*var)(void *arg, const char *key, char **value, struct weir_error *err);
	int (*conn)(void *arg, const char *id, struct connection *out, struct weir_error *err);
	void *arg;
};

/* Embed zeroed (TEMPLATE_CTX_INIT); template_ctx_release() frees it.  `src`
 * (borrowed; NULL: var.* and conn.* do not render) is set by the caller. */
struct template_ctx {
	struct template_var *v;
	size_t n, cap;
	const struct template_source *src;
};
#define TEMPLATE_CTX_INIT                                                                          \
	{                                                                                          \
		NULL, 0, 0, NULL                                                                   \
	}

/* Sets (or replaces) a variable.  0, or -1 with err when out of memory. */
int template_ctx_set(struct template_ctx *ctx, const char *name, const char *value,
                     enum template_trust trust, struct weir_error *err);
const struct template_var *template_ctx_get(const struct template_ctx *ctx, const char *name);
void template_ctx_release(struct template_ctx *ctx);

/* Renders `tmpl`.  Newly allocated; NULL with err on an unknown variable,
 * a `{{` without `}}`, an expression that is not a variable, or an outside
 * value where it cannot be quoted safely.  Messages say which variable and
 * where in the template ("line 2, column 7"); the caller adds the field. */
char *template_render(const char *tmpl, const struct template_ctx *ctx, enum template_mode mode,
                      struct weir_error *err);

/* Checks a template without values (at parse time): every variable must be
 * in `known`, whose entries are names ("ds", "params.x") or prefixes ending
 * in ".*" ("outputs.extract.*": any key of that task's output).  Finds the
 * same errors as rendering would.  0, or -1 with err. */
int template_check(const char *tmpl, const struct strvec *known, enum template_mode mode,
                   struct weir_error *err);

/* Whether a variable's value comes from outside (params.*, item, outputs.*). */
enum template_trust template_name_trust(const char *name);

/* Appends the variables every task has (ds ... try_number) to `known`.
 * 0 or -1 (out of memory). */
int template_known_standard(struct strvec *known);

/* Everything a task try's templates and environment are made of. */
struct template_run {
	const char *dag_id;
	const char *run_id;
	const char *task_id;
	int64_t logical_ms;
	int64_t interval_start_ms;
	int64_t interval_end_ms;
	int try_number;        /* 1 for the first try */
	const json_t *params;  /* the DAG's params with the trigger's conf over them; may be NULL */
	const json_t *outputs; /* {"TASK": {"KEY": value}}; may be NULL */
	const char *item;      /* the foreach item; NULL when not a foreach task */
	const json_t *item_value; /* the same as JSON: an object's keys are item.KEY; may be
	                           * NULL */
};

/* Sets every variable of `run` in ctx.  0 or -1 with err. */
int template_ctx_fill(struct template_ctx *ctx, const struct template_run *run,
                      struct weir_error *err);

/* The same values as environment entries "NAME=value": WEIR_DS,
 * WEIR_DS_NODASH, WEIR_TS, WEIR_LOGICAL_DATE, WEIR_DATA_INTERVAL_START,
 * WEIR_DATA_INTERVAL_END, WEIR_RUN_ID, WEIR_DAG_ID, WEIR_TASK_ID,
 * WEIR_TRY_NUMBER, WEIR_PARAM_<X> (X as written in params), WEIR_ITEM.
 * Appended to `out`.  0 or -1 with err. */
int template_env(const struct template_run *run, struct strvec *out, struct weir_error *err);

/* The same entries from a context template_ctx_fill() filled (its outputs.*
 * and item.* left out, as above; any other name set since is written as a
 * standard one): a try's templates and environment from one fill. */
int template_ctx_env(const struct template_ctx *ctx, struct strvec *out, struct weir_error *err);

/* The text a JSON value stands for in a template: a string as it is,
 * numbers and booleans as written, null as "", lists and mappings as
 * compact JSON.  Newly allocated; NULL when out of memory. */
char *template_value_text(const json_t *v);

#endif
