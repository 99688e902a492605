/* test_user_store.c: the users and tokens tables (store/user_store.h) on a
 * real SQLite file: a user added, read, listed, changed, deleted (its
 * tokens revoked); a token added, found by its hash, listed without it,
 * revoked, touched; names that exist and names that do not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_fixture.h"
#include "store/user_store.h"

#define HASH_A "pbkdf2-sha256$1000$00112233445566778899aabbccddeeff$aa"
#define HASH_B "pbkdf2-sha256$1000$00112233445566778899aabbccddeeff$bb"

static int setup(void **state)
{
	*state = store_fixture_open("weir-users");
	return *state ? 0 : -1;
}

static void add_user(struct store *s, const char *name, enum weir_role role)
{
	struct weir_error err = {0};
	struct user_row u = {.name = (char *)name,
	                     .email = (char *)"a@example.org",
	                     .role = role,
	                     .password_hash = (char *)HASH_A,
	                     .created_ms = 1000,
	                     .changed_ms = 1000};

	assert_int_equal(user_store_insert(s, &u, &err), 0);
}

static void add_token(struct store *s, const char *name, const char *user, const char *hash,
                      int64_t expires)
{
	struct weir_error err = {0};
	struct token_row t = {.name = (char *)name,
	                      .user = (char *)user,
	                      .hash = (char *)hash,
	                      .created_ms = 2000,
	                      .expires_ms = expires};

	assert_int_equal(token_store_insert(s, &t, &err), 0);
}

static void test_users(void **state)
{
	struct store_fixture *f = *state;
	struct weir_error err = {0};
	struct user_row u = {0}, *rows = NULL;
	size_t n = 0;

	add_user(f->s, "bob", ROLE_VIEWER);
	add_user(f->s, "alice", ROLE_OP);
	/* a name that exists */
	{
		struct user_row dup = {
		    .name = (char *)"bob", .role = ROLE_ADMIN, .password_hash = (char *)HASH_B};
		assert_int_equal(user_store_insert(f->s, &dup, &err), -1);
		assert_int_equal(err.kind, WEIR_E_CONFLICT);
		assert_non_null(strstr(err.msg, "\"bob\" exists"));
	}
	assert_int_equal(user_store_get(f->s, "bob", &u, &err), 0);
	assert_string_equal(u.name, "bob");
	assert_string_equal(u.email, "a@example.org");
	assert_int_equal(u.role, ROLE_VIEWER);
	assert_string_equal(u.password_hash, HASH_A);
	assert_int_equal(u.created_ms, 1000);
	user_row_release(&u);

	assert_int_equal(user_store_list(f->s, &rows, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(rows[0].name, "alice"); /* by name */
	assert_string_equal(rows[1].name, "bob");
	user_rows_free(rows, n);

	/* a new password keeps the role; a new role keeps the password */
	assert_int_equal(user_store_update(f->s, "bob", HASH_B, ROLE_NONE, 5000, &err), 0);
	assert_int_equal(user_store_update(f->s, "bob", NULL, ROLE_USER, 6000, &err), 0);
	assert_int_equal(user_store_get(f->s, "bob", &u, &err), 0);
	assert_string_equal(u.password_hash, HASH_B);
	assert_int_equal(u.role, ROLE_USER);
	assert_int_equal(u.changed_ms, 6000);
	assert_int_equal(u.created_ms, 1000);
	user_row_release(&u);

	assert_int_equal(user_store_update(f->s, "carol", HASH_B, ROLE_NONE, 1, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	assert_int_equal(user_store_get(f->s, "carol", &u, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	assert_int_equal(user_store_delete(f->s, "carol", 1, NULL, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
}

static void test_tokens(void **state)
{
	struct store_fixture *f = *state;
	struct weir_error err = {0};
	struct token_row t = {0}, *rows = NULL;
	size_t n = 0;

	add_user(f->s, "bob", ROLE_VIEWER);
	add_token(f->s, "ops-script", "bob", "h1", 0);
	add_token(f->s, "cron", "bob", "h2", 99000);
	{
		struct token_row dup = {.name = (char *)"cron",
		                        .user = (char *)"bob",
		                        .hash = (char *)"h3",
		                        .created_ms = 1};
		assert_int_equal(token_store_insert(f->s, &dup, &err), -1);
		assert_int_equal(err.kind, WEIR_E_CONFLICT);
		assert_non_null(strstr(err.msg, "\"cron\" exists"));
	}
	assert_int_equal(token_store_find(f->s, "h2", &t, &err), 0);
	assert_string_equal(t.name, "cron");
	assert_string_equal(t.user, "bob");
	assert_int_equal(t.expires_ms, 99000);
	assert_int_equal(t.revoked_ms, 0);
	token_row_release(&t);
	assert_int_equal(token_store_find(f->s, "nope", &t, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);

	assert_int_equal(token_store_touch(f->s, "cron", 7000, &err), 0);
	assert_int_equal(token_store_list(f->s, &rows, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(rows[0].name, "cron");
	assert_null(rows[0].hash); /* a list never reads the hashes */
	assert_int_equal(rows[0].last_used_ms, 7000);
	assert_string_equal(rows[1].name, "ops-script");
	assert_int_equal(rows[1].expires_ms, 0);
	token_rows_free(rows, n);

	/* revoked once: the first time stays; an unknown name is not found */
	assert_int_equal(token_store_revoke(f->s, "cron", 8000, &err), 0);
	assert_int_equal(token_store_revoke(f->s, "cron", 9000, &err), 0);
	assert_int_equal(token_store_find(f->s, "h2", &t, &err), 0);
	assert_int_equal(t.revoked_ms, 8000);
	token_row_release(&t);
	assert_int_equal(token_store_revoke(f->s, "nope", 9000, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
}

static void test_delete_revokes(void **state)
{
	struct store_fixture *f = *state;
	struct weir_error err = {0};
	struct token_row t = {0};
	int revoked = -1;

	add_user(f->s, "bob", ROLE_USER);
	add_user(f->s, "alice", ROLE_USER);
	add_token(f->s, "b1", "bob", "h1", 0);
	add_token(f->s, "b2", "bob", "h2", 0);
	add_token(f->s, "a1", "alice", "h3", 0);
	assert_int_equal(token_store_revoke(f->s, "b2", 100, &err), 0);
	assert_int_equal(user_store_delete(f->s, "bob", 500, &revoked, &err), 0);
	assert_int_equal(revoked, 1); /* b1; b2 was already */
	assert_int_equal(token_store_find(f->s, "h1", &t, &err), 0);
	assert_int_equal(t.revoked_ms, 500);
	token_row_release(&t);
	assert_int_equal(token_store_find(f->s, "h2", &t, &err), 0);
	assert_int_equal(t.revoked_ms, 100);
	token_row_release(&t);
	assert_int_equal(token_store_find(f->s, "h3", &t, &err), 0);
	assert_int_equal(t.revoked_ms, 0); /* another user's token is untouched */
	token_row_release(&t);
	/* the name is free again */
	add_user(f->s, "bob", ROLE_VIEWER);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_users, setup, store_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_tokens, setup, store_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_delete_revokes, setup, store_fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
