/* test_alloc.c: gang allocation (fits, never fits, waits, GPUs disjoint and
 * released, recovery) and the queue (priority, FIFO, head-of-line). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/alloc.h"
#include "sched/queue.h"

static const char *const gpu3[] = {"0", "1", "2"};

/* 16 vcores, 32g, 3 gpus */
static const struct node_resources node3 = {
    .vcores = 16, .memory_mb = 32768, .gpu_ids = gpu3, .n_gpus = 3};

struct spec_buf {
	struct role_spec roles[4];
	struct job_spec spec;
};

/* A job of `n` roles given as (name, instances, memory_mb, vcores, gpus). */
static struct job_spec *mk(struct spec_buf *b, size_t n, const struct role_spec *roles)
{
	memset(b, 0, sizeof(*b));
	for (size_t i = 0; i < n; i++)
		b->roles[i] = roles[i];
	b->spec.name = (char *)"job";
	b->spec.roles = b->roles;
	b->spec.n_roles = n;
	b->spec.retry_exit_min = 128;
	b->spec.retry_exit_max = 255;
	return &b->spec;
}

#define ROLE(n, i, m, v, g)                                                                        \
	{                                                                                          \
		.name = (char *)(n), .instances = (i), .memory_mb = (m), .vcores = (v),            \
		.gpus = (g)                                                                        \
	}

static struct job_spec *workers(struct spec_buf *b, int n, uint64_t mem, int vcores, int gpus)
{
	struct role_spec r[] = {ROLE("worker", n, mem, vcores, gpus)};
	return mk(b, 1, r);
}

static void never_fits_msg(const struct job_spec *spec, const char *expected)
{
	struct weir_error err = {0};
	assert_int_equal(alloc_never_fits(&node3, spec, &err), -1);
	assert_int_equal(err.kind, WEIR_E_UNFIT);
	if (strcmp(err.msg, expected) != 0)
		fail_msg("got \"%s\", expected \"%s\"", err.msg, expected);
}

static void test_gang_fits(void **state)
{
	(void)state;
	struct spec_buf b;
	struct role_spec r[] = {ROLE("chief", 1, 4096, 2, 1), ROLE("worker", 2, 4096, 2, 1),
	                        ROLE("ps", 1, 2048, 1, 0)};
	struct job_spec *spec = mk(&b, 3, r);
	struct alloc_state *st = alloc_state_create(&node3, NULL);
	assert_non_null(st);
	assert_int_equal(alloc_never_fits(&node3, spec, NULL), 0);

	struct job_alloc a;
	char reason[128];
	struct weir_error err = {0};
	assert_int_equal(alloc_try_gang(st, 7, spec, &a, reason, sizeof(reason), &err), 0);
	assert_int_equal(a.job_id, 7);
	assert_int_equal(a.n_tasks, 4);
	assert_string_equal(a.tasks[0].role, "chief");
	assert_string_equal(a.tasks[0].gpus, "0");
	assert_string_equal(a.tasks[1].role, "worker");
	assert_int_equal(a.tasks[1].index, 0);
	assert_string_equal(a.tasks[1].gpus, "1");
	assert_int_equal(a.tasks[2].index, 1);
	assert_string_equal(a.tasks[2].gpus, "2");
	assert_string_equal(a.tasks[3].role, "ps");
	assert_string_equal(a.tasks[3].gpus, "");
	assert_true(alloc_holds(st, 7));

	int v;
	uint64_t m;
	size_t g;
	alloc_free_resources(st, &v, &m, &g);
	assert_int_equal(v, 16 - 7);
	assert_int_equal(m, 32768 - 14336);
	assert_int_equal(g, 0);

	/* a second allocation of the same job is a caller's error */
	struct job_alloc a2;
	assert_int_equal(
	    alloc_try_gang(st, 7, workers(&b, 1, 1, 1, 0), &a2, reason, sizeof(reason), &err), -1);
	assert_int_equal(err.kind, WEIR_E_CONFLICT);

	job_alloc_release(&a);
	assert_int_equal(alloc_release(st, 7), 0);
	assert_int_equal(alloc_release(st, 7), -1);
	alloc_free_resources(st, &v, &m, &g);
	assert_int_equal(v, 16);
	assert_int_equal(m, 32768);
	assert_int_equal(g, 3);
	alloc_state_destroy(st);
	alloc_state_destroy(NULL);
}

static void test_never_fits(void **state)
{
	(void)state;
	struct spec_buf b;
	never_fits_msg(workers(&b, 1, 1024, 1, 4),
	               "worker needs 4 gpus per instance; this node has 3 gpus");
	never_fits_msg(workers(&b, 2, 1024, 1, 2),
	               "job needs 2 gpus per worker x 2; this node has 3 gpus");
	never_fits_msg(workers(&b, 1, 65536, 1, 0),
	               "worker needs 64g memory per instance; this node has 32g memory");
	never_fits_msg(workers(&b, 3, 12288, 1, 0),
	               "job needs 12g memory per worker x 3; this node has 32g memory");
	never_fits_msg(workers(&b, 1, 1024, 17, 0),
	               "worker needs 17 vcores per instance; this node has 16 vcores");
	never_fits_msg(workers(&b, 9, 1024, 2, 0),
	               "job needs 2 vcores per worker x 9; this node has 16 vcores");
	struct role_spec r[] = {ROLE("chief", 1, 1024, 1, 2), ROLE("worker", 1, 1024, 1, 2)};
	never_fits_msg(mk(&b, 2, r),
	               "job needs 4 gpus in all (2 per chief x 1, 2 per worker x 1); this node has "
	               "3 gpus");

	/* a node without GPUs */
	struct node_resources none = {.vcores = 4, .memory_mb = 8192};
	struct weir_error err = {0};
	assert_int_equal(alloc_never_fits(&none, workers(&b, 1, 1024, 1, 1), &err), -1);
	assert_string_equal(err.msg, "worker needs 1 gpu per instance; this node has 0 gpus");

	/* try_gang refuses it too, leaving the state alone */
	struct alloc_state *st = alloc_state_create(&node3, NULL);
	struct job_alloc a;
	char reason[128];
	assert_int_equal(
	    alloc_try_gang(st, 1, workers(&b, 1, 1024, 1, 4), &a, reason, sizeof(reason), &err),
	    -1);
	assert_int_equal(err.kind, WEIR_E_UNFIT);
	assert_false(alloc_holds(st, 1));
	alloc_state_destroy(st);
}

static void expect_wait(struct alloc_state *st, const struct job_spec *spec, const char *reason_s)
{
	struct job_alloc a;
	char reason[128];
	struct weir_error err = {0};
	assert_int_equal(alloc_try_gang(st, 99, spec, &a, reason, sizeof(reason), &err), 1);
	assert_string_equal(reason, reason_s);
	assert_false(alloc_holds(st, 99));
	assert_null(a.tasks);
}

static void test_waits(void **state)
{
	(void)state;
	struct spec_buf b, big;
	struct alloc_state *st = alloc_state_create(&node3, NULL);
	struct job_alloc a;
	char reason[128];
	/* job 1 holds 28g, 2 gpus, 13 vcores */
	struct role_spec r[] = {ROLE("worker", 2, 13312, 6, 1), ROLE("ps", 1, 2048, 1, 0)};
	assert_int_equal(alloc_try_gang(st, 1, mk(&big, 2, r), &a, reason, sizeof(reason), NULL),
	                 0);
	job_alloc_release(&a);

	expect_wait(st, workers(&b, 2, 4096, 1, 0), "waiting: 4g memory");
	expect_wait(st, workers(&b, 1, 4608, 1, 0), "waiting: 512m memory");
	expect_wait(st, workers(&b, 1, 1024, 1, 3), "waiting: 2 gpus");
	expect_wait(st, workers(&b, 1, 1024, 1, 2), "waiting: 1 gpu");
	expect_wait(st, workers(&b, 2, 1024, 3, 0), "waiting: 3 vcores");
	/* memory is named first when several are short */
	expect_wait(st, workers(&b, 1, 8192, 16, 3), "waiting: 4g memory");

	/* what is left still fits */
	assert_int_equal(
	    alloc_try_gang(st, 2, workers(&b, 1, 4096, 3, 1), &a, reason, sizeof(reason), NULL), 0);
	assert_string_equal(a.tasks[0].gpus, "2");
	job_alloc_release(&a);
	alloc_state_destroy(st);
}

static void test_gpus_disjoint_and_released(void **state)
{
	(void)state;
	struct spec_buf b;
	struct alloc_state *st = alloc_state_create(&node3, NULL);
	struct job_alloc a1, a2, a3;
	char reason[128];
	struct job_spec *two = workers(&b, 1, 1024, 1, 2);

	assert_int_equal(alloc_try_gang(st, 1, two, &a1, reason, sizeof(reason), NULL), 0);
	assert_string_equal(a1.tasks[0].gpus, "0,1");
	/* two 2-gpu jobs on 3 gpus: the second waits */
	assert_int_equal(alloc_try_gang(st, 2, two, &a2, reason, sizeof(reason), NULL), 1);
	assert_string_equal(reason, "waiting: 1 gpu");
	/* a 1-gpu job gets the one left, not one of job 1's */
	assert_int_equal(
	    alloc_try_gang(st, 3, workers(&b, 1, 1024, 1, 1), &a3, reason, sizeof(reason), NULL),
	    0);
	assert_string_equal(a3.tasks[0].gpus, "2");
	two = workers(&b, 1, 1024, 1, 2);
	assert_int_equal(alloc_release(st, 1), 0);
	assert_int_equal(alloc_try_gang(st, 2, two, &a2, reason, sizeof(reason), NULL), 0);
	assert_string_equal(a2.tasks[0].gpus, "0,1");
	/* and after job 3 leaves, gpu 2 comes back */
	assert_int_equal(alloc_release(st, 3), 0);
	size_t g;
	alloc_free_resources(st, NULL, NULL, &g);
	assert_int_equal(g, 1);
	job_alloc_release(&a1);
	job_alloc_release(&a2);
	job_alloc_release(&a3);
	alloc_state_destroy(st);
}

static void test_reserve(void **state)
{
	(void)state;
	struct spec_buf b;
	struct alloc_state *st = alloc_state_create(&node3, NULL);
	struct job_spec *spec = workers(&b, 2, 1024, 1, 1);
	struct task_alloc tasks[] = {{.role = (char *)"worker", .index = 0, .gpus = (char *)"2"},
	                             {.role = (char *)"worker", .index = 1, .gpus = (char *)"0"}};
	struct weir_error err = {0};
	assert_int_equal(alloc_reserve(st, 5, spec, tasks, 2, &err), 0);
	assert_true(alloc_holds(st, 5));
	/* a new job gets the free gpu, 1 */
	struct job_alloc a;
	char reason[128];
	assert_int_equal(
	    alloc_try_gang(st, 6, workers(&b, 1, 1024, 1, 1), &a, reason, sizeof(reason), NULL), 0);
	assert_string_equal(a.tasks[0].gpus, "1");
	job_alloc_release(&a);

	/* a held gpu, an unknown gpu, a task not in the spec: refused, no change */
	spec = workers(&b, 1, 1024, 1, 1);
	struct task_alloc held[] = {{.role = (char *)"worker", .index = 0, .gpus = (char *)"2"}};
	assert_int_equal(alloc_reserve(st, 7, spec, held, 1, &err), -1);
	assert_int_equal(err.kind, WEIR_E_CONFLICT);
	struct task_alloc unknown[] = {{.role = (char *)"worker", .index = 0, .gpus = (char *)"9"}};
	assert_int_equal(alloc_reserve(st, 7, spec, unknown, 1, &err), -1);
	assert_non_null(strstr(err.msg, "gpu 9"));
	struct task_alloc stray[] = {{.role = (char *)"ps", .index = 0, .gpus = NULL}};
	assert_int_equal(alloc_reserve(st, 7, spec, stray, 1, &err), -1);
	assert_false(alloc_holds(st, 7));

	assert_int_equal(alloc_release(st, 5), 0);
	size_t g;
	alloc_free_resources(st, NULL, NULL, &g);
	assert_int_equal(g, 2);
	alloc_state_destroy(st);
}

static void test_format_memory(void **state)
{
	(void)state;
	char buf[32];
	assert_string_equal(alloc_format_memory(4096, buf, sizeof(buf)), "4g");
	assert_string_equal(alloc_format_memory(1536, buf, sizeof(buf)), "1536m");
	assert_string_equal(alloc_format_memory(512, buf, sizeof(buf)), "512m");
}

/* ---- queue ---- */

static void test_queue_priority_then_fifo(void **state)
{
	(void)state;
	struct spec_buf b1, b2, b3, b4;
	struct alloc_state *st = alloc_state_create(&node3, NULL);
	/* 12g each: two fit into 32g, the third waits */
	struct queue_entry q[] = {
	    {.job_id = 4, .priority = 0, .spec = workers(&b1, 1, 12288, 1, 0)},
	    {.job_id = 2, .priority = 0, .spec = workers(&b2, 1, 12288, 1, 0)},
	    {.job_id = 9, .priority = 5, .spec = workers(&b3, 1, 12288, 1, 0)},
	    {.job_id = 3, .priority = 0, .spec = workers(&b4, 1, 1024, 1, 0)},
	};
	struct queue_decision d[4];
	assert_int_equal(queue_schedule(st, q, 4, d, NULL), 0);
	assert_int_equal(d[0].job_id, 9);
	assert_int_equal(d[0].action, QUEUE_START);
	assert_int_equal(d[1].job_id, 2);
	assert_int_equal(d[1].action, QUEUE_START);
	assert_int_equal(d[2].job_id, 3);
	assert_int_equal(d[2].action, QUEUE_START);
	assert_int_equal(d[3].job_id, 4);
	assert_int_equal(d[3].action, QUEUE_WAIT);
	assert_string_equal(d[3].reason, "waiting: 5g memory");
	assert_true(alloc_holds(st, 9) && alloc_holds(st, 2) && alloc_holds(st, 3));
	assert_false(alloc_holds(st, 4));
	queue_decisions_release(d, 4);
	alloc_state_destroy(st);
}

static void test_queue_head_of_line(void **state)
{
	(void)state;
	struct spec_buf b0, b1, b2, b3, b4;
	struct alloc_state *st = alloc_state_create(&node3, NULL);
	struct job_alloc a;
	char reason[128];
	/* something running holds 2 gpus */
	assert_int_equal(
	    alloc_try_gang(st, 1, workers(&b0, 1, 1024, 1, 2), &a, reason, sizeof(reason), NULL),
	    0);
	job_alloc_release(&a);

	struct queue_entry q[] = {
	    {.job_id = 11, .priority = 1, .spec = workers(&b1, 1, 1024, 1, 3)}, /* waits */
	    {.job_id = 12, .priority = 0, .spec = workers(&b2, 1, 1024, 1, 1)}, /* would fit */
	    {.job_id = 13, .priority = 1, .spec = workers(&b3, 1, 1024, 1, 0)}, /* would fit */
	    {.job_id = 14, .priority = 0, .spec = workers(&b4, 1, 1024, 1, 9)}, /* never */
	};
	struct queue_decision d[4];
	assert_int_equal(queue_schedule(st, q, 4, d, NULL), 0);
	assert_int_equal(d[0].job_id, 11);
	assert_int_equal(d[0].action, QUEUE_WAIT);
	assert_string_equal(d[0].reason, "waiting: 2 gpus");
	assert_int_equal(d[1].job_id, 13);
	assert_int_equal(d[1].action, QUEUE_WAIT);
	assert_string_equal(d[1].reason, "waiting: job 11 ahead in queue");
	assert_int_equal(d[2].job_id, 12);
	assert_int_equal(d[2].action, QUEUE_WAIT);
	assert_string_equal(d[2].reason, "waiting: job 11 (higher priority)");
	assert_int_equal(d[3].job_id, 14);
	assert_int_equal(d[3].action, QUEUE_REJECT);
	assert_string_equal(d[3].reason, "worker needs 9 gpus per instance; this node has 3 gpus");
	assert_false(alloc_holds(st, 12) || alloc_holds(st, 13));
	queue_decisions_release(d, 4);

	/* once job 1 ends, job 11 starts and the rest follow as they fit */
	assert_int_equal(alloc_release(st, 1), 0);
	assert_int_equal(queue_schedule(st, q, 3, d, NULL), 0);
	assert_int_equal(d[0].action, QUEUE_START);
	assert_string_equal(d[0].alloc.tasks[0].gpus, "0,1,2");
	assert_int_equal(d[1].action, QUEUE_START); /* 13: no gpus */
	assert_int_equal(d[2].action, QUEUE_WAIT);  /* 12: needs a gpu */
	assert_string_equal(d[2].reason, "waiting: 1 gpu");
	queue_decisions_release(d, 3);
	alloc_state_destroy(st);
}

/* Local and gang work in one pass, each against its own allocator: a big
 * gang job neither waits for the node nor blocks the local jobs, and a
 * local job that waits blocks no gang job. */
static void test_queue_routes(void **state)
{
	(void)state;
	static const char *const many[] = {"0", "1", "2", "3", "4", "5", "6", "7"};
	const struct node_resources cluster = {
	    .vcores = 1024, .memory_mb = 1 << 20, .gpu_ids = many, .n_gpus = 8};
	struct spec_buf b1, b2, b3, b4;
	struct alloc_state *st = alloc_state_create(&node3, NULL);
	struct alloc_state *gang = alloc_state_create(&cluster, NULL);
	struct queue_entry q[] = {
	    {.job_id = 1, .priority = 0, .spec = workers(&b1, 1, 40960, 1, 0), .gang = true},
	    {.job_id = 2, .priority = 0, .spec = workers(&b2, 1, 30720, 1, 0)},
	    {.job_id = 3, .priority = 0, .spec = workers(&b3, 1, 4096, 1, 0)}, /* behind 2 */
	    {.job_id = 4, .priority = 9, .spec = workers(&b4, 2, 1024, 1, 4), .gang = true},
	};
	struct queue_decision d[4];

	/* 2 starts locally and 3 waits behind it (16g short then) */
	assert_int_equal(queue_schedule_routes(st, gang, q, 4, d, NULL), 0);
	assert_int_equal(d[0].job_id, 2);
	assert_int_equal(d[0].action, QUEUE_START);
	assert_int_equal(d[1].job_id, 3);
	assert_int_equal(d[1].action, QUEUE_WAIT);
	/* the gang queue: priority first, and the 40g job (never fits this
	 * node) starts on the cluster's allocator */
	assert_int_equal(d[2].job_id, 4);
	assert_int_equal(d[2].action, QUEUE_START);
	assert_string_equal(d[2].alloc.tasks[1].gpus, "4,5,6,7");
	assert_int_equal(d[3].job_id, 1);
	assert_int_equal(d[3].action, QUEUE_START);
	assert_true(alloc_holds(st, 2) && !alloc_holds(st, 1) && !alloc_holds(st, 4));
	assert_true(alloc_holds(gang, 1) && alloc_holds(gang, 4) && !alloc_holds(gang, 2));
	queue_decisions_release(d, 4);

	/* without a gang allocator both queues take from the node's: the 40g
	 * job can never fit it */
	struct alloc_state *one = alloc_state_create(&node3, NULL);
	assert_int_equal(queue_schedule_routes(one, NULL, q, 1, d, NULL), 0);
	assert_int_equal(d[0].action, QUEUE_REJECT);
	queue_decisions_release(d, 1);
	assert_int_equal(queue_schedule_routes(one, NULL, q, 0, d, NULL), 0);
	alloc_state_destroy(one);
	alloc_state_destroy(gang);
	alloc_state_destroy(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gang_fits),
	    cmocka_unit_test(test_never_fits),
	    cmocka_unit_test(test_waits),
	    cmocka_unit_test(test_gpus_disjoint_and_released),
	    cmocka_unit_test(test_reserve),
	    cmocka_unit_test(test_format_memory),
	    cmocka_unit_test(test_queue_priority_then_fifo),
	    cmocka_unit_test(test_queue_head_of_line),
	    cmocka_unit_test(test_queue_routes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
