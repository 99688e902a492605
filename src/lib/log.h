/* log.h: one-line diagnostics on stderr ("weir: level: message").
 * The program name defaults to "weir"; the launcher sets "weir launch". */
#ifndef WEIR_LIB_LOG_H
#define WEIR_LIB_LOG_H

#include <stddef.h>

enum log_level { LOG_DEBUG = 0, LOG_INFO, LOG_WARN, LOG_ERROR };

void log_set_program(const char *name);
/* Messages below `level` are dropped; WEIR_LOG=debug|info|warn|error sets it at start. */
void log_set_level(enum log_level level);
/* Each line written (after the level filter, with its newline) is also
 * handed to `fn` (NULL: none).  The launcher ships its own lines with the
 * task's log this way. */
typedef void (*log_tee_fn)(const char *line, size_t len, void *arg);
void log_set_tee(log_tee_fn fn, void *arg);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)

#endif
