/* log_append.c: appending a shipped log chunk at its offset (see
 * log_append.h). */
#include "api/logs/log_append.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fs.h"

static int open_log(const char *path, struct weir_error *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

	if (fd < 0 && errno == ENOENT) {
		/* the task's log folder is made by the executor; a server restored
		 * without it still takes the log */
		char *dir = strdup(path);
		char *slash = dir ? strrchr(dir, '/') : NULL;
		if (slash && slash != dir) {
			*slash = '\0';
			if (fs_mkdir_p(dir, 0755, NULL) == 0)
				fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		}
		free(dir);
	}
	if (fd < 0)
		weir_error_set(err, WEIR_E_INTERNAL, "%s: cannot open the task's log: %s", path,
		               strerror(errno));
	return fd;
}

int log_append_at(const char *path, uint64_t offset, const char *data, size_t len, uint64_t *size,
                  struct weir_error *err)
{
	struct stat st;
	int fd = open_log(path, err), rc = -1;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "%s: %s", path, strerror(errno));
		goto out;
	}
	*size = (uint64_t)st.st_size;
	if (offset > *size) {
		rc = 1;
		goto out;
	}
	uint64_t skip = *size - offset;
	while (skip < len) {
		ssize_t n = write(fd, data + skip, len - skip);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			weir_error_set(err, WEIR_E_INTERNAL, "%s: cannot write the task's log: %s",
			               path, strerror(errno));
			goto out;
		}
		skip += (uint64_t)n;
		*size += (uint64_t)n;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}
