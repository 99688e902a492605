/* usock.c: Unix stream sockets by folder and name (usock.h). */
#include "lib/usock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Fills `sa` with DIR/NAME, or with the /proc/self/fd form through *dirfd
 * (opened here; the caller closes it) when that does not fit.  0 or -1. */
static int usock_addr(const char *dir, const char *name, struct sockaddr_un *sa, int *dirfd,
                      struct weir_error *err)
{
	int n;

	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	*dirfd = -1;
	n = snprintf(sa->sun_path, sizeof sa->sun_path, "%s/%s", dir, name);
	if (n > 0 && (size_t)n < sizeof sa->sun_path)
		return 0;
	*dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*dirfd < 0)
		return weir_error_set(err, WEIR_E_INTERNAL, "%s: %s", dir, strerror(errno));
	n = snprintf(sa->sun_path, sizeof sa->sun_path, "/proc/self/fd/%d/%s", *dirfd, name);
	if (n < 0 || (size_t)n >= sizeof sa->sun_path) {
		close(*dirfd);
		*dirfd = -1;
		return weir_error_set(err, WEIR_E_INVALID, "%s: socket name too long", name);
	}
	return 0;
}

int usock_listen(const char *dir, const char *name, struct weir_error *err)
{
	struct sockaddr_un sa;
	int dirfd, fd;
	mode_t old;

	if (usock_addr(dir, name, &sa, &dirfd, err) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "socket: %s", strerror(errno));
		goto out;
	}
	unlink(sa.sun_path);
	old = umask(077);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 64) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "%s/%s: %s", dir, name, strerror(errno));
		close(fd);
		fd = -1;
	}
	umask(old);
out:
	if (dirfd >= 0)
		close(dirfd);
	return fd;
}

int usock_connect(const char *dir, const char *name, struct weir_error *err)
{
	struct sockaddr_un sa;
	int dirfd, fd, e;

	if (usock_addr(dir, name, &sa, &dirfd, err) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		e = errno;
		weir_error_set(err, WEIR_E_UNAVAILABLE, "%s/%s: %s", dir, name, strerror(e));
		close(fd);
		fd = -1;
		errno = e;
	} else if (fd < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "socket: %s", strerror(errno));
	}
	e = errno;
	if (dirfd >= 0)
		close(dirfd);
	errno = e;
	return fd;
}
