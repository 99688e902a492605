/* fuzz_connection.c: text -> a connection, as a URI (connection_from_uri)
 * and as Airflow's JSON fields (connection_from_json).  A URI that parses
 * is written back (with and without its password) and must parse again to
 * the same fields, and written without the password must read back
 * without one. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/connection.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct weir_error err;
	struct connection c, back;
	json_t *j;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (connection_from_uri("fuzz", text, &c, &err) == 0) {
		char *uri = connection_to_uri(&c, true);
		char *bare = connection_to_uri(&c, false);
		if (!uri || !bare)
			abort();
		if (connection_from_uri("fuzz", uri, &back, &err) != 0)
			abort();
		if (!same(c.type, back.type) || !same(c.host, back.host) ||
		    !same(c.login, back.login) || !same(c.password, back.password) ||
		    !same(c.schema, back.schema) || c.port != back.port)
			abort();
		connection_release(&back);
		if (strstr(bare, "@") && c.password && *c.password &&
		    connection_from_uri("fuzz", bare, &back, &err) == 0) {
			/* written without it, it reads back without it */
			if (back.password)
				abort();
			connection_release(&back);
		}
		free(uri);
		free(bare);
		connection_release(&c);
	}
	j = json_loads(text, 0, NULL);
	if (j && connection_from_json("fuzz", j, &c, &err) == 0)
		connection_release(&c);
	json_decref(j);
	free(text);
	return 0;
}
