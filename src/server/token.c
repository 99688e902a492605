/* token.c: creating and reading HOME/token and HOME/secret.key: 32 random
 * bytes as hex, made at the first start with mode 0600. */
#include "server/token.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fs.h"
#include "store/seal.h"

#define TOKEN_BYTES 32

static char *read_token(const char *path, struct weir_error *err)
{
	size_t len;
	char *t = fs_read_file(path, &len, err);

	if (!t)
		return NULL;
	while (len > 0 && (t[len - 1] == '\n' || t[len - 1] == '\r' || t[len - 1] == ' '))
		t[--len] = '\0';
	if (len < 16) {
		weir_error_set(err, WEIR_E_INVALID,
		               "%s: too short (%zu characters; expected 32 or more); "
		               "delete the file to have a new one made",
		               path, len);
		free(t);
		return NULL;
	}
	return t;
}

/* HOME/NAME's text, or 32 new random bytes written there as hex. */
static char *random_file(const char *home, const char *name, struct weir_error *err)
{
	char *path = fs_join(home, name);
	unsigned char raw[TOKEN_BYTES];
	char hex[TOKEN_BYTES * 2 + 2];
	char *tok = NULL;
	int fd = -1;
	ssize_t got;

	if (!path) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	if (fs_exists(path)) {
		tok = read_token(path, err);
		goto out;
	}
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (got = read(fd, raw, sizeof raw)) != (ssize_t)sizeof raw) {
		weir_error_set(err, WEIR_E_INTERNAL, "/dev/urandom: cannot read: %s",
		               strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < sizeof raw; i++)
		snprintf(hex + 2 * i, 3, "%02x", raw[i]);
	hex[TOKEN_BYTES * 2] = '\n';
	hex[TOKEN_BYTES * 2 + 1] = '\0';
	if (fs_write_file_atomic(path, hex, TOKEN_BYTES * 2 + 1, 0600, err) < 0)
		goto out;
	chmod(path, 0600);
	hex[TOKEN_BYTES * 2] = '\0';
	tok = strdup(hex);
	if (!tok)
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
out:
	if (fd >= 0)
		close(fd);
	free(path);
	return tok;
}

char *server_token_load_or_create(const char *home, struct weir_error *err)
{
	return random_file(home, "token", err);
}

int server_key_load_or_create(const char *home, uint8_t key[SEAL_KEY_SIZE], struct weir_error *err)
{
	char *hex = random_file(home, SERVER_KEY_FILE, err);
	int rc;

	if (!hex)
		return -1;
	rc = seal_key_from_hex(hex, key, err);
	if (rc < 0)
		weir_error_prefix(err, "%s/%s", home, SERVER_KEY_FILE);
	memset(hex, 0, strlen(hex));
	free(hex);
	return rc;
}
