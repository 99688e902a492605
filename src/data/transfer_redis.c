/* transfer_redis.c: Redis as a transfer's target (transfer.h).
 *
 * Each row becomes one command, pipelined (redis.h): HSET KEY FIELD VALUE
 * ... (hash), SET KEY VALUE (string) or ZADD KEY SCORE MEMBER (zset), the
 * key (and a string's value, a zset's member) made by a row template,
 * "user:{id}"; with `ttl`, each key expires that many seconds after it was
 * written.
 *
 * mode append writes the keys in place.  mode replace publishes the whole
 * load at once: rows are written under staging names
 * ("weir:staging:ID:" + key, which expire after two days if the try dies),
 * the staged keys listed in a set, and publish() runs one Lua script,
 * which Redis runs atomically: it deletes the keys the previous load
 * published that this one does not have, renames every staged key to its
 * name, and keeps this load's list as the published one
 * ("weir:published:" + the key template).  Readers see the old day or the
 * new one, never half of either.
 */
#include "data/transfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/redis.h"
#include "data/task.h"
#include "lib/clock.h"

#define REDIS_STAGE_TTL "172800"

static const char publish_script[] =
    "local staged, published, prefix, ttl = KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2])\n"
    "local cursor, n = '0', 0\n"
    "repeat\n"
    "  local r = redis.call('SSCAN', published, cursor, 'COUNT', 1000)\n"
    "  cursor = r[1]\n"
    "  for _, k in ipairs(r[2]) do\n"
    "    if redis.call('SISMEMBER', staged, k) == 0 then redis.call('DEL', k) end\n"
    "  end\n"
    "until cursor == '0'\n"
    "repeat\n"
    "  local r = redis.call('SSCAN', staged, cursor, 'COUNT', 1000)\n"
    "  cursor = r[1]\n"
    "  for _, k in ipairs(r[2]) do\n"
    "    if redis.call('EXISTS', prefix .. k) == 1 then\n"
    "      redis.call('RENAME', prefix .. k, k)\n"
    "      if ttl == 0 then redis.call('PERSIST', k) end\n"
    "      n = n + 1\n"
    "    end\n"
    "  end\n"
    "until cursor == '0'\n"
    "if redis.call('EXISTS', staged) == 1 then\n"
    "  redis.call('RENAME', staged, published)\n"
    "  redis.call('PERSIST', published)\n"
    "else\n"
    "  redis.call('DEL', published)\n"
    "end\n"
    "return n\n";

enum redis_kind { RK_HASH, RK_STRING, RK_ZSET };

struct redis_target {
	struct transfer_target base;
	struct redis_client *rc;
	enum redis_kind kind;
	bool replace;
	long long ttl;
	char ttl_text[24];
	char *key_text, *value_text, *member_text, *score_col;
	json_t *fields; /* hash: the columns written; NULL: all */
	struct row_template *key, *value, *member;
	size_t *field_col, n_fields; /* hash */
	size_t score;                /* zset: the column */
	const struct data_columns *cols;
	char **field_names;
	char stage_prefix[96], stage_set[96];
	char *published_set;
	struct strbuf k, v, m;
	uint64_t rows;
	bool published;
};

static int col_index(const struct data_columns *cols, const char *name, size_t *out)
{
	for (size_t i = 0; i < cols->n; i++)
		if (!strcmp(cols->names[i], name)) {
			*out = i;
			return 0;
		}
	return -1;
}

static int rt_begin(struct transfer_target *base, const struct data_columns *cols,
                    struct weir_error *err)
{
	struct redis_target *t = (struct redis_target *)base;
	size_t i;
	json_t *f;

	if (!(t->key = row_template_parse(t->key_text, cols, err))) {
		weir_error_prefix(err, "to.key");
		return -1;
	}
	if (t->kind == RK_HASH) {
		size_t n = t->fields ? json_array_size(t->fields) : cols->n;
		t->field_col = calloc(n + 1, sizeof *t->field_col);
		t->field_names = calloc(n + 1, sizeof *t->field_names);
		if (!t->field_col || !t->field_names)
			return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		if (!t->fields)
			for (i = 0; i < n; i++)
				t->field_col[i] = i;
		json_array_foreach(t->fields, i, f) if (
		    !json_is_string(f) ||
		    col_index(cols, json_string_value(f), &t->field_col[i]) <
		        0) return weir_error_set(err, WEIR_E_INVALID,
		                                 "to.fields[%zu]: expected a column of the source",
		                                 i);
		for (i = 0; i < n; i++)
			t->field_names[i] = cols->names[t->field_col[i]];
		t->n_fields = n;
	} else if (t->kind == RK_STRING) {
		if (!t->value_text) {
			if (cols->n != 2)
				return weir_error_set(
				    err, WEIR_E_INVALID,
				    "to.value: expected a template like \"{a}\" (the "
				    "source has %zu columns)",
				    cols->n);
			struct strbuf b = STRBUF_INIT;
			strbuf_addf(&b, "{%s}", cols->names[1]);
			t->value_text = strbuf_detach(&b, NULL);
		}
		if (!(t->value = row_template_parse(t->value_text, cols, err))) {
			weir_error_prefix(err, "to.value");
			return -1;
		}
	} else {
		if (!t->member_text)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "to.member: expected a template like \"{item}\"");
		if (!(t->member = row_template_parse(t->member_text, cols, err))) {
			weir_error_prefix(err, "to.member");
			return -1;
		}
		if (!t->score_col || col_index(cols, t->score_col, &t->score) < 0)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "to.score: expected a column of the source");
	}
	/* the field names outlive this call: keep a copy of the columns' */
	for (i = 0; i < t->n_fields; i++)
		if (!(t->field_names[i] = strdup(t->field_names[i])))
			return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	if (t->replace) {
		const char *e[] = {"DEL", t->stage_set};
		if (redis_call(t->rc, 2, e, NULL, err) < 0)
			return -1;
	}
	return 0;
}

static int rt_row(struct transfer_target *base, const struct data_row *row, struct weir_error *err)
{
	struct redis_target *t = (struct redis_target *)base;
	const char *argv[3 + 2 * 64];
	size_t len[3 + 2 * 64], n = 0;

	strbuf_reset(&t->k);
	if (t->replace)
		strbuf_addstr(&t->k, t->stage_prefix);
	row_template_render(t->key, row, &t->k);
	if (t->k.failed)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	if (t->kind == RK_HASH) {
		const char **av =
		    t->n_fields <= 64 ? argv : calloc(2 + 2 * t->n_fields, sizeof *av);
		size_t *lv = t->n_fields <= 64 ? len : calloc(2 + 2 * t->n_fields, sizeof *lv);
		int rc;
		if (!av || !lv)
			return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		av[n] = "HSET", lv[n++] = 4;
		av[n] = t->k.buf, lv[n++] = t->k.len;
		for (size_t i = 0; i < t->n_fields; i++) {
			size_t c = t->field_col[i];
			if (!row->v[c])
				continue;
			av[n] = t->field_names[i], lv[n++] = strlen(t->field_names[i]);
			av[n] = row->v[c], lv[n++] = row->len[c];
		}
		rc = n > 2 ? redis_queue(t->rc, n, av, lv, err) : 0;
		if (av != argv) {
			free(av);
			free(lv);
		}
		if (rc < 0)
			return -1;
	} else if (t->kind == RK_STRING) {
		strbuf_reset(&t->v);
		row_template_render(t->value, row, &t->v);
		const char *av[] = {"SET", t->k.buf, t->v.buf, "EX",
		                    t->replace && !t->ttl ? REDIS_STAGE_TTL : t->ttl_text};
		size_t lv[] = {3, t->k.len, t->v.len, 2, strlen(av[4])};
		if (redis_queue(t->rc, t->ttl || t->replace ? 5 : 3, av, lv, err) < 0)
			return -1;
	} else {
		if (!row->v[t->score])
			return weir_error_set(err, WEIR_E_INVALID, "to.score: a row's %s is NULL",
			                      t->score_col);
		strbuf_reset(&t->m);
		row_template_render(t->member, row, &t->m);
		const char *av[] = {"ZADD", t->k.buf, row->v[t->score], t->m.buf};
		size_t lv[] = {4, t->k.len, row->len[t->score], t->m.len};
		if (redis_queue(t->rc, 4, av, lv, err) < 0)
			return -1;
	}
	if (t->kind != RK_STRING && (t->ttl || t->replace)) {
		const char *av[] = {"EXPIRE", t->k.buf, t->ttl ? t->ttl_text : REDIS_STAGE_TTL};
		size_t lv[] = {6, t->k.len, strlen(av[2])};
		if (redis_queue(t->rc, 3, av, lv, err) < 0)
			return -1;
	}
	if (t->replace) {
		const char *av[] = {"SADD", t->stage_set, t->k.buf + strlen(t->stage_prefix)};
		size_t lv[] = {4, strlen(t->stage_set), t->k.len - strlen(t->stage_prefix)};
		if (redis_queue(t->rc, 3, av, lv, err) < 0)
			return -1;
		if (t->rows % 10000 == 0) {
			const char *ex[] = {"EXPIRE", t->stage_set, REDIS_STAGE_TTL};
			if (redis_queue(t->rc, 3, ex, NULL, err) < 0)
				return -1;
		}
	}
	t->rows++;
	return 0;
}

static int rt_publish(struct transfer_target *base, struct weir_error *err)
{
	struct redis_target *t = (struct redis_target *)base;
	int64_t n = 0;

	if (redis_sync(t->rc, err) < 0)
		return -1;
	if (t->replace) {
		char ttl[24];
		snprintf(ttl, sizeof ttl, "%lld", t->ttl);
		const char *av[] = {"EVAL",           publish_script,  "2", t->stage_set,
		                    t->published_set, t->stage_prefix, ttl};
		if (redis_call(t->rc, 7, av, &n, err) < 0)
			return -1;
		fprintf(stderr, "transfer: published %lld keys in one step\n", (long long)n);
	}
	t->published = true;
	return 0;
}

static void rt_destroy(struct transfer_target *base)
{
	struct redis_target *t = (struct redis_target *)base;

	redis_close(t->rc); /* staged keys left by a failed try expire */
	for (size_t i = 0; t->field_names && i < t->n_fields; i++)
		free(t->field_names[i]);
	free(t->field_names);
	free(t->field_col);
	row_template_destroy(t->key);
	row_template_destroy(t->value);
	row_template_destroy(t->member);
	free(t->key_text);
	free(t->value_text);
	free(t->member_text);
	free(t->score_col);
	free(t->published_set);
	json_decref(t->fields);
	strbuf_release(&t->k);
	strbuf_release(&t->v);
	strbuf_release(&t->m);
	free(t);
}

static char *dup_opt(json_t *to, const char *key)
{
	const char *s = json_string_value(json_object_get(to, key));
	return s ? strdup(s) : NULL;
}

struct transfer_target *transfer_redis_target(json_t *to, size_t batch, struct weir_error *err)
{
	const char *conn = json_string_value(json_object_get(to, "conn"));
	const char *kind = json_string_value(json_object_get(to, "redis"));
	const char *mode = json_string_value(json_object_get(to, "mode"));
	json_t *ttl = json_object_get(to, "ttl");
	struct redis_target *t;
	struct connection c;

	(void)batch;
	if (!conn || !kind || !json_string_value(json_object_get(to, "key"))) {
		weir_error_set(err, WEIR_E_INVALID, "spec: to: expected conn, redis and key");
		return NULL;
	}
	t = calloc(1, sizeof *t);
	if (!t) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	t->base = (struct transfer_target){rt_begin, rt_row, rt_publish, rt_destroy, NULL};
	strbuf_init(&t->k);
	strbuf_init(&t->v);
	strbuf_init(&t->m);
	if (!strcmp(kind, "hash"))
		t->kind = RK_HASH;
	else if (!strcmp(kind, "string"))
		t->kind = RK_STRING;
	else if (!strcmp(kind, "zset"))
		t->kind = RK_ZSET;
	else {
		weir_error_set(err, WEIR_E_INVALID,
		               "spec: to.redis: expected hash, string or zset, got \"%s\"", kind);
		goto fail;
	}
	if (mode && strcmp(mode, "replace") && strcmp(mode, "append")) {
		weir_error_set(err, WEIR_E_INVALID,
		               "spec: to.mode: expected replace or append for redis, got \"%s\"",
		               mode);
		goto fail;
	}
	t->replace = mode && !strcmp(mode, "replace");
	if (ttl && (!json_is_integer(ttl) || json_integer_value(ttl) < 0)) {
		weir_error_set(err, WEIR_E_INVALID, "spec: to.ttl: expected whole seconds");
		goto fail;
	}
	t->ttl = ttl ? json_integer_value(ttl) : 0;
	snprintf(t->ttl_text, sizeof t->ttl_text, "%lld", t->ttl);
	t->key_text = dup_opt(to, "key");
	t->value_text = dup_opt(to, "value");
	t->member_text = dup_opt(to, "member");
	t->score_col = dup_opt(to, "score");
	t->fields = json_incref(json_object_get(to, "fields"));
	if (t->fields && !json_is_array(t->fields)) {
		weir_error_set(err, WEIR_E_INVALID, "spec: to.fields: expected a list of columns");
		goto fail;
	}
	snprintf(t->stage_set, sizeof t->stage_set, "weir:staging-keys:%d-%lld", (int)getpid(),
	         (long long)clock_now_ms());
	snprintf(t->stage_prefix, sizeof t->stage_prefix, "weir:staging:%d-%lld:", (int)getpid(),
	         (long long)clock_now_ms());
	struct strbuf p = STRBUF_INIT;
	strbuf_addf(&p, "weir:published:%s", t->key_text);
	t->published_set = strbuf_detach(&p, NULL);
	if (data_conn_from_env(conn, &c, err) < 0)
		goto fail;
	if (c.kind != CONN_REDIS) {
		weir_error_set(err, WEIR_E_INVALID,
		               "to.conn: %s is a %s connection; redis targets need redis", conn,
		               c.type ? c.type : "?");
		connection_release(&c);
		goto fail;
	}
	t->rc = redis_open(&c, err);
	connection_release(&c);
	if (!t->rc)
		goto fail;
	return &t->base;
fail:
	rt_destroy(&t->base);
	return NULL;
}
