/* tls.h: a TLS client session over a connected socket (GnuTLS), for the
 * HTTP client's https:// URLs (webhooks, sensors; the CLI's and launchers'
 * server with tls:) and SMTP's STARTTLS; and the server's own certificate
 * and key read and checked for its tls: (tls_server_keys_load()).
 *
 * The peer is always verified: its chain against the system's trust store
 * (and, when given, the certificates of one more CA file, PEM), and its name
 * against `host` (a DNS name or an IP address, which must then stand in the
 * certificate's IP addresses).  There is no way to turn verification off.
 * SNI carries `host` when it is a name (RFC 6066 leaves IP addresses out).
 *
 * The socket may be blocking (with SO_RCVTIMEO/SO_SNDTIMEO: a timeout then
 * reads as EAGAIN) or non-blocking; the session never waits by itself: each
 * call that cannot go on says EAGAIN and tls_conn_wants_write() says which
 * way to poll.  The socket stays the caller's: tls_conn_destroy() does not
 * close it.  A session is used by one thread at a time; sessions on
 * different threads are independent.
 *
 * The trusted certificates are loaded once per process for the system's
 * store (new system roots need a restart) and once per CA file, again when
 * the file changes (another inode, size or mtime), and shared by sessions.
 */
#ifndef WEIR_LIB_TLS_H
#define WEIR_LIB_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "lib/error.h"
#include "lib/http_client.h"

struct tls_conn; /* opaque */

/* A client session on `fd` for `host`; `ca_file` (an absolute path) NULL
 * or "": the system's trust store only.  NULL with err (WEIR_E_INVALID: the
 * CA file is not an absolute path, cannot be read or holds no certificate;
 * WEIR_E_INTERNAL otherwise). */
struct tls_conn *tls_conn_create(int fd, const char *host, const char *ca_file,
                                 struct weir_error *err);

/* One step of the handshake: 0 done, 1 not yet (wait as
 * tls_conn_wants_write() says, then call again), -1 with err
 * (WEIR_E_UNAVAILABLE; a certificate that does not verify is named with
 * GnuTLS's words for why, e.g. "the certificate issuer is unknown"). */
int tls_conn_handshake(struct tls_conn *t, struct weir_error *err);

/* As send(2) and recv(2): bytes moved, 0 at the peer's end (recv), or -1
 * with errno EAGAIN (wait and retry), EINTR, or ECONNRESET/EPROTO (the
 * session is broken; tls_conn_error() says how). */
ssize_t tls_conn_send(struct tls_conn *t, const void *data, size_t n);
ssize_t tls_conn_recv(struct tls_conn *t, void *buf, size_t n);

/* After EAGAIN (or a handshake's 1): true if the session waits to write. */
bool tls_conn_wants_write(const struct tls_conn *t);

/* GnuTLS's text for the last failed call ("" if none). */
const char *tls_conn_error(const struct tls_conn *t);

/* Sends close_notify (once, without waiting) and frees the session. */
void tls_conn_destroy(struct tls_conn *t);

/* A server's certificate and key (`weir server`'s tls:), as PEM texts. */
struct tls_server_keys {
	char *cert_pem;   /* the certificate, then any intermediates */
	char *key_pem;    /* its private key, without a passphrase */
	time_t not_after; /* the certificate's end of validity */
};

/* Reads cert_file and key_file and checks them: each readable PEM text, the
 * certificate one GnuTLS reads, the key not encrypted (a passphrase no one
 * types at a server's start: refused, saying how to remove it), and the key
 * the certificate's.  0 with *out filled (tls_server_keys_release()), or -1
 * with err (WEIR_E_INVALID) naming the file ("tls.cert PATH: ..." or
 * "tls.key PATH: ...") and what is wrong. */
int tls_server_keys_load(const char *cert_file, const char *key_file, struct tls_server_keys *out,
                         struct weir_error *err);
/* Frees the texts (the key's wiped first); safe on a zeroed struct. */
void tls_server_keys_release(struct tls_server_keys *k);

/* These functions in the HTTP client's shape: http_client_set_tls(c,
 * &tls_http_ops, ca_file) lets a handle speak https. */
extern const struct http_tls_ops tls_http_ops;

#endif
