/* airflow_warm.c: the client of an Airflow DAG file's warm interpreter and
 * the launcher's part in it (airflow_warm.h, docs/internals/airflow_warm.md). */
#include "launch/airflow_warm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/usock.h"

extern char **environ;

/* How long the client waits for its task's start ('S' or 'C') before it
 * gives up on the zygote and runs the task cold. */
#define START_WAIT_MS 10000

struct record {
	char kind;
	char pad[3];
	int32_t value;
};

void airflow_warm_socket_name(const char *key_text, char *buf, size_t size)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (const unsigned char *p = (const unsigned char *)key_text; *p; p++) {
		h ^= *p;
		h *= 0x100000001b3ull;
	}
	snprintf(buf, size, "%016llx.sock", (unsigned long long)h);
}

int airflow_warm_env(const char *bin, const char *dir, const struct cgroup *cg, uint64_t memory_mb,
                     char *out[4], size_t *n)
{
	char paths[1100];

	*n = 0;
	out[0] = NULL;
	if (!bin || !dir) {
		/* one the launcher inherited is not this binary's: masked */
		if (!getenv("WEIR_AIRFLOW_WARM"))
			return 0;
		out[(*n)++] = strdup("WEIR_AIRFLOW_WARM=");
	} else if (memory_mb && !cg) {
		out[(*n)++] = strdup("WEIR_AIRFLOW_WARM=");
	} else {
		if (asprintf(&out[*n], "WEIR_AIRFLOW_WARM=%s", bin) < 0)
			goto oom;
		(*n)++;
		if (asprintf(&out[*n], "WEIR_AIRFLOW_WARM_DIR=%s", dir) < 0)
			goto oom;
		(*n)++;
		if (cg) {
			if (cgroup_procs_paths(cg, paths, sizeof paths) < 0) {
				/* a group it cannot name to the zygote: cold */
				free(out[0]);
				free(out[1]);
				out[0] = strdup("WEIR_AIRFLOW_WARM=");
				*n = 1;
			} else {
				if (asprintf(&out[*n], "WEIR_AIRFLOW_WARM_CGROUP=%s", paths) < 0)
					goto oom;
				(*n)++;
			}
		}
	}
	out[*n] = NULL;
	if (*n && !out[0])
		goto oom;
	return 0;
oom:
	for (size_t i = 0; i < *n; i++)
		free(out[i]);
	*n = 0;
	out[0] = NULL;
	return -1;
}

/* Connects to DIR/NAME: the descriptor when something of our uid listens
 * there, else -1. */
static int connect_ours(const char *dir, const char *name)
{
	struct ucred cred;
	socklen_t len = sizeof cred;
	struct weir_error err = {0};
	int fd = usock_connect(dir, name, &err);

	if (fd < 0)
		return -1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != getuid()) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The file's zygote, else the root (which makes it), connected and of our
 * uid; -1 when there is none to use.  name: the zygote's socket, the
 * request's fourth argument. */
static int connect_zygote(char **cmd, char name[32])
{
	const char *dir = getenv("WEIR_AIRFLOW_WARM_DIR");
	char key[4200], root[40];
	struct stat st;
	int fd, n;

	if (!dir || !*dir || cmd[3][0] != '/' || stat(cmd[3], &st) < 0)
		return -1;
	n = snprintf(key, sizeof key, "%s\n%llu\n%lld\n%lld\n%lld\n%u\n%s", cmd[3],
	             (unsigned long long)st.st_ino, (long long)st.st_size,
	             (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
	             (long long)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec,
	             (unsigned)getuid(), cmd[0]);
	if (n < 0 || (size_t)n >= sizeof key)
		return -1;
	airflow_warm_socket_name(key, name, 32);
	fd = connect_ours(dir, name);
	if (fd >= 0)
		return fd;
	n = snprintf(key, sizeof key, "%u\n%s", (unsigned)getuid(), cmd[0]);
	if (n < 0 || (size_t)n >= sizeof key)
		return -1;
	memcpy(root, "any-", 4);
	airflow_warm_socket_name(key, root + 4, sizeof root - 4);
	return connect_ours(dir, root);
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Sends the request: header and fds, then the strings (FILE DAG TASK NAME
 * and the environment).  0 or -1. */
static int send_request(int fd, char **cmd, const char *name)
{
	uint32_t hdr[4];
	size_t len = 0, off = 0;
	char *body;
	int fds[4], rc = -1;
	mode_t mask = umask(022);

	umask(mask);
	for (int i = 3; i < 6; i++)
		len += strlen(cmd[i]) + 1;
	len += strlen(name) + 1;
	for (char **e = environ; *e; e++)
		len += strlen(*e) + 1;
	if (len > UINT32_MAX / 2 || !(body = malloc(len ? len : 1)))
		return -1;
	for (int i = 3; i < 6; i++) {
		size_t l = strlen(cmd[i]) + 1;
		memcpy(body + off, cmd[i], l);
		off += l;
	}
	memcpy(body + off, name, strlen(name) + 1);
	off += strlen(name) + 1;
	for (char **e = environ; *e; e++) {
		size_t l = strlen(*e) + 1;
		memcpy(body + off, *e, l);
		off += l;
	}
	hdr[0] = AIRFLOW_WARM_MAGIC;
	hdr[1] = (uint32_t)len;
	hdr[2] = 4;
	hdr[3] = (uint32_t)mask;
	fds[0] = 0;
	fds[1] = 1;
	fds[2] = 2;
	fds[3] = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fds[3] < 0)
		goto out;
	union {
		char buf[CMSG_SPACE(sizeof fds)];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = hdr, .iov_len = sizeof hdr};
	struct msghdr msg = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	memset(u.buf, 0, sizeof u.buf);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof fds);
	memcpy(CMSG_DATA(c), fds, sizeof fds);
	ssize_t w;
	do
		w = sendmsg(fd, &msg, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		goto out;
	if ((size_t)w < sizeof hdr && write_all(fd, (char *)hdr + w, sizeof hdr - (size_t)w) < 0)
		goto out;
	rc = write_all(fd, body, len);
out:
	if (fds[3] >= 0)
		close(fds[3]);
	free(body);
	return rc;
}

/* Reads one record; 1 read, 0 the end, -1 an error or (timeout_ms >= 0) no
 * record in time. */
static int read_record(int fd, struct record *r, int timeout_ms)
{
	size_t got = 0;

	while (got < sizeof *r) {
		if (timeout_ms >= 0) {
			struct pollfd p = {.fd = fd, .events = POLLIN};
			int n = poll(&p, 1, timeout_ms);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return -1;
		}
		ssize_t n = read(fd, (char *)r + got, sizeof *r - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return got ? -1 : 0;
		got += (size_t)n;
	}
	return 1;
}

/* Ends this process as the task's ended: its exit code, or its signal. */
static void end_as(const struct record *r, const sigset_t *mask)
{
	if (r->kind == 'E')
		_exit(r->value & 0xff);
	signal(r->value, SIG_DFL);
	sigprocmask(SIG_UNBLOCK, mask, NULL);
	raise(r->value);
	_exit(128 + (r->value & 0x7f));
}

/* After 'S': relays our signals as 'G' records until the task's end. */
static void relay(int fd, const sigset_t *mask)
{
	int sfd = signalfd(-1, mask, SFD_CLOEXEC);
	struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
	struct record r;

	for (;;) {
		if (poll(p, sfd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (sfd >= 0 && (p[1].revents & POLLIN)) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
				struct record g = {.kind = 'G', .value = (int32_t)si.ssi_signo};
				if (write_all(fd, (const char *)&g, sizeof g) < 0)
					break;
			}
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			int n = read_record(fd, &r, -1);
			if (n == 1 && (r.kind == 'E' || r.kind == 'K'))
				end_as(&r, mask);
			if (n != 1)
				break;
		}
	}
	fprintf(stderr, "weir: the Airflow warm interpreter went away while the task ran\n");
	_exit(1);
}

int airflow_warm_main(int argc, char **argv)
{
	char **cmd = argv + 1;
	sigset_t mask, old;
	struct record r;
	char name[32];
	int fd = -1, n;

	if (argc < 2) {
		fprintf(stderr, "usage: weir-launch airflow-warm PYTHON -m _weir_airflow.run_task "
		                "FILE DAG_ID TASK_ID\n");
		return 2;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGUSR2);
	sigprocmask(SIG_BLOCK, &mask, &old);
	if (argc == 7 && !strcmp(cmd[1], "-m") && !strcmp(cmd[2], "_weir_airflow.run_task"))
		fd = connect_zygote(cmd, name);
	if (fd >= 0 && send_request(fd, cmd, name) == 0) {
		n = read_record(fd, &r, START_WAIT_MS);
		if (n < 0) {
			/* a task that began after all is seen here; any later 'S'
			 * finds our end shut and its task does not begin */
			shutdown(fd, SHUT_RD);
			n = read_record(fd, &r, 0);
		}
		if (n == 1 && r.kind == 'S')
			relay(fd, &mask);
	}
	if (fd >= 0)
		close(fd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	execvp(cmd[0], cmd);
	fprintf(stderr, "weir: %s: %s\n", cmd[0], strerror(errno));
	return 127;
}
