/* task_user.c: who local tasks run as and the home's modes (task_user.h). */
#include "server/task_user.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fs.h"
#include "lib/log.h"

static struct task_user current;
static bool current_set;

/* The name of uid, or its number, into buf. */
static void name_of(uid_t uid, char *buf, size_t size)
{
	struct passwd pw, *found = NULL;
	char tmp[4096];

	if (getpwuid_r(uid, &pw, tmp, sizeof tmp, &found) == 0 && found)
		snprintf(buf, size, "%s", pw.pw_name);
	else
		snprintf(buf, size, "%lu", (unsigned long)uid);
}

int task_user_decide(const char *configured, uid_t server_uid, struct task_user *out,
                     struct weir_error *err)
{
	const char *name = configured ? configured : server_uid == 0 ? "nobody" : NULL;

	memset(out, 0, sizeof *out);
	out->server_uid = server_uid;
	name_of(server_uid, out->server_name, sizeof out->server_name);
	if (!name) {
		snprintf(out->name, sizeof out->name, "%s", out->server_name);
		return 0;
	}
	if (run_as_resolve(name, &out->run_as, err) < 0) {
		if (configured) {
			weir_error_prefix(err, "task_user");
			return -1;
		}
		return weir_error_set(err, WEIR_E_INVALID,
		                      "the server runs as root and tasks would run as nobody, but "
		                      "there is no user nobody: set task_user in weir.yaml to the "
		                      "user tasks run as (docs/security.md)");
	}
	name_of(out->run_as.uid, out->name, sizeof out->name);
	if (out->run_as.uid == server_uid) {
		out->run_as.set = false; /* the server's own: nothing to switch */
		return 0;
	}
	if (server_uid != 0)
		return weir_error_set(
		    err, WEIR_E_INVALID,
		    "task_user: %s (uid %lu) is not the server's user %s (uid %lu), "
		    "and only a server running as root can start tasks as "
		    "another user: run the server as root or as %s, or leave "
		    "task_user out",
		    name, (unsigned long)out->run_as.uid, out->server_name,
		    (unsigned long)server_uid, name);
	return 0;
}

void task_user_describe(const struct task_user *tu, char *buf, size_t size)
{
	if (tu->run_as.set)
		snprintf(buf, size,
		         "weir server: tasks run as user %s (uid %lu, gid %lu), apart from the "
		         "server's home",
		         tu->name, (unsigned long)tu->run_as.uid, (unsigned long)tu->run_as.gid);
	else
		snprintf(buf, size,
		         "weir server: WARNING: tasks run as the server's own user %s (uid %lu): "
		         "a task can read the home (the API token, secret.key, weir.db) and act "
		         "as the server; run the server as root, or set task_user to another "
		         "user (docs/security.md)",
		         tu->server_name, (unsigned long)tu->server_uid);
}

void task_user_set_current(const struct task_user *tu)
{
	current = *tu;
	current_set = true;
}

const struct run_as *task_user_current(void)
{
	return current_set && current.run_as.set ? &current.run_as : NULL;
}

int task_user_make_file(const char *path)
{
	const struct run_as *ra = task_user_current();
	int fd, rc = 0;

	if (!ra)
		return 0;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (fchown(fd, ra->uid, ra->gid) < 0)
		rc = -1;
	close(fd);
	return rc;
}

/* chmod of `name` in dirfd when it is a plain file or a folder (never
 * through a link): files to `file_mode`, folders to `dir_mode` (0: left). */
static void set_mode_at(int dirfd, const char *name, mode_t file_mode, mode_t dir_mode)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (S_ISREG(st.st_mode) && (st.st_mode & 07777) != file_mode) {
		if (fchmodat(dirfd, name, file_mode, 0) < 0)
			return; /* not ours to change: the start-up line says what is */
	} else if (S_ISDIR(st.st_mode) && dir_mode && (st.st_mode & 07777) != dir_mode) {
		if (fchmodat(dirfd, name, dir_mode, 0) < 0)
			return;
	}
}

/* What a folder's entry gets at the home's top: files 0600, these folders
 * their modes, other folders (the DAG folder, say) left as they are. */
static mode_t top_dir_mode(const char *name)
{
	if (!strcmp(name, "jobs") || !strcmp(name, "cache") || !strcmp(name, "dag_runs"))
		return 0711;
	if (!strcmp(name, "agent"))
		return 0700;
	return 0;
}

/* HOME/sub, when others may still list it (an older home): each folder in
 * it 0711 and the plain files in those 0600, one level (the tasks' own
 * folders are not entered); then sub itself 0711. */
static void tighten_below(const char *home, const char *sub)
{
	char *path = fs_join(home, sub);
	struct stat st;
	DIR *d = NULL;
	struct dirent *de;

	if (!path || lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) || !(st.st_mode & 0044))
		goto out;
	d = opendir(path);
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		int fd =
		    openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			set_mode_at(dirfd(d), de->d_name, 0600, 0);
			continue;
		}
		DIR *in = fdopendir(fd);
		struct dirent *e;
		fchmod(fd, 0711);
		while (in && (e = readdir(in)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				set_mode_at(dirfd(in), e->d_name, 0600, 0);
		if (in)
			closedir(in);
		else
			close(fd);
	}
	if (d)
		closedir(d);
	log_info("%s: tightened (folders 0711, files 0600)", path);
out:
	free(path);
}

/* Whether ra's user may pass through folder st (search permission). */
static bool may_pass(const struct stat *st, const struct run_as *ra)
{
	if (st->st_uid == ra->uid)
		return st->st_mode & S_IXUSR;
	bool in_group = st->st_gid == ra->gid;
	for (size_t i = 0; i < ra->n_groups && !in_group; i++)
		in_group = st->st_gid == ra->groups[i];
	return in_group ? (st->st_mode & S_IXGRP) : (st->st_mode & S_IXOTH);
}

/* A warning when a folder above the home keeps the tasks' user out: every
 * task would fail to enter its working folder. */
static void check_reach(const char *home, const struct task_user *tu)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof path, "%s", home);
	for (char *slash = strrchr(path, '/'); slash; slash = strrchr(path, '/')) {
		*slash = '\0';
		const char *dir = path[0] ? path : "/";
		if (stat(dir, &st) == 0 && !may_pass(&st, &tu->run_as)) {
			log_warn(
			    "tasks run as %s, who cannot pass through %s (mode %03o): every task "
			    "will fail to enter its folder in the home; give it o+x or move the "
			    "home",
			    tu->name, dir, (unsigned)(st.st_mode & 0777));
			return;
		}
		if (!path[0])
			break;
	}
}

int task_user_tighten_home(const char *home, const struct task_user *tu, struct weir_error *err)
{
	DIR *d;
	struct dirent *de;

	if (chmod(home, tu->run_as.set ? 0711 : 0700) < 0)
		return weir_error_set(err, WEIR_E_INTERNAL, "%s: cannot set its mode: %s", home,
		                      strerror(errno));
	tighten_below(home, "jobs");
	tighten_below(home, "dag_runs");
	d = opendir(home);
	if (!d)
		return weir_error_set(err, WEIR_E_INTERNAL, "%s: %s", home, strerror(errno));
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			set_mode_at(dirfd(d), de->d_name, 0600, top_dir_mode(de->d_name));
	closedir(d);
	if (tu->run_as.set)
		check_reach(home, tu);
	return 0;
}
