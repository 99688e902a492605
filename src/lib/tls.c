/* tls.c: client TLS sessions with GnuTLS (tls.h).
 *
 * GnuTLS is the library libmicrohttpd already loads into the server, so
 * https costs it no new shared library; it is opened at the first session
 * (below), so a CLI command or a launcher on http:// never loads it
 * (lib/http_client.c reaches this only through the handle's http_tls_ops).
 * Loading the system's trust store takes milliseconds (about 14 ms for
 * Debian's 144 roots, measured on a loaded machine), which a thousand
 * sensors poking https would pay at every poke; so the credentials (the
 * trust store, plus one CA file) are loaded once per CA file and shared by
 * every session that names it (GnuTLS lets sessions on any thread share
 * them), counted by reference, and loaded again when the file changes.
 */
#include "lib/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/dynlib.h"
#include "lib/fs.h"

/* GnuTLS, loaded at the first session (lib/dynlib.h), under tls_lock since
 * sessions start on any thread; not at every start of weir, which would
 * load it and eight more libraries for nothing.  The Makefile names it as
 * the system's library does. */
#ifndef WEIR_SONAME_GNUTLS
#define WEIR_SONAME_GNUTLS "libgnutls.so.30"
#endif
/* clang-format off */
#define GT_FUNCS(X, t)                                     \
	X(t, gnutls_bye)                                   \
	X(t, gnutls_free)                                  \
	X(t, gnutls_certificate_allocate_credentials)      \
	X(t, gnutls_certificate_free_credentials)          \
	X(t, gnutls_certificate_set_x509_key_mem2)         \
	X(t, gnutls_certificate_set_x509_system_trust)     \
	X(t, gnutls_certificate_set_x509_trust_file)       \
	X(t, gnutls_certificate_verification_status_print) \
	X(t, gnutls_credentials_set)                       \
	X(t, gnutls_deinit)                                \
	X(t, gnutls_error_is_fatal)                        \
	X(t, gnutls_handshake)                             \
	X(t, gnutls_init)                                  \
	X(t, gnutls_record_get_direction)                  \
	X(t, gnutls_record_recv)                           \
	X(t, gnutls_record_send)                           \
	X(t, gnutls_server_name_set)                       \
	X(t, gnutls_session_get_verify_cert_status)        \
	X(t, gnutls_session_set_verify_cert)               \
	X(t, gnutls_set_default_priority)                  \
	X(t, gnutls_strerror)                              \
	X(t, gnutls_transport_set_int2)                    \
	X(t, gnutls_x509_crt_deinit)                       \
	X(t, gnutls_x509_crt_get_expiration_time)          \
	X(t, gnutls_x509_crt_import)                       \
	X(t, gnutls_x509_crt_init)                         \
	X(t, gnutls_x509_privkey_deinit)                   \
	X(t, gnutls_x509_privkey_import2)                  \
	X(t, gnutls_x509_privkey_init)
/* clang-format on */
DYNLIB_TABLE(gt, GT_FUNCS, WEIR_SONAME_GNUTLS, "TLS (https, SMTP over TLS, the server's tls:)");
#define gnutls_bye (gt.gnutls_bye)
#define gnutls_certificate_allocate_credentials (gt.gnutls_certificate_allocate_credentials)
#define gnutls_certificate_free_credentials (gt.gnutls_certificate_free_credentials)
#define gnutls_certificate_set_x509_key_mem2 (gt.gnutls_certificate_set_x509_key_mem2)
#define gnutls_certificate_set_x509_system_trust (gt.gnutls_certificate_set_x509_system_trust)
#define gnutls_certificate_set_x509_trust_file (gt.gnutls_certificate_set_x509_trust_file)
#define gnutls_certificate_verification_status_print                                               \
	(gt.gnutls_certificate_verification_status_print)
#define gnutls_credentials_set (gt.gnutls_credentials_set)
#define gnutls_deinit (gt.gnutls_deinit)
#define gnutls_error_is_fatal (gt.gnutls_error_is_fatal)
#define gnutls_handshake (gt.gnutls_handshake)
#define gnutls_init (gt.gnutls_init)
#define gnutls_record_get_direction (gt.gnutls_record_get_direction)
#define gnutls_record_recv (gt.gnutls_record_recv)
#define gnutls_record_send (gt.gnutls_record_send)
#define gnutls_server_name_set (gt.gnutls_server_name_set)
#define gnutls_session_get_verify_cert_status (gt.gnutls_session_get_verify_cert_status)
#define gnutls_session_set_verify_cert (gt.gnutls_session_set_verify_cert)
#define gnutls_set_default_priority (gt.gnutls_set_default_priority)
#define gnutls_strerror (gt.gnutls_strerror)
#define gnutls_transport_set_int2 (gt.gnutls_transport_set_int2)
#define gnutls_x509_crt_deinit (gt.gnutls_x509_crt_deinit)
#define gnutls_x509_crt_get_expiration_time (gt.gnutls_x509_crt_get_expiration_time)
#define gnutls_x509_crt_import (gt.gnutls_x509_crt_import)
#define gnutls_x509_crt_init (gt.gnutls_x509_crt_init)
#define gnutls_x509_privkey_deinit (gt.gnutls_x509_privkey_deinit)
#define gnutls_x509_privkey_import2 (gt.gnutls_x509_privkey_import2)
#define gnutls_x509_privkey_init (gt.gnutls_x509_privkey_init)
static pthread_mutex_t tls_lock = PTHREAD_MUTEX_INITIALIZER;

static int tls_lib_load(struct weir_error *err)
{
	int rc;

	pthread_mutex_lock(&tls_lock);
	rc = dynlib_load(&gt_lib, gt_syms, DYNLIB_COUNT(gt_syms), err);
	pthread_mutex_unlock(&tls_lock);
	return rc;
}

/* Credentials for one CA file (or none: ca_file NULL), shared. */
struct creds {
	gnutls_certificate_credentials_t cred;
	char *ca_file;
	struct timespec mtime; /* the file's when it was loaded */
	off_t size;
	ino_t ino;
	int refs; /* the cache's one, and one per session; under cache_lock */
};

#define CREDS_CACHED 8 /* CA files kept; more are loaded per session */

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct creds *cache[CREDS_CACHED];

struct tls_conn {
	gnutls_session_t session;
	struct creds *creds;
	char error[256];
};

static void creds_put(struct creds *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&cache_lock);
	bool last = --c->refs == 0;
	pthread_mutex_unlock(&cache_lock);
	if (last) {
		gnutls_certificate_free_credentials(c->cred);
		free(c->ca_file);
		free(c);
	}
}

static bool same_file(const struct creds *c, const char *ca_file, const struct stat *st)
{
	if (!ca_file != !c->ca_file || (ca_file && strcmp(ca_file, c->ca_file)))
		return false;
	return !ca_file ||
	       (st->st_mtim.tv_sec == c->mtime.tv_sec && st->st_mtim.tv_nsec == c->mtime.tv_nsec &&
	        st->st_size == c->size && st->st_ino == c->ino);
}

static struct creds *creds_load(const char *ca_file, const struct stat *st, struct weir_error *err)
{
	struct creds *c = calloc(1, sizeof *c);
	int rc;

	if (!c || (ca_file && !(c->ca_file = strdup(ca_file)))) {
		if (c)
			free(c);
		weir_error_set(err, WEIR_E_INTERNAL, "%s", "out of memory");
		return NULL;
	}
	c->refs = 1;
	if ((rc = gnutls_certificate_allocate_credentials(&c->cred)) < 0) {
		free(c->ca_file);
		free(c);
		weir_error_set(err, WEIR_E_INTERNAL, "TLS: %s", gnutls_strerror(rc));
		return NULL;
	}
	/* an empty system store is not an error here: a CA file may follow,
	 * and a peer nothing vouches for fails the handshake anyway */
	gnutls_certificate_set_x509_system_trust(c->cred);
	if (ca_file) {
		c->mtime = st->st_mtim;
		c->size = st->st_size;
		c->ino = st->st_ino;
		rc = gnutls_certificate_set_x509_trust_file(c->cred, ca_file, GNUTLS_X509_FMT_PEM);
		if (rc <= 0) {
			weir_error_set(err, WEIR_E_INVALID, "ca_file %s: %s", ca_file,
			               rc == 0 ? "no PEM certificate in it" : gnutls_strerror(rc));
			creds_put(c);
			return NULL;
		}
	}
	return c;
}

/* The credentials for ca_file (NULL: the system's store alone), from the
 * cache when the file has not changed since; a reference the caller puts. */
static struct creds *creds_get(const char *ca_file, struct weir_error *err)
{
	struct stat st = {0};
	struct creds *c = NULL;
	int slot = -1;

	if (ca_file && stat(ca_file, &st) < 0) {
		weir_error_set(err, WEIR_E_INVALID, "ca_file %s: %s", ca_file, strerror(errno));
		return NULL;
	}
	pthread_mutex_lock(&cache_lock);
	for (int i = 0; i < CREDS_CACHED && !c; i++) {
		if (cache[i] && same_file(cache[i], ca_file, &st)) {
			c = cache[i];
			c->refs++;
		}
	}
	pthread_mutex_unlock(&cache_lock);
	if (c)
		return c;
	if (!(c = creds_load(ca_file, &st, err)))
		return NULL;
	/* keep it: in the slot of an older load of the same file, else a free one */
	struct creds *old = NULL;
	pthread_mutex_lock(&cache_lock);
	for (int i = 0; i < CREDS_CACHED && slot < 0; i++)
		if (cache[i] && !cache[i]->ca_file == !ca_file &&
		    (!ca_file || !strcmp(cache[i]->ca_file, ca_file)))
			slot = i;
	for (int i = 0; i < CREDS_CACHED && slot < 0; i++)
		if (!cache[i])
			slot = i;
	if (slot >= 0) {
		old = cache[slot];
		cache[slot] = c;
		c->refs++;
	}
	pthread_mutex_unlock(&cache_lock);
	creds_put(old);
	return c;
}

static bool is_ip_address(const char *host)
{
	unsigned char buf[sizeof(struct in6_addr)];
	return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

struct tls_conn *tls_conn_create(int fd, const char *host, const char *ca_file,
                                 struct weir_error *err)
{
	struct tls_conn *t = calloc(1, sizeof *t);
	int rc;

	if (ca_file && *ca_file && ca_file[0] != '/') {
		weir_error_set(err, WEIR_E_INVALID, "ca_file %s: expected an absolute path",
		               ca_file);
		free(t);
		return NULL;
	}
	if (!t) {
		weir_error_set(err, WEIR_E_INTERNAL, "%s", "out of memory");
		return NULL;
	}
	if (tls_lib_load(err) < 0) {
		free(t);
		return NULL;
	}
	if (!(t->creds = creds_get(ca_file && *ca_file ? ca_file : NULL, err))) {
		free(t);
		return NULL;
	}
	if ((rc = gnutls_init(&t->session, GNUTLS_CLIENT)) < 0) {
		t->session = NULL;
		goto gnutls_fail;
	}
	if ((rc = gnutls_set_default_priority(t->session)) < 0 ||
	    (rc = gnutls_credentials_set(t->session, GNUTLS_CRD_CERTIFICATE, t->creds->cred)) < 0)
		goto gnutls_fail;
	if (!is_ip_address(host) &&
	    (rc = gnutls_server_name_set(t->session, GNUTLS_NAME_DNS, host, strlen(host))) < 0)
		goto gnutls_fail;
	gnutls_session_set_verify_cert(t->session, host, 0);
	gnutls_transport_set_int(t->session, fd);
	return t;
gnutls_fail:
	weir_error_set(err, WEIR_E_INTERNAL, "TLS: %s", gnutls_strerror(rc));
	tls_conn_destroy(t);
	return NULL;
}

/* "the certificate is NOT trusted. The certificate issuer is unknown." */
static void verify_failure(struct tls_conn *t, struct weir_error *err)
{
	unsigned status = gnutls_session_get_verify_cert_status(t->session);
	gnutls_datum_t out = {0};

	if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &out, 0) == 0 &&
	    out.data) {
		size_t n = strlen((const char *)out.data);
		while (n > 0 && (out.data[n - 1] == ' ' || out.data[n - 1] == '\n'))
			n--;
		snprintf(t->error, sizeof t->error, "certificate verification failed: %.*s", (int)n,
		         (const char *)out.data);
		(*gt.gnutls_free)(out.data); /* the library's variable: its free */
	} else {
		snprintf(t->error, sizeof t->error, "%s", "certificate verification failed");
	}
	weir_error_set(err, WEIR_E_UNAVAILABLE, "TLS: %s", t->error);
}

int tls_conn_handshake(struct tls_conn *t, struct weir_error *err)
{
	int rc = gnutls_handshake(t->session);

	if (rc == GNUTLS_E_SUCCESS)
		return 0;
	if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED ||
	    (rc < 0 && !gnutls_error_is_fatal(rc)))
		return 1;
	if (rc == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR) {
		verify_failure(t, err);
		return -1;
	}
	snprintf(t->error, sizeof t->error, "%s", gnutls_strerror(rc));
	return weir_error_set(err, WEIR_E_UNAVAILABLE, "TLS handshake: %s", t->error);
}

/* A GnuTLS result as send(2)/recv(2) would give it. */
static ssize_t as_errno(struct tls_conn *t, ssize_t rc)
{
	if (rc >= 0)
		return rc;
	if (rc == GNUTLS_E_AGAIN) {
		errno = EAGAIN;
	} else if (rc == GNUTLS_E_INTERRUPTED) {
		errno = EINTR;
	} else {
		snprintf(t->error, sizeof t->error, "%s", gnutls_strerror((int)rc));
		errno =
		    rc == GNUTLS_E_PUSH_ERROR || rc == GNUTLS_E_PULL_ERROR ? ECONNRESET : EPROTO;
	}
	return -1;
}

ssize_t tls_conn_send(struct tls_conn *t, const void *data, size_t n)
{
	return as_errno(t, gnutls_record_send(t->session, data, n));
}

ssize_t tls_conn_recv(struct tls_conn *t, void *buf, size_t n)
{
	ssize_t rc = gnutls_record_recv(t->session, buf, n);

	/* a peer that closes without close_notify: its end, as for plain TCP
	 * (HTTP bodies carry their length or chunking, SMTP its replies) */
	if (rc == GNUTLS_E_PREMATURE_TERMINATION)
		return 0;
	return as_errno(t, rc);
}

bool tls_conn_wants_write(const struct tls_conn *t)
{
	return gnutls_record_get_direction(t->session) == 1;
}

const char *tls_conn_error(const struct tls_conn *t)
{
	return t->error;
}

void tls_conn_destroy(struct tls_conn *t)
{
	if (!t)
		return;
	if (t->session) {
		gnutls_bye(t->session, GNUTLS_SHUT_WR);
		gnutls_deinit(t->session);
	}
	creds_put(t->creds);
	free(t);
}

/* ---- a server's certificate and key ---- */

/* The PEM text of `path`, or NULL with err naming the file as `what`
 * (tls.cert or tls.key) and why. */
static char *read_pem(const char *what, const char *path, const char *label, struct weir_error *err)
{
	size_t len = 0;
	struct weir_error e = {0};
	char *text = fs_read_file(path, &len, &e);

	if (!text) {
		weir_error_set(err, WEIR_E_INVALID, "%s %s: cannot read it: %s", what, path, e.msg);
		return NULL;
	}
	if (strlen(text) != len || !strstr(text, label)) {
		weir_error_set(err, WEIR_E_INVALID, "%s %s: expected PEM text holding a line %s",
		               what, path, label);
		free(text);
		return NULL;
	}
	return text;
}

static gnutls_datum_t datum(char *text)
{
	return (gnutls_datum_t){(unsigned char *)text, (unsigned)strlen(text)};
}

int tls_server_keys_load(const char *cert_file, const char *key_file, struct tls_server_keys *out,
                         struct weir_error *err)
{
	gnutls_x509_crt_t crt = NULL;
	gnutls_x509_privkey_t key = NULL;
	gnutls_certificate_credentials_t cred = NULL;
	gnutls_datum_t c, k;
	int rc;

	memset(out, 0, sizeof *out);
	if (!(out->cert_pem =
	          read_pem("tls.cert", cert_file, "-----BEGIN CERTIFICATE-----", err)) ||
	    !(out->key_pem = read_pem("tls.key", key_file, "PRIVATE KEY-----", err)))
		goto fail;
	if (strstr(out->key_pem, "ENCRYPTED")) {
		weir_error_set(err, WEIR_E_INVALID,
		               "tls.key %s: the key is encrypted (it has a passphrase), which the "
		               "server cannot type at start: write it out without one (openssl "
		               "pkey -in KEY -out NEW), readable by the server's user only",
		               key_file);
		goto fail;
	}
	if (tls_lib_load(err) < 0)
		goto fail;
	c = datum(out->cert_pem);
	k = datum(out->key_pem);
	if ((rc = gnutls_x509_crt_init(&crt)) < 0 || (rc = gnutls_x509_privkey_init(&key)) < 0 ||
	    (rc = gnutls_certificate_allocate_credentials(&cred)) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "TLS: %s", gnutls_strerror(rc));
		goto fail;
	}
	if ((rc = gnutls_x509_crt_import(crt, &c, GNUTLS_X509_FMT_PEM)) < 0) {
		weir_error_set(err, WEIR_E_INVALID, "tls.cert %s: not a certificate: %s", cert_file,
		               gnutls_strerror(rc));
		goto fail;
	}
	out->not_after = gnutls_x509_crt_get_expiration_time(crt);
	if ((rc = gnutls_x509_privkey_import2(key, &k, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
		weir_error_set(err, WEIR_E_INVALID, "tls.key %s: not a private key: %s", key_file,
		               gnutls_strerror(rc));
		goto fail;
	}
	rc = gnutls_certificate_set_x509_key_mem2(cred, &c, &k, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (rc == GNUTLS_E_CERTIFICATE_KEY_MISMATCH) {
		weir_error_set(err, WEIR_E_INVALID,
		               "tls.key %s is not the key of the certificate tls.cert %s", key_file,
		               cert_file);
		goto fail;
	}
	if (rc < 0) {
		weir_error_set(err, WEIR_E_INVALID, "tls.cert %s with tls.key %s: %s", cert_file,
		               key_file, gnutls_strerror(rc));
		goto fail;
	}
	gnutls_certificate_free_credentials(cred);
	gnutls_x509_privkey_deinit(key);
	gnutls_x509_crt_deinit(crt);
	return 0;
fail:
	if (cred)
		gnutls_certificate_free_credentials(cred);
	if (key)
		gnutls_x509_privkey_deinit(key);
	if (crt)
		gnutls_x509_crt_deinit(crt);
	tls_server_keys_release(out);
	return -1;
}

void tls_server_keys_release(struct tls_server_keys *k)
{
	if (!k)
		return;
	free(k->cert_pem);
	if (k->key_pem) {
		explicit_bzero(k->key_pem, strlen(k->key_pem));
		free(k->key_pem);
	}
	memset(k, 0, sizeof *k);
}

/* ---- the HTTP client's shape ---- */

static void *http_start(int fd, const char *host, const char *ca_file, struct weir_error *err)
{
	return tls_conn_create(fd, host, ca_file, err);
}

static int http_handshake(void *t, struct weir_error *err)
{
	return tls_conn_handshake(t, err);
}

static ssize_t http_send(void *t, const char *p, size_t n)
{
	return tls_conn_send(t, p, n);
}

static ssize_t http_recv(void *t, char *p, size_t n)
{
	return tls_conn_recv(t, p, n);
}

static bool http_wants_write(void *t)
{
	return tls_conn_wants_write(t);
}

static void http_close(void *t)
{
	tls_conn_destroy(t);
}

const struct http_tls_ops tls_http_ops = {
    .start = http_start,
    .handshake = http_handshake,
    .send = http_send,
    .recv = http_recv,
    .wants_write = http_wants_write,
    .close = http_close,
};
