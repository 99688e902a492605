/* test_contract.c: each framework's environment from a cluster map. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "launch/contract.h"

static json_t *cluster_of(const char *text)
{
	json_t *j = json_loads(text, 0, NULL);
	assert_non_null(j);
	return j;
}

static void build(struct contract *c, enum framework fw, const struct contract_role *roles,
                  size_t n_roles, json_t *cluster, const char *role, int index, const char *gpus)
{
	struct contract_input in = {
	    .framework = fw,
	    .roles = roles,
	    .n_roles = n_roles,
	    .cluster = cluster,
	    .role = role,
	    .index = index,
	    .attempt = 3,
	    .job_id = 12,
	    .gpus = gpus,
	    .workdir = "/w",
	};
	struct weir_error err = {0};
	int rc = contract_build(&in, c, &err);
	if (rc != 0)
		fail_msg("contract_build: %s", err.msg);
}

static void expect_env(const struct contract *c, const char *name, const char *value)
{
	const char *v = contract_get(c, name);
	if (!v)
		fail_msg("%s is not set", name);
	if (strcmp(v, value))
		fail_msg("%s=%s, expected %s", name, v, value);
}

static void test_tensorflow_config(void **state)
{
	(void)state;
	struct contract_role roles[] = {
	    {"chief", 1, false, false},
	    {"worker", 2, false, false},
	    {"ps", 1, true, false},
	    {"tensorboard", 1, true, true},
	};
	json_t *cl = cluster_of("{\"chief\":[\"h:1\"],\"worker\":[\"h:2\",\"h:3\"],"
	                        "\"ps\":[\"h:4\"],\"tensorboard\":[\"h:5\"]}");
	struct contract c;

	build(&c, FRAMEWORK_TENSORFLOW, roles, 4, cl, "worker", 1, NULL);
	json_t *tf = json_loads(contract_get(&c, "TF_CONFIG"), 0, NULL);
	assert_non_null(tf);
	json_t *cluster = json_object_get(tf, "cluster");
	assert_int_equal(json_object_size(cluster), 3); /* sidecar left out */
	assert_null(json_object_get(cluster, "tensorboard"));
	assert_non_null(json_object_get(cluster, "ps")); /* untracked stays */
	assert_string_equal(
	    json_string_value(json_array_get(json_object_get(cluster, "worker"), 1)), "h:3");
	json_t *task = json_object_get(tf, "task");
	assert_string_equal(json_string_value(json_object_get(task, "type")), "worker");
	assert_int_equal(json_integer_value(json_object_get(task, "index")), 1);
	json_decref(tf);
	expect_env(&c, "JOB_NAME", "worker");
	expect_env(&c, "TASK_INDEX", "1");
	expect_env(&c, "TASK_NUM", "3"); /* tracked tasks: chief + 2 workers */
	json_t *spec = json_loads(contract_get(&c, "CLUSTER_SPEC"), 0, NULL);
	assert_non_null(spec);
	assert_int_equal(json_object_size(spec), 3);
	json_decref(spec);
	expect_env(&c, "WEIR_JOB_ID", "12");
	expect_env(&c, "WEIR_ROLE", "worker");
	expect_env(&c, "WEIR_TASK_INDEX", "1");
	expect_env(&c, "WEIR_ATTEMPT", "3");
	expect_env(&c, "CUDA_VISIBLE_DEVICES", "");
	contract_release(&c);

	/* the sidecar itself gets no TF_CONFIG (it is not in the cluster) */
	build(&c, FRAMEWORK_TENSORFLOW, roles, 4, cl, "tensorboard", 0, "1");
	assert_null(contract_get(&c, "TF_CONFIG"));
	expect_env(&c, "CUDA_VISIBLE_DEVICES", "1");
	contract_release(&c);
	json_decref(cl);
}

static void test_pytorch_ranks(void **state)
{
	(void)state;
	struct contract_role roles[] = {
	    {"worker", 2, false, false},
	    {"chief", 1, false, false},
	    {"evaluator", 1, false, false},
	};
	json_t *cl = cluster_of("{\"worker\":[\"a:11\",\"b:12\"],\"chief\":[\"a:10\"],"
	                        "\"evaluator\":[\"b:13\"]}");
	const char *names[] = {"chief", "worker", "worker", "evaluator"};
	int indexes[] = {0, 0, 1, 0};
	const char *local[] = {"0", "1", "0", "1"};
	int seen[4] = {0};

	for (int t = 0; t < 4; t++) {
		struct contract c;
		build(&c, FRAMEWORK_PYTORCH, roles, 3, cl, names[t], indexes[t], "0,1");
		int rank = atoi(contract_get(&c, "RANK"));
		assert_in_range(rank, 0, 3);
		assert_int_equal(seen[rank], 0); /* unique across roles */
		seen[rank] = 1;
		assert_int_equal(rank, t); /* chief first, then workers, then the rest */
		expect_env(&c, "WORLD_SIZE", "4");
		expect_env(&c, "MASTER_ADDR", "a");
		expect_env(&c, "MASTER_PORT", "10");
		expect_env(&c, "INIT_METHOD", "tcp://a:10");
		expect_env(&c, "LOCAL_RANK", local[t]);
		expect_env(&c, "LOCAL_WORLD_SIZE", "2");
		expect_env(&c, "GROUP_RANK", t == 0 || t == 1 ? "0" : "1");
		expect_env(&c, "CUDA_VISIBLE_DEVICES", "0,1");
		contract_release(&c);
	}
	json_decref(cl);

	/* no chief: worker 0 is the master */
	struct contract_role w[] = {{"worker", 2, false, false}};
	cl = cluster_of("{\"worker\":[\"127.0.0.1:5000\",\"127.0.0.1:5001\"]}");
	struct contract c;
	build(&c, FRAMEWORK_PYTORCH, w, 1, cl, "worker", 1, NULL);
	expect_env(&c, "MASTER_PORT", "5000");
	expect_env(&c, "RANK", "1");
	expect_env(&c, "LOCAL_RANK", "1");
	expect_env(&c, "LOCAL_WORLD_SIZE", "2");
	contract_release(&c);
	json_decref(cl);
}

static void test_mxnet(void **state)
{
	(void)state;
	struct contract_role roles[] = {
	    {"scheduler", 1, true, false},
	    {"server", 2, true, false},
	    {"worker", 3, false, false},
	};
	json_t *cl = cluster_of("{\"scheduler\":[\"s:9000\"],\"server\":[\"h:1\",\"h:2\"],"
	                        "\"worker\":[\"h:3\",\"h:4\",\"h:5\"]}");
	struct contract c;

	build(&c, FRAMEWORK_MXNET, roles, 3, cl, "server", 1, NULL);
	expect_env(&c, "DMLC_ROLE", "server");
	expect_env(&c, "DMLC_PS_ROOT_URI", "s");
	expect_env(&c, "DMLC_PS_ROOT_PORT", "9000");
	expect_env(&c, "DMLC_NUM_SERVER", "2");
	expect_env(&c, "DMLC_NUM_WORKER", "3");
	contract_release(&c);
	build(&c, FRAMEWORK_MXNET, roles, 3, cl, "scheduler", 0, NULL);
	expect_env(&c, "DMLC_ROLE", "scheduler");
	contract_release(&c);
	build(&c, FRAMEWORK_MXNET, roles, 3, cl, "worker", 2, NULL);
	expect_env(&c, "DMLC_ROLE", "worker");
	contract_release(&c);
	json_decref(cl);
}

static void test_horovod(void **state)
{
	(void)state;
	struct contract_role roles[] = {{"worker", 4, false, false}};
	json_t *cl = cluster_of("{\"worker\":[\"a:1\",\"a:2\",\"b:3\",\"b:4\"]}");
	struct contract c;

	build(&c, FRAMEWORK_HOROVOD, roles, 1, cl, "worker", 3, NULL);
	expect_env(&c, "HOROVOD_RANK", "3");
	expect_env(&c, "HOROVOD_SIZE", "4");
	expect_env(&c, "HOROVOD_LOCAL_RANK", "1");
	expect_env(&c, "HOROVOD_LOCAL_SIZE", "2");
	expect_env(&c, "HOROVOD_CROSS_RANK", "1");
	expect_env(&c, "HOROVOD_CROSS_SIZE", "2");
	expect_env(&c, "HOROVOD_HOSTNAME", "b");
	expect_env(&c, "WEIR_HOSTFILE", "/w/hostfile");
	assert_string_equal(c.hostfile, "a:2\nb:2\n");
	assert_string_equal(c.hostfile_path, "/w/hostfile");
	contract_release(&c);
	json_decref(cl);
}

static void test_user_env_and_errors(void **state)
{
	(void)state;
	struct contract_role roles[] = {{"worker", 2, false, false}};
	json_t *cl = cluster_of("{\"worker\":[\"a:1\"]}");
	json_t *env = json_loads("{\"FOO\":\"bar\",\"RANK\":\"99\"}", 0, NULL);
	struct contract_input in = {
	    .framework = FRAMEWORK_PYTORCH,
	    .roles = roles,
	    .n_roles = 1,
	    .cluster = cl,
	    .role = "worker",
	    .index = 0,
	    .attempt = 1,
	    .job_id = 1,
	    .env = env,
	};
	struct contract c;
	struct weir_error err = {0};

	/* the cluster has 1 address for 2 instances */
	assert_int_equal(contract_build(&in, &c, &err), -1);
	assert_non_null(strstr(err.msg, "cluster.worker"));
	assert_int_equal(c.n_env, 0);
	json_decref(cl);

	cl = cluster_of("{\"worker\":[\"a:1\",\"a:2\"]}");
	in.cluster = cl;
	assert_int_equal(contract_build(&in, &c, &err), 0);
	expect_env(&c, "FOO", "bar");
	expect_env(&c, "RANK", "0"); /* the contract wins over the user's env */
	contract_release(&c);

	in.role = "ps";
	assert_int_equal(contract_build(&in, &c, &err), -1);
	in.role = "worker";
	in.index = 2;
	assert_int_equal(contract_build(&in, &c, &err), -1);

	/* framework none: only weir's own variables, no cluster needed */
	in.framework = FRAMEWORK_NONE;
	in.index = 0;
	in.cluster = NULL;
	assert_int_equal(contract_build(&in, &c, &err), 0);
	expect_env(&c, "RANK", "99");
	expect_env(&c, "WEIR_ROLE", "worker");
	contract_release(&c);
	json_decref(cl);
	json_decref(env);
}

/* What TonY's runtimes set, variable for variable (docs/tony.md). */
static void test_tony_variables(void **state)
{
	(void)state;
	struct contract_role w[] = {{"worker", 2, false, false}};
	json_t *cl = cluster_of("{\"worker\":[\"a:7\",\"b:8\"]}");
	struct contract c;

	/* PyTorchRuntime: INIT_METHOD, RANK and WORLD; the AM's common ones */
	build(&c, FRAMEWORK_PYTORCH, w, 1, cl, "worker", 1, NULL);
	expect_env(&c, "INIT_METHOD", "tcp://a:7");
	expect_env(&c, "RANK", "1");
	expect_env(&c, "WORLD", "2");
	expect_env(&c, "JOB_NAME", "worker");
	expect_env(&c, "TASK_INDEX", "1");
	expect_env(&c, "TASK_NUM", "2");
	expect_env(&c, "DISTRIBUTED_MODE", "GANG");
	expect_env(&c, "JOB_ID", "12");
	expect_env(&c, "APPID", "12");
	expect_env(&c, "SESSION_ID", "2"); /* attempt 3: TonY counts sessions from 0 */
	assert_null(contract_get(&c, "IS_CHIEF"));
	contract_release(&c);
	build(&c, FRAMEWORK_PYTORCH, w, 1, cl, "worker", 0, NULL);
	expect_env(&c, "IS_CHIEF", "true"); /* worker:0 without a chief role */
	contract_release(&c);
	/* standalone (none): the common ones too, no cluster needed */
	build(&c, FRAMEWORK_NONE, w, 1, NULL, "worker", 0, NULL);
	expect_env(&c, "JOB_NAME", "worker");
	expect_env(&c, "DISTRIBUTED_MODE", "GANG");
	expect_env(&c, "IS_CHIEF", "true");
	assert_null(contract_get(&c, "WORLD"));
	contract_release(&c);
	json_decref(cl);

	/* with a chief role the chief is chief, worker:0 is not */
	struct contract_role cw[] = {{"chief", 1, false, false}, {"worker", 1, false, false}};
	cl = cluster_of("{\"chief\":[\"a:1\"],\"worker\":[\"a:2\"]}");
	build(&c, FRAMEWORK_TENSORFLOW, cw, 2, cl, "worker", 0, NULL);
	assert_null(contract_get(&c, "IS_CHIEF"));
	expect_env(&c, "DISTRIBUTED_MODE", "GANG");
	contract_release(&c);
	build(&c, FRAMEWORK_TENSORFLOW, cw, 2, cl, "chief", 0, NULL);
	expect_env(&c, "IS_CHIEF", "true");
	contract_release(&c);
	json_decref(cl);

	/* MXNetRuntime: DMLC_LOCAL=0 */
	struct contract_role mx[] = {{"scheduler", 1, true, false}, {"worker", 1, false, false}};
	cl = cluster_of("{\"scheduler\":[\"s:9\"],\"worker\":[\"h:3\"]}");
	build(&c, FRAMEWORK_MXNET, mx, 2, cl, "worker", 0, NULL);
	expect_env(&c, "DMLC_LOCAL", "0");
	contract_release(&c);
	json_decref(cl);

	/* HorovodRuntime: CLUSTER_SPEC, and gloo by default, which the job may change */
	cl = cluster_of("{\"worker\":[\"a:7\",\"b:8\"]}");
	build(&c, FRAMEWORK_HOROVOD, w, 1, cl, "worker", 0, NULL);
	expect_env(&c, "HOROVOD_CONTROLLER", "gloo");
	expect_env(&c, "HOROVOD_CPU_OPERATIONS", "gloo");
	expect_env(&c, "HOROVOD_GLOO_TIMEOUT_SECONDS", "2000");
	json_t *spec = json_loads(contract_get(&c, "CLUSTER_SPEC"), 0, NULL);
	assert_non_null(spec);
	assert_int_equal(json_array_size(json_object_get(spec, "worker")), 2);
	json_decref(spec);
	contract_release(&c);
	json_t *env = json_loads("{\"HOROVOD_CONTROLLER\":\"mpi\",\"TASK_INDEX\":\"9\"}", 0,
				 NULL);
	struct contract_input in = {.framework = FRAMEWORK_HOROVOD, .roles = w, .n_roles = 1,
				    .cluster = cl, .role = "worker", .index = 1, .attempt = 1,
				    .job_id = 5, .env = env, .workdir = "/w"};
	struct weir_error err = {0};
	assert_int_equal(contract_build(&in, &c, &err), 0);
	expect_env(&c, "HOROVOD_CONTROLLER", "mpi");
	expect_env(&c, "TASK_INDEX", "1"); /* TonY's own variables are the contract's */
	contract_release(&c);
	json_decref(env);
	json_decref(cl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tensorflow_config),
	    cmocka_unit_test(test_pytorch_ranks),
	    cmocka_unit_test(test_mxnet),
	    cmocka_unit_test(test_horovod),
	    cmocka_unit_test(test_user_env_and_errors),
	    cmocka_unit_test(test_tony_variables),
	};
	return cmocka_run_group_tests_name("launch/contract", tests, NULL, NULL);
}
