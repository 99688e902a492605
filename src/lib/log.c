/* log.c: one-line diagnostics on stderr, with a level filter. */
#include "lib/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *program = "weir";
static log_tee_fn tee;
static void *tee_arg;
static int level_set;
static enum log_level min_level = LOG_INFO;

void log_set_program(const char *name)
{
	program = name;
}

void log_set_tee(log_tee_fn fn, void *arg)
{
	tee = fn;
	tee_arg = arg;
}

void log_set_level(enum log_level level)
{
	min_level = level;
	level_set = 1;
}

static void level_from_env(void)
{
	const char *v = getenv("WEIR_LOG");
	level_set = 1;
	if (!v)
		return;
	if (!strcmp(v, "debug"))
		min_level = LOG_DEBUG;
	else if (!strcmp(v, "warn"))
		min_level = LOG_WARN;
	else if (!strcmp(v, "error"))
		min_level = LOG_ERROR;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *names[] = {"debug", "info", "warning", "error"};
	char line[2048];
	va_list ap;

	if (!level_set)
		level_from_env();
	if (level < min_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s: %s\n", program, names[level], line);
	if (tee) {
		char full[2200];
		int n = snprintf(full, sizeof full, "%s: %s: %s\n", program, names[level], line);
		if (n > 0)
			tee(full, (size_t)n < sizeof full ? (size_t)n : sizeof full - 1, tee_arg);
	}
}
