/* test_metrics.c: the registry (lib/metrics.h): buckets cumulative, sums,
 * sources on the page, label escapes.  The server's series:
 * tests/unit/server/test_observe_series.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "lib/metrics.h"
#include "metrics_page.h"

/* A series of the test's own, as a layer defines one (the store's commit
 * time has these bounds). */
static struct metrics_hist commit = METRICS_HIST("weir_store_commit_seconds", "A commit.", short);

static void render_commit(struct strbuf *out)
{
	metrics_render_hist(out, &commit);
}

static void reset_commit(void)
{
	memset(&commit.cells, 0, sizeof commit.cells);
}

static struct metrics_source source = {render_commit, reset_commit, NULL};

static int reset(void **state)
{
	(void)state;
	metrics_add_source(&source);
	metrics_add_source(&source); /* once on the page */
	metrics_reset();
	return 0;
}

static void test_histogram(void **state)
{
	struct strbuf out = STRBUF_INIT;

	(void)state;
	metrics_hist_observe(&commit, 0.0002);     /* <= 0.00025 */
	metrics_hist_observe(&commit, 0.003);      /* <= 0.005 */
	metrics_hist_observe(&commit, 100);        /* +Inf only */
	metrics_hist_observe(&commit, -1);         /* a clock that stepped: 0 */
	metrics_hist_observe_ms(&commit, 0, 5000); /* a start never seen: nothing */
	assert_int_equal(metrics_render(&out), 0);
	assert_true(sample(out.buf, "weir_store_commit_seconds_bucket{le=\"0.0001\"}") == 1);
	assert_true(sample(out.buf, "weir_store_commit_seconds_bucket{le=\"0.00025\"}") == 2);
	assert_true(sample(out.buf, "weir_store_commit_seconds_bucket{le=\"0.005\"}") == 3);
	assert_true(sample(out.buf, "weir_store_commit_seconds_bucket{le=\"2.5\"}") == 3);
	assert_true(sample(out.buf, "weir_store_commit_seconds_bucket{le=\"+Inf\"}") == 4);
	assert_true(sample(out.buf, "weir_store_commit_seconds_count") == 4);
	assert_true(sample(out.buf, "weir_store_commit_seconds_sum") > 100.003 &&
	            sample(out.buf, "weir_store_commit_seconds_sum") < 100.0033);
	/* one source, added twice: its series once */
	const char *first = strstr(out.buf, "# TYPE weir_store_commit_seconds");
	assert_non_null(first);
	assert_null(strstr(first + 1, "# TYPE weir_store_commit_seconds"));
	assert_non_null(strstr(out.buf, "# TYPE weir_store_commit_seconds histogram\n"));
	strbuf_release(&out);
}

static void test_label_escapes(void **state)
{
	struct strbuf out = STRBUF_INIT;

	(void)state;
	assert_int_equal(metrics_render_label_value(&out, "a\"b\\c\nd"), 0);
	assert_string_equal(out.buf, "a\\\"b\\\\c\\nd");
	strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_histogram, reset),
	    cmocka_unit_test_setup(test_label_escapes, reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
