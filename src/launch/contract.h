/* contract.h: the environment each framework expects, computed from the gang.
 *
 * A pure function: the launcher passes what the register and cluster answers
 * said, and gets back the variables to add to the user program's environment
 * (TF_CONFIG, MASTER_ADDR/RANK..., DMLC_*, HOROVOD_*, WEIR_*,
 * CUDA_VISIBLE_DEVICES, and what TonY's runtimes set: JOB_NAME, TASK_INDEX,
 * TASK_NUM, DISTRIBUTED_MODE, IS_CHIEF, WORLD, DMLC_LOCAL...) and, for
 * horovod, the text of the hostfile to write.  TonY's horovod defaults
 * (HOROVOD_CONTROLLER=gloo...) come first, then the user's env, then the
 * rest, so the user can change the former and not the latter.
 * No I/O, no global state: unit-tested without a server.
 *
 * Ranks (pytorch, horovod) run over every role that is not a sidecar: chief
 * first, then worker, then the other roles in the order given; RANK is the
 * role's offset plus the index.  Local ranks group tasks by host.
 * See docs/internals/launch.md for every variable, docs/tony.md for TonY's.
 */
#ifndef WEIR_LAUNCH_CONTRACT_H
#define WEIR_LAUNCH_CONTRACT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "model/job_spec.h"

struct contract_role {
	const char *name;
	int instances;
	bool untracked;
	bool sidecar;
};

struct contract_input {
	enum framework framework;
	const struct contract_role *roles;
	size_t n_roles;
	/* {"role": ["host:port", ...], ...} as the cluster answer gives it;
	 * borrowed.  Every role in `roles` must have `instances` entries. */
	const json_t *cluster;
	const char *role; /* this task's role and index */
	int index;
	int attempt;
	int64_t job_id;
	const char *gpus;    /* "0,1", "" or NULL: no GPUs */
	const json_t *env;   /* job/role env of the register answer ({"K":"V"}); may be NULL */
	const char *workdir; /* where the horovod hostfile goes; may be NULL otherwise */
};

struct contract {
	struct env_var *env; /* owned; names unique; later sources override earlier */
	size_t n_env;
	char *hostfile;      /* horovod: "host:slots\n" lines to write to hostfile_path */
	char *hostfile_path; /* NULL unless hostfile is set */
};

/* Fills `out` (which the caller then releases).  -1 with err (WEIR_E_INVALID)
 * when the cluster does not match the roles or this task is not in it;
 * `out` is then left empty. */
int contract_build(const struct contract_input *in, struct contract *out, struct weir_error *err);

void contract_release(struct contract *c);

/* The value of `name` in the contract, or NULL. */
const char *contract_get(const struct contract *c, const char *name);

#endif
