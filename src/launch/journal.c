/* journal.c: a task's journal, appended and read, and the folder the
 * journals live in (journal.h). */
#include "launch/journal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "exec/agent_proto.h"
#include "lib/fs.h"
#include "lib/json_line.h"

int journal_key(char *buf, size_t size, long long job, const char *role, int index, int attempt)
{
	int rc = agent_proto_task_key(buf, size, job, role, index, attempt);
	return rc == 0 && !strchr(role, '.') && !strchr(role, '/') ? 0 : -1;
}

int journal_key_parse(const char *key, long long *job, char *role_buf, size_t role_size, int *index,
                      int *attempt)
{
	const char *d1 = strchr(key, '.'), *d3 = strrchr(key, '.'), *d2;
	char *end;

	if (!d1 || d3 == d1)
		return -1;
	for (d2 = d3 - 1; d2 > d1 && *d2 != '.'; d2--)
		;
	if (d2 == d1 || d2 - d1 - 1 <= 0 || (size_t)(d2 - d1 - 1) >= role_size)
		return -1;
	*job = strtoll(key, &end, 10);
	if (end != d1 || *job < 1)
		return -1;
	*index = (int)strtol(d2 + 1, &end, 10);
	if (end != d3 || *index < 0)
		return -1;
	*attempt = (int)strtol(d3 + 1, &end, 10);
	if (*end || *attempt < 1)
		return -1;
	snprintf(role_buf, role_size, "%.*s", (int)(d2 - d1 - 1), d1 + 1);
	return 0;
}

static int journal_path(char *buf, size_t size, const char *dir, const char *key)
{
	int n = snprintf(buf, size, "%s/%s.journal", dir, key);
	return n > 0 && (size_t)n < size ? 0 : -1;
}

int journal_open(const char *dir, const char *key)
{
	char path[4096];

	if (journal_path(path, sizeof path, dir, key) < 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
}

char *journal_line(json_t *rec, size_t *len)
{
	char *text = json_dumps(rec, JSON_COMPACT);

	if (!text)
		return NULL;
	*len = strlen(text);
	text[(*len)++] = '\n'; /* json_dumps' NUL becomes the line's end */
	return text;
}

int journal_append_line(int fd, const char *line, size_t len)
{
	ssize_t n;

	do
		n = write(fd, line, len);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : -1;
}

int journal_append(int fd, json_t *rec)
{
	size_t len;
	char *text = journal_line(rec, &len);
	int rc = text ? journal_append_line(fd, text, len) : -1;

	free(text);
	return rc;
}

void journal_state_add(struct journal_state *out, const char *line)
{
	json_t *r = json_line_loads(line);
	const char *t = json_string_value(json_object_get(r, "t"));

	if (!t) {
		json_decref(r);
		return;
	}
	if (!strcmp(t, "shim")) {
		out->shim_pid = (int)json_integer_value(json_object_get(r, "pid"));
		out->shim_start = (uint64_t)json_integer_value(json_object_get(r, "start"));
		const char *g = json_string_value(json_object_get(r, "group"));
		snprintf(out->group, sizeof out->group, "%s", g && !strchr(g, '/') ? g : "");
		out->nonce = (long long)json_integer_value(json_object_get(r, "nonce"));
	} else if (!strcmp(t, "started")) {
		out->started = true;
		out->pid = (int)json_integer_value(json_object_get(r, "pid"));
		out->port = (int)json_integer_value(json_object_get(r, "port"));
	} else if (!strcmp(t, "exited") && !out->exited) {
		out->reported = json_is_true(json_object_get(r, "reported"));
		json_object_del(r, "t");
		json_object_del(r, "reported");
		out->exited = json_incref(r);
	}
	json_decref(r);
}

int journal_read(const char *dir, const char *key, struct journal_state *out)
{
	char path[4096];
	char *text, *line, *next;
	size_t len;

	memset(out, 0, sizeof *out);
	if (journal_path(path, sizeof path, dir, key) < 0)
		return -1;
	text = fs_read_file(path, &len, NULL);
	if (!text)
		return -1;
	for (line = text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (!next)
			break; /* torn: the writer died mid-line */
		*next++ = '\0';
		journal_state_add(out, line);
	}
	free(text);
	return 0;
}

void journal_state_release(struct journal_state *st)
{
	json_decref(st->exited);
	st->exited = NULL;
}

int journal_is_blank(const char *dir, const char *key)
{
	char path[4096];
	struct stat sb;

	if (journal_path(path, sizeof path, dir, key) < 0)
		return -1;
	if (stat(path, &sb) < 0)
		return errno == ENOENT ? 1 : -1;
	return sb.st_size == 0;
}

void journal_remove(const char *dir, const char *key)
{
	char path[4096];

	if (journal_path(path, sizeof path, dir, key) == 0)
		unlink(path);
}

/* ---- where the journals live ---- */

/* FNV-1a, 64 bits: a short stable name for a home's path. */
static uint64_t path_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* Whether dir holds a file named *.journal. */
static bool holds_journals(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool any = false;

	if (!d)
		return false;
	while (!any && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		any = n > 8 && !strcmp(de->d_name + n - 8, ".journal");
	}
	closedir(d);
	return any;
}

/* base/weir-UID-HASH made or found, and only if it is ours alone: a
 * directory (not a link) owned by this user, mode 0700, on a file system
 * kept in memory.  Allocated, or NULL. */
static char *memory_dir(const char *base, const char *home)
{
	char real[PATH_MAX], name[64];
	struct stat st;
	struct statfs fs;
	char *dir;

	if (!base || base[0] != '/' || statfs(base, &fs) < 0 || fs.f_type != TMPFS_MAGIC)
		return NULL;
	if (!realpath(home, real))
		return NULL;
	snprintf(name, sizeof name, "weir-%u-%016llx", (unsigned)geteuid(),
	         (unsigned long long)path_hash(real));
	if (!(dir = fs_join(base, name)))
		return NULL;
	if ((mkdir(dir, 0700) < 0 && errno != EEXIST) || lstat(dir, &st) < 0 ||
	    !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		free(dir);
		return NULL;
	}
	return dir;
}

char *journal_dir_for(const char *home, bool *in_memory)
{
	char *old = fs_join(home, "agent/tasks"), *dir = NULL;

	*in_memory = false;
	if (!old)
		return NULL;
	/* an earlier agent's journals stay where it wrote them */
	if (holds_journals(old))
		return old;
	dir = memory_dir(getenv("XDG_RUNTIME_DIR"), home);
	if (!dir)
		dir = memory_dir("/dev/shm", home);
	if (!dir)
		return old;
	free(old);
	*in_memory = true;
	return dir;
}
