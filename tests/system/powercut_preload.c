/* powercut_preload.c: the power cut of tests/unit/powercut_disk.h under a
 * whole weir server, as a library the test preloads (LD_PRELOAD) into it:
 * no hook in weir.  It takes over the C library's calls SQLite's unix VFS
 * makes (open64, pwrite64, fdatasync, fsync, ftruncate64, close, unlink)
 * and follows the files named weir.db, weir.db-wal and weir.db-journal: so
 * it sees the writes wal_batch.c makes, below it, as the disk would.  At the
 * WEIR_POWERCUT_AT-th write, truncation or sync of those files the disk
 * keeps what WEIR_POWERCUT_MODE says (enum pc_mode), drawn with
 * WEIR_POWERCUT_SEED, and the process dies at once (SIGKILL): nothing after
 * the cut reaches the files.
 *
 * WEIR_POWERCUT_AFTER_ACK=N cuts instead right after the Nth
 * acknowledgement the server wrote to its node's agent ({"t":"ack",...}
 * through write or writev): the agent has it, and forgets the results it
 * names, when the disk loses what was not synced.
 *
 * The library takes LD_PRELOAD out of the environment as it loads, so that
 * the processes the server starts (the agent, the tasks) run without it.
 *
 * Built by tests/system/test_power_cut.py:
 *   cc -shared -fPIC -Itests/unit -o powercut.so powercut_preload.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "powercut_disk.h"

#define FDS 4096

static int (*real_open64)(const char *, int, ...);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off_t);
static int (*real_fdatasync)(int);
static int (*real_fsync)(int);
static int (*real_ftruncate64)(int, off_t);
static int (*real_close)(int);
static int (*real_unlink)(const char *);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static uint64_t cut_after_ack, acks; /* WEIR_POWERCUT_AFTER_ACK; acks seen */

static struct pc_node *fd_node[FDS];

/* weir.db, weir.db-wal or weir.db-journal: 1 (2 for the WAL); else 0 */
static int followed(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (!strcmp(base, "weir.db") || !strcmp(base, "weir.db-journal"))
		return 1;
	return !strcmp(base, "weir.db-wal") ? 2 : 0;
}

static uint64_t env_u64(const char *name)
{
	const char *v = getenv(name);
	return v ? strtoull(v, NULL, 10) : 0;
}

__attribute__((constructor)) static void powercut_load(void)
{
	real_open64 = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open64");
	real_pwrite64 = (ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite64");
	real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	real_ftruncate64 = (int (*)(int, off_t))dlsym(RTLD_NEXT, "ftruncate64");
	real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	real_unlink = (int (*)(const char *))dlsym(RTLD_NEXT, "unlink");
	real_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	real_writev = (ssize_t(*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
	cut_after_ack = env_u64("WEIR_POWERCUT_AFTER_ACK");
	pc_arm(env_u64("WEIR_POWERCUT_AT"),
	       (enum pc_mode)(env_u64("WEIR_POWERCUT_MODE") % PC_MODES),
	       env_u64("WEIR_POWERCUT_SEED"));
	unsetenv("LD_PRELOAD");
}

/* An event of a followed file: false never comes back (the power is off). */
static void event(void)
{
	if (!pc_event())
		raise(SIGKILL);
}

int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;
	int fd, f;
	va_list ap;

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	fd = real_open64(path, flags, mode);
	if (fd >= 0 && fd < FDS && (f = followed(path)))
		fd_node[fd] = pc_node_of(path, f == 2);
	return fd;
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	struct pc_node *node = fd >= 0 && fd < FDS ? fd_node[fd] : NULL;
	ssize_t w;

	if (node)
		event();
	w = real_pwrite64(fd, buf, n, off);
	if (node && w > 0)
		pc_op_add(node, false, off, buf, (size_t)w);
	return w;
}

static int synced(int fd, int (*real)(int))
{
	struct pc_node *node = fd >= 0 && fd < FDS ? fd_node[fd] : NULL;
	int rc;

	if (node)
		event();
	rc = real(fd);
	if (node && rc == 0)
		pc_synced(node);
	return rc;
}

int fdatasync(int fd)
{
	return synced(fd, real_fdatasync);
}

int fsync(int fd)
{
	return synced(fd, real_fsync);
}

int ftruncate64(int fd, off_t size)
{
	struct pc_node *node = fd >= 0 && fd < FDS ? fd_node[fd] : NULL;
	int rc;

	if (node)
		event();
	rc = real_ftruncate64(fd, size);
	if (node && rc == 0)
		pc_op_add(node, true, size, NULL, 0);
	return rc;
}

int close(int fd)
{
	if (fd >= 0 && fd < FDS)
		fd_node[fd] = NULL;
	return real_close(fd);
}

int unlink(const char *path)
{
	if (followed(path))
		pc_node_forget(path);
	return real_unlink(path);
}

/* A write that carried an acknowledgement to the agent: the Nth cuts. */
static void written(const void *buf, size_t n)
{
	static const char ack[] = "{\"t\":\"ack\"";

	if (cut_after_ack && memmem(buf, n, ack, sizeof ack - 1) && ++acks == cut_after_ack) {
		pc_cut();
		raise(SIGKILL);
	}
}

ssize_t write(int fd, const void *buf, size_t n)
{
	ssize_t w = real_write(fd, buf, n);

	if (w > 0)
		written(buf, (size_t)w);
	return w;
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	ssize_t w = real_writev(fd, iov, cnt);
	size_t left = w > 0 ? (size_t)w : 0;

	for (int i = 0; left > 0 && i < cnt; i++) {
		size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;
		written(iov[i].iov_base, n);
		left -= n;
	}
	return w;
}
