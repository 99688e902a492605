/* variable.c: variable keys and their environment names (variable.h). */
#include "model/variable.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lib/mask.h"
#include "lib/shell.h"
#include "lib/strbuf.h"
#include "model/connection.h"

int variable_check_key(const char *key, struct weir_error *err)
{
	size_t n = key ? strlen(key) : 0;

	if (n == 0 || n > VARIABLE_KEY_MAX)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "variable key: expected 1 to %d characters",
		                      VARIABLE_KEY_MAX);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)key[i];
		if (!isalnum(ch) && ch != '_' && ch != '.' && ch != '-')
			return weir_error_set(err, WEIR_E_INVALID,
			                      "variable key \"%s\": character %zu is not a letter, "
			                      "digit, '_', '.' or '-'",
			                      key, i + 1);
	}
	return 0;
}

bool variable_is_secret(const char *key)
{
	return connection_secret_name(key);
}

int variable_mask_add(struct strvec *mask, const char *value)
{
	struct strbuf quoted = STRBUF_INIT;
	const char *forms[2] = {value, NULL};
	int rc = 0;

	if (!value || !*value)
		return 0;
	if (strchr(value, '\'')) {
		if (shell_quote_inner(&quoted, value) < 0) {
			strbuf_release(&quoted);
			return -1;
		}
		forms[1] = quoted.buf;
	}
	for (size_t f = 0; f < 2 && forms[f] && rc == 0; f++) {
		bool have = false;
		for (size_t i = 0; i < mask->n && !have; i++)
			have = !strcmp(mask->v[i], forms[f]);
		if (!have)
			rc = strvec_push(mask, forms[f]);
	}
	strbuf_release(&quoted);
	return rc;
}

/* Every string of `j` masked in place. */
static int mask_tree(json_t *j, const struct mask *m)
{
	size_t i;
	const char *key;
	json_t *v;

	if (json_is_string(j)) {
		char *masked = mask_string(m, json_string_value(j));
		int rc = masked ? json_string_set(j, masked) : -1;
		free(masked);
		return rc;
	}
	if (json_is_array(j))
		json_array_foreach(j, i, v) if (mask_tree(v, m) < 0) return -1;
	if (json_is_object(j))
		json_object_foreach(j, key, v) if (mask_tree(v, m) < 0) return -1;
	return 0;
}

char *variable_mask_json(const char *json_text, const struct strvec *mask)
{
	json_t *j = json_loads(json_text, JSON_DECODE_ANY, NULL);
	struct mask *m = mask_create((const char *const *)mask->v, mask->n);
	char *out = NULL;

	if (j && m && mask_tree(j, m) == 0)
		out = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
	mask_destroy(m);
	json_decref(j);
	return out;
}

char *variable_env_name(const char *key)
{
	return connection_env_name_with("WEIR_VAR_", key);
}

int variable_copy(struct variable *dst, const struct variable *src)
{
	memset(dst, 0, sizeof *dst);
	dst->key = strdup(src->key ? src->key : "");
	dst->value = strdup(src->value ? src->value : "");
	if (src->description)
		dst->description = strdup(src->description);
	if (!dst->key || !dst->value || (src->description && !dst->description)) {
		variable_release(dst);
		return -1;
	}
	return 0;
}

void variable_release(struct variable *v)
{
	if (!v)
		return;
	free(v->key);
	if (v->value)
		memset(v->value, 0, strlen(v->value));
	free(v->value);
	free(v->description);
	memset(v, 0, sizeof *v);
}

void variables_free(struct variable *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++)
		variable_release(&rows[i]);
	free(rows);
}
