/* log_capture.h: what lib/log.h writes, kept in a buffer the test reads
 * (through log_set_tee: the lines still go to stderr), for the unit tests
 * that check a message was logged.  Header only: each test file is a binary
 * of its own. */
#ifndef WEIR_TESTS_LOG_CAPTURE_H
#define WEIR_TESTS_LOG_CAPTURE_H

#include <stddef.h>
#include <string.h>

#include "lib/log.h"

static char log_captured[4096];

static inline void log_capture_tee(const char *line, size_t len, void *arg)
{
	size_t have = strlen(log_captured);

	(void)arg;
	if (have + len < sizeof log_captured) {
		memcpy(log_captured + have, line, len);
		log_captured[have + len] = '\0';
	}
}

/* From here, errors (and worse) are kept in log_captured, emptied now. */
static inline void log_capture_start(void)
{
	log_captured[0] = '\0';
	log_set_level(LOG_ERROR);
	log_set_tee(log_capture_tee, NULL);
}

static inline void log_capture_stop(void)
{
	log_set_tee(NULL, NULL);
}

#endif
