/* variable.c: variable keys and their environment names (variable.h). */
#include "model/variable.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "model/connection.h"

int variable_check_key(const char *key, struct weir_error *err)
{
	size_t n = key ? strlen(key) : 0;

	if (n == 0 || n > VARIABLE_KEY_MAX)
		return weir_error_set(err, WEIR_E_INVALID, "variable key: expected 1 to %d characters",
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

