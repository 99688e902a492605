/* usock.h: Unix stream sockets named by a folder and a file name.
 *
 * A sockaddr_un holds at most 107 bytes of path; homes under deep test or
 * user folders can be longer.  When DIR/NAME does not fit, the path is
 * taken through an O_PATH descriptor of DIR ("/proc/self/fd/N/NAME"), which
 * the kernel resolves like the long path.  Every descriptor is CLOEXEC.
 */
#ifndef WEIR_LIB_USOCK_H
#define WEIR_LIB_USOCK_H

#include "lib/error.h"

/* Binds DIR/NAME (a stale socket file is replaced), mode 0600, and
 * listens.  The listening descriptor (non-blocking), or -1 with err. */
int usock_listen(const char *dir, const char *name, struct weir_error *err);

/* Connects to DIR/NAME (blocking).  The descriptor, or -1 with err
 * (errno kept: ENOENT or ECONNREFUSED when nothing listens). */
int usock_connect(const char *dir, const char *name, struct weir_error *err);

#endif
