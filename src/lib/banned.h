/* banned.h: C library functions weir does not call, and what to use.
 *
 * DEVELOPER=1 builds force-include this header into every file (-include),
 * before any other.  It works by redeclaring each function deprecated:
 * redeclaring adds the attribute to the library's own declaration, which
 * comes later and stays valid, so system headers are untouched (warnings
 * inside them are not reported) and every call in our code stops the
 * build with "'strcpy' is deprecated: use ..." under -Werror.  A macro
 * (#define strcpy ...) could not come first: it would rewrite the system
 * headers' prototypes included after it.
 *
 * Why each is banned: strcpy, strcat, sprintf and vsprintf write without a
 * bound; strncpy does not NUL-terminate when it cuts and pads with NULs
 * otherwise; strncat's bound is the room left, an off-by-one trap; gets
 * cannot be used safely; strtok keeps hidden state between calls
 * (threads, nested loops).
 *
 * The header includes only the compiler's own <stdarg.h> and <stddef.h>,
 * so that a file that forgets <string.h> fails in every build, not only in
 * the others.  (That is why gmtime, localtime and ctime are not here: their
 * time_t needs <time.h>.)
 */
#ifndef WEIR_LIB_BANNED_H
#define WEIR_LIB_BANNED_H

#include <stdarg.h>
#include <stddef.h>

#define WEIR_BANNED(alt) __attribute__((deprecated("banned in weir (lib/banned.h): use " alt)))

char *strcpy(char *dst, const char *src) WEIR_BANNED("snprintf, memcpy or a strbuf");
char *strcat(char *dst, const char *src) WEIR_BANNED("str_append (lib/str.h) or a strbuf");
char *strncpy(char *dst, const char *src, size_t n) WEIR_BANNED("snprintf(\"%s\") or memcpy");
char *strncat(char *dst, const char *src, size_t n) WEIR_BANNED("str_append (lib/str.h)");
int sprintf(char *dst, const char *fmt, ...) WEIR_BANNED("snprintf or strbuf_addf");
int vsprintf(char *dst, const char *fmt, va_list ap) WEIR_BANNED("vsnprintf or strbuf_vaddf");
char *gets(char *s) WEIR_BANNED("fgets");
char *strtok(char *s, const char *delim) WEIR_BANNED("strtok_r or strsep");

#endif
