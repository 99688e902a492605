/* run_as.c: the task's user resolved, written as text, read back and taken
 * (run_as.h). */
#include "lib/run_as.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/log.h"

int run_as_resolve(const char *name, struct run_as *out, struct weir_error *err)
{
	struct passwd pw, *found = NULL;
	char buf[16384];
	int n = RUN_AS_GROUPS_MAX;
	char *end = NULL;

	memset(out, 0, sizeof *out);
	if (!name || !*name)
		return weir_error_set(err, WEIR_E_INVALID, "expected a user name");
	errno = 0;
	if (getpwnam_r(name, &pw, buf, sizeof buf, &found) != 0 || !found) {
		unsigned long id = strtoul(name, &end, 10);
		if (end && *end == '\0' && end != name)
			getpwuid_r((uid_t)id, &pw, buf, sizeof buf, &found);
	}
	if (!found)
		return weir_error_set(err, WEIR_E_INVALID, "no user \"%s\" on this machine", name);
	out->uid = pw.pw_uid;
	out->gid = pw.pw_gid;
	if (getgrouplist(pw.pw_name, pw.pw_gid, out->groups, &n) < 0) {
		log_warn("user %s is in more than %d groups: the first %d are kept", pw.pw_name,
		         RUN_AS_GROUPS_MAX, RUN_AS_GROUPS_MAX);
		n = RUN_AS_GROUPS_MAX;
	}
	out->n_groups = n < 0 ? 0 : (size_t)n;
	out->set = true;
	return 0;
}

int run_as_format(const struct run_as *ra, char *buf, size_t size)
{
	size_t off = 0;
	int n = snprintf(buf, size, "%lu:%lu:", (unsigned long)ra->uid, (unsigned long)ra->gid);

	if (n < 0 || (size_t)n >= size)
		return -1;
	off = (size_t)n;
	for (size_t i = 0; i < ra->n_groups; i++) {
		n = snprintf(buf + off, size - off, "%s%lu", i ? "," : "",
		             (unsigned long)ra->groups[i]);
		if (n < 0 || (size_t)n >= size - off)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

/* A decimal id at *p, moved past it.  0, or -1 when there is none. */
static int read_id(const char **p, unsigned long *id)
{
	char *end;

	if (**p < '0' || **p > '9')
		return -1;
	errno = 0;
	*id = strtoul(*p, &end, 10);
	if (errno || *id > 0xfffffffeUL)
		return -1;
	*p = end;
	return 0;
}

int run_as_parse(const char *text, struct run_as *out)
{
	const char *p = text;
	unsigned long uid, gid, g;

	memset(out, 0, sizeof *out);
	if (!text || !*text)
		return 0;
	if (read_id(&p, &uid) < 0 || *p++ != ':' || read_id(&p, &gid) < 0 || *p++ != ':')
		return -1;
	while (*p) {
		if (out->n_groups == RUN_AS_GROUPS_MAX || read_id(&p, &g) < 0 ||
		    (*p && (*p++ != ',' || !*p))) {
			out->n_groups = 0;
			return -1;
		}
		out->groups[out->n_groups++] = (gid_t)g;
	}
	out->uid = (uid_t)uid;
	out->gid = (gid_t)gid;
	out->set = true;
	return 0;
}

int run_as_become(const struct run_as *ra)
{
	if (!ra || !ra->set)
		return 0;
	/* raw calls: glibc's wrappers would make every thread of the process
	 * change (and signal them), and this child shares its parent's memory */
	if (syscall(SYS_setgroups, ra->n_groups, ra->groups) < 0 ||
	    syscall(SYS_setresgid, ra->gid, ra->gid, ra->gid) < 0 ||
	    syscall(SYS_setresuid, ra->uid, ra->uid, ra->uid) < 0)
		return -1;
	return 0;
}
