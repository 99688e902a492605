/* error.c: filling struct weir_error and mapping its kind to HTTP. */
#include "lib/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int weir_error_set(struct weir_error *err, enum weir_error_kind kind, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		err->kind = kind;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return -1;
}

void weir_error_prefix(struct weir_error *err, const char *fmt, ...)
{
	char prefix[256];
	char old[WEIR_ERROR_MSG_MAX];
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof old);
	size_t n = strlen(prefix);
	if (n > sizeof err->msg - 3)
		n = sizeof err->msg - 3;
	memcpy(err->msg, prefix, n);
	memcpy(err->msg + n, ": ", 2);
	size_t room = sizeof err->msg - n - 3;
	size_t ol = strnlen(old, room);
	memcpy(err->msg + n + 2, old, ol);
	err->msg[n + 2 + ol] = '\0';
}

void weir_error_clear(struct weir_error *err)
{
	if (err) {
		err->kind = WEIR_OK;
		err->msg[0] = '\0';
	}
}

int weir_error_http_status(enum weir_error_kind kind)
{
	switch (kind) {
	case WEIR_OK:
		return 200;
	case WEIR_E_INVALID:
		return 400;
	case WEIR_E_AUTH:
		return 401;
	case WEIR_E_FORBIDDEN:
		return 403;
	case WEIR_E_NOT_FOUND:
		return 404;
	case WEIR_E_CONFLICT:
		return 409;
	case WEIR_E_GONE:
		return 410;
	case WEIR_E_UNFIT:
		return 422;
	case WEIR_E_UNAVAILABLE:
		return 503;
	case WEIR_E_INTERNAL:
		break;
	}
	return 500;
}

int weir_error_oom(struct weir_error *err)
{
	return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
}

void *weir_error_oom_null(struct weir_error *err)
{
	weir_error_oom(err);
	return NULL;
}
