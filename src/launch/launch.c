/* launch.c: `weir launch`: its arguments, the protocol with the server
 * (register, gang wait, started, exited), the task's working directory,
 * limits and framework environment; the same for a shim forked by the
 * agent (launch_shim_run: its events to the task's journal); the user
 * program itself is run and watched by supervise.c. */
#include "launch/launch.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <jansson.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "launch/airflow_warm.h"
#include "launch/cgroup.h"
#include "launch/contract.h"
#include "launch/journal.h"
#include "launch/logship.h"
#include "launch/report.h"
#include "launch/supervise.h"
#include "launch/task_output.h"
#include "launch/workdir.h"
#include "lib/clock.h"
#include "lib/env_scrub.h"
#include "lib/fs.h"
#include "lib/http_client.h"
#include "lib/log.h"
#include "lib/proc.h"
#include "lib/str.h"
#include "lib/strbuf.h"
#include "lib/tls.h"
#include "model/job_spec.h"

#define EXIT_GANG_TIMEOUT 124
#define EXIT_USAGE 2
#define REPORT_GIVE_UP_MS (24LL * 3600 * 1000)
#define REGISTER_GIVE_UP_MS (300LL * 1000)

extern char **environ;

struct launch {
	/* arguments */
	long long job;
	const char *role;
	int index;
	int attempt;
	const char *host;
	/* server */
	struct http_client *http;
	/* what the output masks besides the answer's "mask": the launch secret
	 * and (a shim's) the server's token; NULL: none */
	const char *own_secrets[2];
	int port_fd;
	int port;
	char host_buf[INET6_ADDRSTRLEN]; /* --host auto: the address found */
	/* the user the program runs as (RUN_AS_ENV, from the local executor) */
	struct run_as run_as;
	/* the register answer; the fields below borrow from it */
	json_t *task;
	const char *framework;
	const char *command;
	const char *workdir;
	const char *cache_dir;
	const char *src_dir;
	const char *gpus;
	uint64_t memory_mb;
	int vcores;
	int64_t registration_timeout_s;
	int64_t execution_timeout_s;
	int64_t kill_grace_ms;
	bool backend_confines; /* register field "cgroup": false (Slurm): no cgroup of ours */
	json_t *cluster;       /* owned */
	char picked_role[64];  /* --tasks: the role picked by SLURM_PROCID */
	/* --log-to-server: the program's stdout+stderr come through a pipe and
	 * go to the server with the launcher's own lines */
	bool log_to_server;
	struct logship *ship;
	int out_r, out_w; /* the pipe; -1 when none */
	/* where the pipe's bytes go, masked (task_output.h); also without
	 * --log-to-server when the task was given secrets */
	struct task_output out;
	const char *launch_error; /* the register answer's: the task must not start */
	struct cgroup *cg;        /* the program's limits; NULL: none, or RSS polling */
	int64_t started_retry_ms; /* the last wait before retrying "started"; 0: none yet */
	/* forked by the agent (launch_shim_run): events go to the task's
	 * journal first; NULL for `weir launch` */
	const struct launch_shim *shim;
};

static int64_t backoff_next(int64_t cur, int64_t max)
{
	return cur * 2 > max ? max : cur * 2;
}

/* Binds host:PORT (l->port; 0: one the kernel picks) and listens, so no
 * other socket takes the port until the user program is about to start. */
static int reserve_port(struct launch *l)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1;

	memset(&ss, 0, sizeof ss);
	if (strchr(l->host, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)l->port);
		if (inet_pton(AF_INET6, l->host, &s6->sin6_addr) != 1)
			goto bad;
		len = sizeof *s6;
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)l->port);
		if (inet_pton(AF_INET, l->host, &s4->sin_addr) != 1)
			goto bad;
		len = sizeof *s4;
	}
	l->port_fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l->port_fd < 0) {
		log_error("cannot create a socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(l->port_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(l->port_fd, (struct sockaddr *)&ss, len) < 0 || listen(l->port_fd, 16) < 0 ||
	    getsockname(l->port_fd, (struct sockaddr *)&ss, &len) < 0) {
		if (l->port)
			log_error("cannot hold port %d on %s, which the server picked for the "
			          "task: %s",
			          l->port, l->host, strerror(errno));
		else
			log_error("cannot reserve a port on %s: %s", l->host, strerror(errno));
		return -1;
	}
	l->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
	                                         : ((struct sockaddr_in *)&ss)->sin_port);
	return 0;
bad:
	log_error("--host %s: expected a numeric IPv4 or IPv6 address", l->host);
	return -1;
}

int launch_first_address(char *out, size_t size)
{
	struct ifaddrs *all, *a;
	int rc = -1;

	if (getifaddrs(&all) < 0)
		return -1;
	/* IPv4 first, then a global IPv6 address: the first that `hostname -I`
	 * prints (up, not loopback, not link-local) */
	for (int pass = 0; pass < 2 && rc < 0; pass++) {
		for (a = all; a && rc < 0; a = a->ifa_next) {
			if (!a->ifa_addr || !(a->ifa_flags & IFF_UP) ||
			    (a->ifa_flags & IFF_LOOPBACK))
				continue;
			if (pass == 0 && a->ifa_addr->sa_family == AF_INET) {
				const struct in_addr *in =
				    &((struct sockaddr_in *)a->ifa_addr)->sin_addr;
				if ((ntohl(in->s_addr) >> 24) != 127 &&
				    inet_ntop(AF_INET, in, out, (socklen_t)size))
					rc = 0;
			} else if (pass == 1 && a->ifa_addr->sa_family == AF_INET6) {
				const struct in6_addr *in6 =
				    &((struct sockaddr_in6 *)a->ifa_addr)->sin6_addr;
				if (!IN6_IS_ADDR_LINKLOCAL(in6) && !IN6_IS_ADDR_LOOPBACK(in6) &&
				    inet_ntop(AF_INET6, in6, out, (socklen_t)size))
					rc = 0;
			}
		}
	}
	freeifaddrs(all);
	return rc;
}

static void release_port(struct launch *l)
{
	if (l->port_fd >= 0)
		close(l->port_fd);
	l->port_fd = -1;
}

/* One call, JSON in and out.  Returns the HTTP status (0: no answer) and
 * sets *out to the parsed body when it is JSON. */
static long call(struct launch *l, const char *method, const char *path, json_t *body,
                 long timeout_ms, json_t **out)
{
	struct http_response resp;
	struct weir_error err = {0};
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	long status;

	if (out)
		*out = NULL;
	if (http_client_request(l->http, method, path, text, timeout_ms, &resp, &err) < 0) {
		log_debug("%s", err.msg);
		status = 0;
	} else {
		status = resp.status;
		if (out && status == 200)
			*out = json_loadb(resp.body, resp.len, 0, NULL);
		if (status >= 400 && status != 410)
			log_warn("%s %s: %ld: %s", method, path, status,
			         http_response_error_text(&resp));
	}
	http_response_release(&resp);
	free(text);
	return status;
}

static json_t *task_key(const struct launch *l)
{
	return json_pack("{s:I,s:s,s:i,s:i}", "job", (json_int_t)l->job, "role", l->role, "index",
	                 l->index, "attempt", l->attempt);
}

static const char *str_field(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static int64_t int_field(json_t *o, const char *key, int64_t dflt)
{
	json_t *v = json_object_get(o, key);
	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_real(v))
		return (int64_t)json_real_value(v);
	return dflt;
}

static int take_register_answer(struct launch *l, json_t *t)
{
	l->task = t;
	l->framework = str_field(t, "framework");
	l->command = str_field(t, "command");
	l->workdir = str_field(t, "workdir");
	l->cache_dir = str_field(t, "cache_dir");
	l->src_dir = str_field(t, "src_dir");
	l->gpus = str_field(t, "gpus");
	l->memory_mb = (uint64_t)int_field(t, "memory_mb", 0);
	l->vcores = (int)int_field(t, "vcores", 0);
	l->registration_timeout_s = int_field(t, "registration_timeout_s", 300);
	l->execution_timeout_s = int_field(t, "execution_timeout_s", 0);
	l->backend_confines = json_is_false(json_object_get(t, "cgroup"));
	l->launch_error = str_field(t, "launch_error");
	if (task_output_set_mask(&l->out, json_object_get(t, "mask"), l->own_secrets, 2) < 0) {
		log_error("out of memory");
		return -1;
	}
	json_t *g = json_object_get(t, "kill_grace_s");
	const char *env = getenv("WEIR_KILL_GRACE");
	if (json_is_number(g))
		l->kill_grace_ms = (int64_t)(json_number_value(g) * 1000);
	else if (env && *env)
		l->kill_grace_ms = (int64_t)(atof(env) * 1000);
	else
		l->kill_grace_ms = 5000;
	if (l->kill_grace_ms < 0)
		l->kill_grace_ms = 0;
	if (json_is_integer(json_object_get(t, "gpus")))
		l->gpus = NULL; /* a count is not a list of ids; the server sends ids */
	else if (json_is_null(json_object_get(t, "gpus")))
		/* The backend bound the devices (Slurm's srun sets CUDA_VISIBLE_DEVICES
		 * for --gpus-per-task): keep what it set. */
		l->gpus = getenv("CUDA_VISIBLE_DEVICES");
	if (!l->command || !l->workdir || l->workdir[0] != '/') {
		log_error("register answer: expected \"command\" and an absolute \"workdir\"");
		return -1;
	}
	return 0;
}

/* POST register until the server answers; -1 when it refuses (410, 4xx) or
 * stays away too long. */
static int do_register(struct launch *l, bool again)
{
	json_t *body = task_key(l);
	int64_t delay = 100, start = clock_mono_ms();
	int rc = -1;

	json_object_set_new(body, "host", json_string(l->host));
	json_object_set_new(body, "port", json_integer(l->port));
	json_object_set_new(body, "pid", json_integer(getpid()));
	for (;;) {
		json_t *answer = NULL;
		long st = call(l, "POST", "/api/v1/launch/register", body, 30000, &answer);
		if (st == 200) {
			if (again) {
				json_decref(answer);
				rc = 0;
			} else if (!json_is_object(answer)) {
				log_error("register: the answer is not a JSON object");
				json_decref(answer);
			} else {
				rc = take_register_answer(l, answer);
			}
			break;
		}
		json_decref(answer);
		if (st == 410) {
			log_error(
			    "job %lld attempt %d is no longer current (410): not starting %s:%d",
			    l->job, l->attempt, l->role, l->index);
			break;
		}
		if (st >= 400 && st < 500) {
			log_error("register refused (%ld): not starting %s:%d", st, l->role,
			          l->index);
			break;
		}
		if (clock_mono_ms() - start > REGISTER_GIVE_UP_MS) {
			log_error("the server did not answer register for %llds: giving up",
			          (long long)(REGISTER_GIVE_UP_MS / 1000));
			break;
		}
		if (delay == 100)
			log_warn("server unreachable (register): retrying");
		clock_sleep_ms(delay);
		delay = backoff_next(delay, 5000);
	}
	json_decref(body);
	return rc;
}

/* Long-polls the cluster until the gang is complete.  0, -1 (refused:
 * exit 125) or -2 (timeout: exit 124). */
static int wait_for_gang(struct launch *l)
{
	int64_t start = clock_mono_ms();
	int64_t deadline =
	    l->registration_timeout_s > 0 ? start + l->registration_timeout_s * 1000 : INT64_MAX;
	int64_t delay = 100, last_log = 0;
	bool reregister = false;
	char path[512];

	for (;;) {
		int64_t now = clock_mono_ms();
		if (now >= deadline) {
			log_error(
			    "gave up waiting for the gang after %llds (registration timeout): "
			    "not every task of job %lld attempt %d registered",
			    (long long)l->registration_timeout_s, l->job, l->attempt);
			return -2;
		}
		if (reregister) {
			if (do_register(l, true) < 0)
				return -1;
			reregister = false;
		}
		int64_t wait_s = (deadline - now + 999) / 1000;
		if (wait_s > 30)
			wait_s = 30;
		if (wait_s < 1)
			wait_s = 1;
		/* role names are identifiers: nothing to escape */
		snprintf(path, sizeof path,
		         "/api/v1/launch/cluster?job=%lld&attempt=%d&role=%s&index=%d&wait=%lld",
		         l->job, l->attempt, l->role, l->index, (long long)wait_s);
		json_t *answer = NULL;
		long st = call(l, "GET", path, NULL, (wait_s + 15) * 1000, &answer);
		if (st == 200 && json_is_true(json_object_get(answer, "ready"))) {
			json_t *c = json_object_get(answer, "cluster");
			if (!json_is_object(c)) {
				log_error("cluster answer: \"ready\" without a \"cluster\" object");
				json_decref(answer);
				return -1;
			}
			l->cluster = json_incref(c);
			json_decref(answer);
			return 0;
		}
		if (st == 200) {
			now = clock_mono_ms();
			if (now - last_log >= 30000) {
				json_t *n = json_object_get(answer, "registered");
				json_t *m = json_object_get(answer, "total");
				if (json_is_integer(n) && json_is_integer(m))
					log_info("waiting for gang (%lld/%lld registered)",
					         (long long)json_integer_value(n),
					         (long long)json_integer_value(m));
				else
					log_info("waiting for gang (%llds so far)",
					         (long long)((now - start) / 1000));
				last_log = now;
			}
			json_decref(answer);
			delay = 100;
			continue;
		}
		json_decref(answer);
		if (st == 410) {
			log_error("job %lld attempt %d is no longer current (410): not starting",
			          l->job, l->attempt);
			return -1;
		}
		if (st == 401 || st == 403 || st == 400) {
			log_error("cluster request refused (%ld): not starting", st);
			return -1;
		}
		/* No answer, 5xx, or a server that lost us (404/409 after a
		 * restart): register again, which is idempotent, then poll. */
		if (st == 0 && delay == 100)
			log_warn("server unreachable while waiting for the gang: retrying");
		reregister = true;
		int64_t left = deadline - clock_mono_ms();
		clock_sleep_ms(delay < left ? delay : (left > 0 ? left : 0));
		delay = backoff_next(delay, 5000);
	}
}

/* Sends the rest of the log (retrying for up to give_up_ms) before the end
 * is reported, so a reader that sees the task ended sees its whole log. */
static void ship_finish(struct launch *l, int64_t give_up_ms)
{
	if (!l->ship)
		return;
	log_set_tee(NULL, NULL);
	if (!logship_finish(l->ship, give_up_ms))
		log_warn("the task's log could not be sent whole to the server");
	l->ship = NULL;
}

/* The program's output that is in the pipe now (never waits).  The one
 * place a task's output passes through the launcher: task_output masks the
 * task's secrets, then hands the bytes to the shipper or the log file. */
static void drain_output(struct launch *l)
{
	char buf[65536];

	while (l->out_r >= 0) {
		ssize_t n = read(l->out_r, buf, sizeof buf);
		if (n > 0) {
			task_output_write(&l->out, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) { /* every writer is gone */
			task_output_end(&l->out);
			close(l->out_r);
			l->out_r = -1;
		}
		break;
	}
}

/* An event of the shim's task: into its journal, then a line on the
 * agent's pipe saying the journal grew.  The journal comes first, so that
 * an agent restarted in between finds it there.  Not fsync'd, the end
 * neither: the page cache keeps it across the death of any process (the
 * shim, the agent, the server killed with -9), and a power loss can lose
 * the store's last commits too (WAL, synchronous=NORMAL), so the journal
 * is held to the same level (launch/journal.h). */
static int shim_record(struct launch *l, json_t *rec)
{
	const struct launch_shim *sh = l->shim;
	size_t len = 0;
	char *text = journal_line(rec, &len);
	int rc = text ? journal_append_line(sh->journal_fd, text, len) : -1;

	if (rc < 0)
		log_warn("the task's journal: %s", strerror(errno));
	if (sh->notify_fd >= 0) {
		/* "KEY RECORD": the line just journalled, so that the agent need
		 * not read the journal; "KEY" alone when it does not fit.  One
		 * write under PIPE_BUF: lines of many shims never mix; a
		 * restarted agent (EPIPE) reads the journal instead */
		char line[PIPE_BUF];
		size_t klen = strlen(sh->key);
		size_t n = klen + 1;
		memcpy(line, sh->key, klen);
		if (rc == 0 && klen + 1 + len <= sizeof line) {
			line[klen] = ' ';
			memcpy(line + klen + 1, text, len);
			n = klen + 1 + len;
		} else {
			line[klen] = '\n';
		}
		if (write(sh->notify_fd, line, n) < 0)
			log_debug("the agent's pipe: %s", strerror(errno));
	}
	free(text);
	return rc;
}

/* POST exited until an answer comes (up to a day): nothing is lost across
 * a server restart.  A shim given its task by the agent journals it
 * instead: the agent delivers it and keeps it until the server has it. */
static void report_exited(struct launch *l, const struct supervise_outcome *o)
{
	json_t *body = task_key(l);
	int64_t delay = 100, start = clock_mono_ms();
	struct exit_report rep = {
	    .cause = o->cause,
	    .exit_code = o->exit_code,
	    .signal = o->signal,
	    .oom_killed = o->oom_killed,
	    .peak_memory_bytes = (int64_t)o->peak_memory_bytes,
	    .cpu_time_ms = o->cpu_time_ms,
	    .reason = o->reason,
	};

	exit_report_to_json(&rep, body);
	ship_finish(l, REPORT_GIVE_UP_MS);
	if (l->shim && l->shim->task) {
		json_object_set_new(body, "t", json_string("exited"));
		if (shim_record(l, body) == 0 && l->shim->end_journalled)
			*l->shim->end_journalled = true;
		json_decref(body);
		return;
	}
	for (;;) {
		long st = call(l, "POST", "/api/v1/launch/exited", body, 10000, NULL);
		if (st >= 200 && st < 300)
			break;
		if (st == 410) {
			log_info("exited: the attempt is no longer current; nothing to report");
			break;
		}
		if (st >= 400 && st < 500) {
			log_error("exited report refused (%ld); giving up", st);
			break;
		}
		if (clock_mono_ms() - start > REPORT_GIVE_UP_MS) {
			log_error("could not report the exit for a day; giving up");
			break;
		}
		if (delay == 100)
			log_warn("server %s: retrying the exit report until it answers",
			         st ? "unavailable" : "unreachable");
		clock_sleep_ms(delay);
		delay = backoff_next(delay, 10000);
	}
	if (l->shim) {
		json_object_set_new(body, "t", json_string("exited"));
		json_object_set_new(body, "reported", json_true());
		shim_record(l, body);
	}
	json_decref(body);
}

static int post_started(struct launch *l, pid_t pid)
{
	json_t *body = task_key(l);
	json_object_set_new(body, "pid", json_integer(pid));
	if (l->shim && !l->started_retry_ms) {
		json_t *rec =
		    json_pack("{s:s,s:i,s:i}", "t", "started", "pid", (int)pid, "port", l->port);
		shim_record(l, rec);
		json_decref(rec);
		if (l->shim->task) {
			json_decref(body);
			return 0;
		}
	}
	long st = call(l, "POST", "/api/v1/launch/started", body, 2000, NULL);
	json_decref(body);
	/* An answer of any kind settles it; only silence is worth a retry. */
	return st == 0 || st >= 500 ? -1 : 0;
}

/* The program's environment: ours minus what lib/env_scrub.h drops (the
 * token, the launch secret, connections and variables the launcher
 * inherited, secret-looking names: a task gets only the connections it
 * lists, from the contract) and minus what the contract sets, then the
 * contract, then `extra` (taken: malloc'd "NAME=VALUE" entries that
 * replace ours of the same name).  *own: the index of its first entry of
 * the contract's (allocated here); those before it are environ's. */
static char **build_envp(const struct contract *c, char **extra, size_t n_extra, size_t *own)
{
	size_t n = 0, k = 0;
	char **envp;

	while (environ[n])
		n++;
	envp = calloc(n + c->n_env + n_extra + 1, sizeof *envp);
	if (!envp) {
		for (size_t j = 0; j < n_extra; j++)
			free(extra[j]);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		const char *e = environ[i];
		const char *eq = strchr(e, '=');
		size_t nl = eq ? (size_t)(eq - e) : strlen(e);
		if (env_scrub_drops(e))
			continue;
		bool overridden = false;
		for (size_t j = 0; j < c->n_env && !overridden; j++)
			overridden = c->env[j].name[0] == e[0] && !strncmp(c->env[j].name, e, nl) &&
			             c->env[j].name[nl] == '\0';
		for (size_t j = 0; j < n_extra && !overridden; j++)
			overridden = !strncmp(extra[j], e, nl) && extra[j][nl] == '=';
		if (!overridden)
			envp[k++] = (char *)e;
	}
	*own = k;
	for (size_t j = 0; j < c->n_env; j++) {
		size_t len = strlen(c->env[j].name) + strlen(c->env[j].value) + 2;
		char *kv = malloc(len);
		if (!kv)
			continue;
		snprintf(kv, len, "%s=%s", c->env[j].name, c->env[j].value);
		envp[k++] = kv;
	}
	for (size_t j = 0; j < n_extra; j++)
		envp[k++] = extra[j];
	envp[k] = NULL;
	return envp;
}

/* Frees what build_envp() allocated: the contract's entries (from `own`
 * on), not environ's. */
static void free_envp(char **envp, size_t own)
{
	if (!envp)
		return;
	for (size_t i = own; envp[i]; i++)
		free(envp[i]);
	free(envp);
}

static int build_contract(struct launch *l, struct contract *c)
{
	json_t *roles = json_object_get(l->task, "roles");
	struct contract_role *cr = NULL;
	struct weir_error err = {0};
	enum framework fw = FRAMEWORK_NONE;
	size_t n = json_array_size(roles);
	int rc = -1;

	if (l->framework && framework_from_name(l->framework, &fw) < 0) {
		log_error("register answer: unknown framework \"%s\"", l->framework);
		return -1;
	}
	cr = calloc(n ? n : 1, sizeof *cr);
	if (!cr)
		return -1;
	for (size_t i = 0; i < n; i++) {
		json_t *r = json_array_get(roles, i);
		cr[i].name = str_field(r, "name");
		cr[i].instances = (int)int_field(r, "instances", 1);
		cr[i].untracked = json_is_true(json_object_get(r, "untracked"));
		cr[i].sidecar = json_is_true(json_object_get(r, "sidecar"));
		if (!cr[i].name) {
			log_error("register answer: roles[%zu] has no name", i);
			goto out;
		}
	}
	struct contract_input in = {
	    .framework = fw,
	    .roles = cr,
	    .n_roles = n,
	    .cluster = l->cluster,
	    .role = l->role,
	    .index = l->index,
	    .attempt = l->attempt,
	    .job_id = l->job,
	    .gpus = l->gpus,
	    .env = json_object_get(l->task, "env"),
	    .workdir = l->workdir,
	};
	if (contract_build(&in, c, &err) < 0) {
		log_error("%s", err.msg);
		goto out;
	}
	if (c->hostfile && fs_write_file_atomic(c->hostfile_path, c->hostfile, strlen(c->hostfile),
	                                        0644, &err) < 0) {
		log_error("%s", err.msg);
		contract_release(c);
		goto out;
	}
	rc = 0;
out:
	free(cr);
	return rc;
}

/* The program's cgroup, made while the gang is still registering: several
 * launchers making theirs at once after the gang is complete would put the
 * kernel's cgroup work (milliseconds on cgroup v1) between the gang and the
 * last task's start.  Without one, the supervisor polls RSS.  None under a
 * backend that confines the task itself (Slurm's step): joining a nested
 * group would cost the program's start an RCU grace period (docs/internals/launch.md). */
static void prepare_limits(struct launch *l)
{
	struct cgroup_support cs;
	struct weir_error err = {0};
	char line[600], name[256];

	if (l->cg) {
		/* made ahead by the agent, the shim inside already: the program is
		 * born in it, with no move on the way to its start */
		log_info("limits: a cgroup made ahead by the agent");
		if (cgroup_set_limits(l->cg, l->memory_mb, l->vcores, &err) < 0)
			log_warn("%s: the limit is not set", err.msg);
		return;
	}
	if (l->memory_mb == 0 && l->vcores == 0)
		return;
	if (l->backend_confines) {
		log_info("limits: the backend's (its step is the task's cgroup); memory by polling "
		         "RSS");
		return;
	}
	cgroup_detect(&cs);
	log_info("limits: %s", cgroup_describe(&cs, line, sizeof line));
	if (cs.version == CGROUP_NONE)
		return;
	cgroup_task_name(name, sizeof name, l->job, l->attempt, l->role, l->index, getpid());
	l->cg = cgroup_create(&cs, "weir", name, l->memory_mb, l->vcores, &err);
	if (!l->cg)
		log_warn("%s: falling back to polling RSS", err.msg);
}

/* supervise_spec.report_started: POST started; after silence the next try
 * in 200 ms, backing off to 10 s. */
static int64_t report_started(pid_t pid, void *arg)
{
	struct launch *l = arg;

	if (post_started(l, pid) == 0)
		return 0;
	l->started_retry_ms = l->started_retry_ms ? backoff_next(l->started_retry_ms, 10000) : 200;
	return l->started_retry_ms;
}

/* supervise_spec.drain_log */
static bool drain_log(void *arg)
{
	struct launch *l = arg;

	drain_output(l);
	return l->out_r >= 0;
}

/* Runs the user program under the contract's environment (supervise.h);
 * fills `o`.  0, or -1 when it could not be started. */
static int run_program(struct launch *l, const struct contract *c, struct supervise_outcome *o)
{
	size_t own = 0, n_warm = 0;
	char *warm[4];
	int rc;

	/* an Airflow Python task may start from its file's warm interpreter
	 * (launch/airflow_warm.h) where its limits hold the same */
	if (airflow_warm_env(l->shim ? l->shim->airflow_warm_bin : NULL,
	                     l->shim ? l->shim->airflow_warm_dir : NULL, l->cg, l->memory_mb, warm,
	                     &n_warm) < 0)
		n_warm = 0;
	/* a task's user writes its own pid to the group's cgroup.procs (cgroup
	 * v1 lets it; elsewhere the write fails and the task runs cold) */
	if (n_warm > 1 && l->cg && l->run_as.set)
		cgroup_give_procs(l->cg, l->run_as.uid, l->run_as.gid);
	char **envp = build_envp(c, warm, n_warm, &own);

	if (!envp) {
		log_error("out of memory");
		return -1;
	}
	struct supervise_spec spec = {
	    .command = l->command,
	    .workdir = l->workdir,
	    .envp = envp,
	    .run_as = &l->run_as,
	    .cg = l->cg,
	    .cg_joined = l->shim && l->shim->cg,
	    /* the journal takes the report at once: the cgroup is swept after
	     * it (launch_run), not over HTTP, whose report may take retries */
	    .sweep_after = l->shim && l->shim->task && !l->log_to_server,
	    .memory_mb = l->memory_mb,
	    .execution_timeout_s = l->execution_timeout_s,
	    .kill_grace_ms = l->kill_grace_ms,
	    .log_w = &l->out_w,
	    .log_r = l->out_r,
	    .drain_log = drain_log,
	    .report_started = report_started,
	    .arg = l,
	};
	release_port(l); /* the program may bind the port now */
	rc = supervise_run(&spec, o);
	free_envp(envp, own);
	return rc;
}

/* A decimal integer >= min; leading white space is allowed (as strtoll
 * reads it). */
static int parse_int(const char *s, int64_t min, int64_t *out)
{
	while (s && isspace((unsigned char)*s))
		s++;
	return str_to_int64(s, min, INT64_MAX, out);
}

static int usage(const char *why)
{
	log_error("%s", why);
	fprintf(stderr, "usage: weir launch --job ID --role ROLE --index I --attempt A "
	                "[--host ADDR|auto] [--log-to-server]\n"
	                "       weir launch --job ID --tasks ROLE:I[-J],... --attempt A ... "
	                "(the task is SLURM_PROCID's entry)\n"
	                "       (env: WEIR_SERVER, WEIR_LAUNCH_SECRET)\n");
	return EXIT_USAGE;
}

int launch_pick_task(const char *list, long procid, char *role, size_t role_size, int *index)
{
	const char *p = list;
	long k = 0;

	if (procid < 0)
		return -1;
	while (*p) {
		const char *colon = strchr(p, ':');
		char *end;
		if (!colon || colon == p || (size_t)(colon - p) >= role_size)
			return -1;
		long a = strtol(colon + 1, &end, 10), b = a;
		if (end == colon + 1 || a < 0)
			return -1;
		if (*end == '-') {
			const char *s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a)
				return -1;
		}
		if (*end != ',' && *end != '\0')
			return -1;
		if (procid < k + (b - a + 1)) {
			snprintf(role, role_size, "%.*s", (int)(colon - p), p);
			*index = (int)(a + (procid - k));
			return 0;
		}
		k += b - a + 1;
		p = *end ? end + 1 : end;
	}
	return -1;
}

static int parse_args(struct launch *l, int argc, char **argv)
{
	int64_t v;
	bool have_job = false, have_index = false, have_attempt = false;
	const char *tasks = NULL;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			printf("usage: weir launch --job ID --role ROLE --index I --attempt A "
			       "[--host ADDR|auto] [--log-to-server]\n");
			return 1;
		}
		if (!strcmp(a, "--log-to-server")) {
			l->log_to_server = true;
			continue;
		}
		if (!val) {
			usage("an option is missing its value");
			return -1;
		}
		i++;
		if (!strcmp(a, "--job") && parse_int(val, 1, &v) == 0) {
			l->job = v;
			have_job = true;
		} else if (!strcmp(a, "--index") && parse_int(val, 0, &v) == 0 && v < 1000000) {
			l->index = (int)v;
			have_index = true;
		} else if (!strcmp(a, "--attempt") && parse_int(val, 0, &v) == 0 && v < 1000000) {
			l->attempt = (int)v;
			have_attempt = true;
		} else if (!strcmp(a, "--role") && *val) {
			l->role = val;
		} else if (!strcmp(a, "--tasks") && *val) {
			tasks = val;
		} else if (!strcmp(a, "--host") && *val) {
			l->host = val;
		} else {
			char msg[256];
			snprintf(msg, sizeof msg, "%s %s: unknown option or bad value", a, val);
			usage(msg);
			return -1;
		}
	}
	if (tasks) {
		/* one srun step of many tasks: this one is SLURM_PROCID's entry */
		const char *pid_s = getenv("SLURM_PROCID");
		char *end = NULL;
		long procid = pid_s && *pid_s ? strtol(pid_s, &end, 10) : -1;
		if (!end || *end ||
		    launch_pick_task(tasks, procid, l->picked_role, sizeof l->picked_role,
		                     &l->index) < 0) {
			char msg[300];
			snprintf(msg, sizeof msg,
			         "--tasks %.200s: no entry for SLURM_PROCID %s (expected "
			         "ROLE:I[-J],... and SLURM_PROCID set)",
			         tasks, pid_s ? pid_s : "(unset)");
			usage(msg);
			return -1;
		}
		l->role = l->picked_role;
		have_index = true;
	}
	if (!have_job || !l->role || !have_index || !have_attempt) {
		usage("--job, --role (or --tasks), --index and --attempt are required");
		return -1;
	}
	return 0;
}

/* `pattern` with each "%n" replaced by this node's name (Slurm's
 * SLURMD_NODENAME, else the host name).  NULL when it has no %n. */
static char *node_cache_dir(const char *pattern)
{
	const char *node = getenv("SLURMD_NODENAME");
	char host[256];
	struct strbuf out = STRBUF_INIT;

	if (!strstr(pattern, "%n"))
		return NULL;
	if (!node || !*node) {
		if (gethostname(host, sizeof host) < 0)
			snprintf(host, sizeof host, "node");
		host[sizeof host - 1] = '\0';
		node = host;
	}
	for (const char *p = pattern; *p; p++) {
		if (p[0] == '%' && p[1] == 'n') {
			strbuf_addstr(&out, node);
			p++;
		} else {
			strbuf_addch(&out, *p);
		}
	}
	return strbuf_detach(&out, NULL);
}

/* The task of a shim given its register answer: the gang's cluster when
 * the server registered a gang of several (the answer's "cluster"), else
 * the gang of one it is: this host, its own port. */
static int shim_cluster(struct launch *l)
{
	char addr[300];
	json_t *c = json_object_get(l->task, "cluster");

	if (json_is_object(c)) {
		l->cluster = json_incref(c);
		return 0;
	}
	snprintf(addr, sizeof addr, "%s:%d", l->host, l->port);
	l->cluster = json_pack("{s:[s]}", l->role, addr);
	return l->cluster ? 0 : -1;
}

/* Everything after the arguments: the protocol (or the shim's journal),
 * the working directory, limits, the gang, the contract, the program, the
 * report.  Returns the exit status. */
static int launch_run(struct launch *l, const char *server, const char *secret)
{
	struct contract c;
	struct supervise_outcome o;
	struct weir_error err = {0};
	int code = EXIT_LAUNCH_FAILED, g;
	char *node_cache = NULL;

	memset(&c, 0, sizeof c);
	memset(&o, 0, sizeof o);
	if (server && *server) {
		l->http = http_client_create(server, secret);
		/* an https server: verified with the file it names (docs/security.md) */
		if (l->http &&
		    http_client_set_tls(l->http, &tls_http_ops, getenv("WEIR_CA_FILE")) < 0) {
			http_client_destroy(l->http);
			l->http = NULL;
		}
		if (!l->http) {
			log_error("out of memory");
			return EXIT_LAUNCH_FAILED;
		}
	} else if (!l->shim || !l->shim->task || l->log_to_server) {
		return usage("WEIR_SERVER is not set (the server's base URL)");
	}
	if (l->log_to_server) {
		int p[2];
		l->ship = logship_create(server, secret, l->job, l->role, l->index, l->attempt);
		if (!l->ship || pipe2(p, O_CLOEXEC) < 0) {
			log_error("cannot set up the log's pipe to the server: %s",
			          strerror(errno));
			goto out;
		}
		l->out_r = p[0];
		l->out_w = p[1];
		fcntl(l->out_r, F_SETFL, O_NONBLOCK);
		log_set_tee(logship_tee, l->ship);
		l->out.ship = l->ship;
	}
	if (!strcmp(l->host, "auto")) {
		/* in the launcher rather than `hostname -I` in the batch script: one
		 * process fewer per task before it can register */
		if (launch_first_address(l->host_buf, sizeof l->host_buf) < 0)
			snprintf(l->host_buf, sizeof l->host_buf, "127.0.0.1");
		l->host = l->host_buf;
	}
	/* a gang's task registered by the server: the port it picked, held
	 * from here on (the others' answers name it) */
	if (l->shim && l->shim->task) {
		json_int_t p = int_field(l->shim->task, "port", 0);
		if (p > 0 && p < 65536)
			l->port = (int)p;
	}
	if (reserve_port(l) < 0)
		goto out;
	if (l->shim && l->shim->task) {
		/* the server registered the task when it started it */
		if (take_register_answer(l, json_incref(l->shim->task)) < 0)
			goto out;
	} else if (do_register(l, false) < 0) {
		goto out;
	}
	if (l->launch_error) {
		weir_error_set(&err, WEIR_E_INVALID, "%s", l->launch_error);
		goto failed;
	}
	if (task_output_needs_pipe(&l->out) && l->out_r < 0) {
		/* secrets to mask: the output comes through us to the file */
		int p[2];
		if (pipe2(p, O_CLOEXEC) < 0) {
			weir_error_set(&err, WEIR_E_INTERNAL, "pipe: %s", strerror(errno));
			goto failed;
		}
		l->out_r = p[0];
		l->out_w = p[1];
		fcntl(l->out_r, F_SETFL, O_NONBLOCK);
	}
	/* a work folder the spare put in place is there: with nothing to link
	 * into it, no mkdir to find it so */
	if ((!l->shim || !l->shim->workdir_placed || (l->src_dir && *l->src_dir)) &&
	    workdir_prepare(l->workdir, l->src_dir, NULL, 0, NULL, &err) < 0)
		goto failed;
	json_t *arts = json_object_get(l->task, "artifacts");
	/* a cache per node (Slurm with a shared_dir): "%n" is this node's name */
	node_cache = l->cache_dir ? node_cache_dir(l->cache_dir) : NULL;
	for (size_t i = 0; i < json_array_size(arts); i++) {
		json_t *a = json_array_get(arts, i);
		struct artifact art = {
		    .path = (char *)str_field(a, "path"),
		    .name = (char *)str_field(a, "name"),
		    .archive = json_is_true(json_object_get(a, "archive")),
		};
		if (!art.path) {
			weir_error_set(&err, WEIR_E_INVALID, "artifacts[%zu]: no path", i);
			goto failed;
		}
		if (workdir_prepare(l->workdir, NULL, &art, 1,
		                    node_cache ? node_cache : l->cache_dir, &err) < 0)
			goto failed;
	}
	if (run_as_parse(getenv(RUN_AS_ENV), &l->run_as) < 0) {
		weir_error_set(&err, WEIR_E_INVALID, "%s: expected UID:GID:GROUPS, got \"%.100s\"",
		               RUN_AS_ENV, getenv(RUN_AS_ENV));
		goto failed;
	}
	if (workdir_give(l->workdir, &l->run_as, &err) < 0)
		goto failed;
	prepare_limits(l);
	g = l->shim && l->shim->task ? shim_cluster(l) : wait_for_gang(l);
	if (g == -2) {
		o.exit_code = code = EXIT_GANG_TIMEOUT;
		o.cause = END_CAUSE_GANG_TIMEOUT;
		snprintf(o.reason, sizeof o.reason, "gang registration timeout after %llds",
		         (long long)l->registration_timeout_s);
		report_exited(l, &o);
		goto out;
	}
	if (g < 0)
		goto out;
	if (build_contract(l, &c) < 0) {
		weir_error_set(&err, WEIR_E_INVALID, "cannot build the framework environment");
		goto failed;
	}
	if (run_program(l, &c, &o) < 0) {
		weir_error_set(&err, WEIR_E_INTERNAL, "cannot run the program");
		goto failed;
	}
	report_exited(l, &o);
	/* what was moved into the group, after the report (supervise.h) */
	if (o.sweep_left)
		cgroup_kill_all(l->cg);
	code = o.exit_code;
	goto out;
failed:
	log_error("%s", err.msg);
	o.exit_code = code = EXIT_LAUNCH_FAILED;
	o.cause = END_CAUSE_LAUNCH_FAILED;
	snprintf(o.reason, sizeof o.reason, "launch failed: %s", err.msg);
	report_exited(l, &o);
out:
	/* a launch that ends before any report: its lines may still help */
	ship_finish(l, 30000);
	if (l->out_r >= 0)
		close(l->out_r);
	if (l->out_w >= 0)
		close(l->out_w);
	free(node_cache);
	task_output_release(&l->out);
	/* a group made ahead is the pool's (launch/agent_pool.h): the shim's
	 * caller resets it for the next task, or the agent removes it */
	if (!(l->shim && l->shim->cg))
		cgroup_destroy(l->cg);
	contract_release(&c);
	release_port(l);
	json_decref(l->cluster);
	json_decref(l->task);
	http_client_destroy(l->http);
	return code;
}

static void launch_init(struct launch *l)
{
	memset(l, 0, sizeof *l);
	l->port_fd = -1;
	l->out_r = l->out_w = -1;
	l->out.fd = STDOUT_FILENO;
	l->host = "127.0.0.1";
}

/* The variable `name`'s value (WEIR_LAUNCH_SECRET, WEIR_MASK_TOKEN),
 * copied, then wiped where the kernel shows it, before the program can
 * look: a process's /proc/PID/environ reads the block it was started with,
 * which unsetenv leaves as it was.  NULL when not set (or out of memory). */
static char *take_env_secret(const char *name)
{
	char *v = getenv(name);
	char *copy = v ? strdup(v) : NULL;

	if (v) {
		memset(v, 'x', strlen(v));
		unsetenv(name);
	}
	return copy;
}

int launch_main(int argc, char **argv)
{
	struct launch l;
	char *secret, *token;
	int g, rc;

	launch_init(&l);
	log_set_program("weir launch");
	g = parse_args(&l, argc, argv);
	if (g != 0)
		return g > 0 ? 0 : EXIT_USAGE;
	secret = take_env_secret("WEIR_LAUNCH_SECRET");
	token = take_env_secret("WEIR_MASK_TOKEN");
	l.own_secrets[0] = secret;
	l.own_secrets[1] = token;
	rc = launch_run(&l, getenv("WEIR_SERVER"), secret);
	free(secret);
	free(token);
	return rc;
}

int launch_shim_run(const struct launch_shim *sh)
{
	struct launch l;
	json_t *rec;
	struct proc_stat ps;
	uint64_t start = sh->start_ticks;

	launch_init(&l);
	log_set_program("weir launch");
	l.shim = sh;
	l.job = sh->job;
	l.role = sh->role;
	l.index = sh->index;
	l.attempt = sh->attempt;
	l.log_to_server = sh->log_to_server;
	l.cg = sh->cg;
	/* who runs this task, before anything of it runs */
	pid_t self = sh->pid > 0 ? sh->pid : getpid();
	if (!start && proc_read_stat((int)self, &ps) == 0)
		start = ps.start_ticks;
	rec = json_pack("{s:s,s:i,s:I,s:s?,s:I}", "t", "shim", "pid", (int)self, "start",
	                (json_int_t)start, "group", sh->group, "nonce", (json_int_t)sh->nonce);
	if (!rec || journal_append(sh->journal_fd, rec) < 0) {
		log_error("the task's journal: %s", strerror(errno));
		json_decref(rec);
		return EXIT_LAUNCH_FAILED;
	}
	json_decref(rec);
	l.own_secrets[0] = sh->secret;
	l.own_secrets[1] = sh->token;
	return launch_run(&l, getenv("WEIR_SERVER"), sh->secret);
}
