/* store_fixture.h: a store opened in a fresh temporary folder (store_tmp.h)
 * as a cmocka fixture, and its teardown, for the store's unit tests.
 * Header only: each test file is a binary of its own. */
#ifndef WEIR_TESTS_STORE_FIXTURE_H
#define WEIR_TESTS_STORE_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "store/store.h"
#include "store_tmp.h"

struct store_fixture {
	char dir[256];
	char path[300];
	struct store *s;
};

/* The store of a new folder $TMPDIR/NAME-XXXXXX, opened (migrated to the
 * current schema); the test fails when it cannot be.  NULL only when the
 * folder cannot be made. */
static inline struct store_fixture *store_fixture_open(const char *name)
{
	struct store_fixture *f = calloc(1, sizeof *f);
	struct weir_error err = {0};

	if (!f || store_tmp_make(f->dir, sizeof f->dir, f->path, sizeof f->path, name) < 0) {
		free(f);
		return NULL;
	}
	f->s = store_open(f->path, &err);
	if (!f->s)
		fail_msg("store_open: %s", err.msg);
	return f;
}

/* cmocka's teardown of a store_fixture in *state: closed, its folder removed. */
static inline int store_fixture_teardown(void **state)
{
	struct store_fixture *f = *state;

	store_close(f->s);
	store_tmp_remove(f->dir, f->path);
	free(f);
	return 0;
}

#endif
