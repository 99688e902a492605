/* env_scrub.c: the environment a task's side must not inherit (env_scrub.h). */
#include "lib/env_scrub.h"

#include <string.h>

static const char *const prefixes[] = {"WEIR_CONN_", "WEIR_VAR_", "AIRFLOW_CONN_", "AIRFLOW_VAR_"};
static const char *const words[] = {"PASSWORD",   "PASSWD",     "PASSPHRASE", "SECRET",
                                    "TOKEN",      "CREDENTIAL", "API_KEY",    "APIKEY",
                                    "ACCESS_KEY", "PRIVATE_KEY"};

static char upper(char c)
{
	return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* Whether `word` (upper case) stands at s, any case, within `room` bytes. */
static bool at(const char *s, size_t room, const char *word)
{
	for (size_t i = 0; word[i]; i++)
		if (i >= room || upper(s[i]) != word[i])
			return false;
	return true;
}

bool env_scrub_drops(const char *entry)
{
	const char *eq = strchr(entry, '=');
	size_t len = eq ? (size_t)(eq - entry) : strlen(entry);

	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
		size_t pl = strlen(prefixes[i]);
		if (len > pl && !strncmp(entry, prefixes[i], pl))
			return true;
	}
	/* one pass over the name, a word tried only where its first letter
	 * stands: a launcher reads its whole environment per task (a search of
	 * every word at every byte cost some 14 us for 37 names) */
	for (size_t i = 0; i < len; i++) {
		char c = upper(entry[i]);
		if (c != 'P' && c != 'S' && c != 'T' && c != 'C' && c != 'A')
			continue;
		for (size_t w = 0; w < sizeof words / sizeof words[0]; w++)
			if (words[w][0] == c && at(entry + i, len - i, words[w]))
				return true;
	}
	return false;
}

size_t env_scrub_count(char *const *env)
{
	size_t n = 0;

	for (size_t i = 0; env && env[i]; i++)
		n += env_scrub_drops(env[i]);
	return n;
}
