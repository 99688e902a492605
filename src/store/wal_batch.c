/* wal_batch.c: the VFS that writes a commit's WAL frames in one write
 * (wal_batch.h).
 *
 * The writes kept back are the ones that extend a -wal file, each starting
 * where the one before ended.  They go out as one write: at the page of a
 * commit's last frame (its header, the 24 bytes before, names the database's
 * size; only a commit's frame does), inside that page's own xWrite, so a
 * failure is that write's, as SQLite expects; when the buffer is full; and
 * before any other call through this VFS.  SQLite publishes a commit (the
 * shared-memory header, after a barrier) only once its last frame is
 * written, so the bytes are always in the file by then.
 */
#include "store/wal_batch.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#define WAL_BATCH_NAME "weir-wal"
/* at most this much a write: the unix VFS writes at most 128 KiB - 1 in one
 * call (its seekAndWrite keeps 17 bits of the size: its own writes are at
 * most a 64 KiB page); 120 KiB holds a commit of 29 pages of 4 KiB */
#define BATCH_MAX (120u * 1024)
#define FRAME_HEADER 24 /* SQLite's WAL frame header */

struct wb_file {
	sqlite3_file base;  /* pMethods: this VFS's */
	sqlite3_file *real; /* the platform VFS's file, right after this struct */
	bool wal;           /* opened as a -wal file */
};

/* The writes kept back: one file's, contiguous from `off`. */
static struct {
	struct wb_file *f;
	char *buf;
	size_t len, cap;
	sqlite3_int64 off;
	bool commit_next; /* the last write kept was a commit frame's header */
} pend;

static sqlite3_vfs *real_vfs;

static int flush(void)
{
	int rc;

	if (!pend.len)
		return SQLITE_OK;
	rc = pend.f->real->pMethods->xWrite(pend.f->real, pend.buf, (int)pend.len, pend.off);
	pend.len = 0;
	pend.f = NULL;
	pend.commit_next = false;
	return rc;
}

/* Flushes, then the call's own result (the flush's failure first). */
#define FLUSHED(call)                                                                              \
	do {                                                                                       \
		int rc_ = flush();                                                                 \
		if (rc_ != SQLITE_OK)                                                              \
			return rc_;                                                                \
		return (call);                                                                     \
	} while (0)

static sqlite3_file *real_of(sqlite3_file *f)
{
	return ((struct wb_file *)f)->real;
}

static int wb_close(sqlite3_file *f)
{
	struct wb_file *w = (struct wb_file *)f;
	int rc = flush(), rc2;

	rc2 = w->real->pMethods ? w->real->pMethods->xClose(w->real) : SQLITE_OK;
	return rc != SQLITE_OK ? rc : rc2;
}

static int wb_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
	FLUSHED(real_of(f)->pMethods->xRead(real_of(f), buf, n, off));
}

static bool keep(size_t extra)
{
	if (pend.len + extra <= pend.cap)
		return true;
	size_t cap = pend.cap ? pend.cap : BATCH_MAX;
	while (cap < pend.len + extra)
		cap *= 2;
	if (cap > BATCH_MAX)
		return false;
	char *b = realloc(pend.buf, cap);
	if (!b)
		return false;
	pend.buf = b;
	pend.cap = cap;
	return true;
}

static int wb_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
	struct wb_file *w = (struct wb_file *)f;
	bool commit = pend.commit_next;
	int rc;

	if (!w->wal || n <= 0)
		FLUSHED(w->real->pMethods->xWrite(w->real, buf, n, off));
	/* not where the kept writes end (or too much): those first */
	if (pend.len &&
	    (pend.f != w || pend.off + (sqlite3_int64)pend.len != off ||
	     pend.len + (size_t)n > BATCH_MAX) &&
	    (rc = flush()) != SQLITE_OK)
		return rc;
	if (!keep((size_t)n))
		FLUSHED(w->real->pMethods->xWrite(w->real, buf, n, off));
	if (!pend.len) {
		pend.f = w;
		pend.off = off;
	}
	memcpy(pend.buf + pend.len, buf, (size_t)n);
	pend.len += (size_t)n;
	pend.commit_next = false;
	/* a frame's header naming the database's size: a commit's last frame,
	 * whose page comes next */
	if (n == FRAME_HEADER) {
		const unsigned char *h = buf;
		pend.commit_next = (h[4] | h[5] | h[6] | h[7]) != 0;
	} else if (commit) {
		/* the commit's last page (or, after a write elsewhere, something
		 * that follows a commit's header: flushed all the same) */
		return flush();
	}
	return SQLITE_OK;
}

static int wb_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	FLUSHED(real_of(f)->pMethods->xTruncate(real_of(f), size));
}

static int wb_sync(sqlite3_file *f, int flags)
{
	FLUSHED(real_of(f)->pMethods->xSync(real_of(f), flags));
}

static int wb_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	FLUSHED(real_of(f)->pMethods->xFileSize(real_of(f), size));
}

static int wb_lock(sqlite3_file *f, int level)
{
	FLUSHED(real_of(f)->pMethods->xLock(real_of(f), level));
}

static int wb_unlock(sqlite3_file *f, int level)
{
	FLUSHED(real_of(f)->pMethods->xUnlock(real_of(f), level));
}

static int wb_check_reserved(sqlite3_file *f, int *out)
{
	FLUSHED(real_of(f)->pMethods->xCheckReservedLock(real_of(f), out));
}

static int wb_file_control(sqlite3_file *f, int op, void *arg)
{
	FLUSHED(real_of(f)->pMethods->xFileControl(real_of(f), op, arg));
}

static int wb_sector_size(sqlite3_file *f)
{
	(void)flush(); /* nothing to report it to: a later call's write fails again */
	return real_of(f)->pMethods->xSectorSize(real_of(f));
}

static int wb_device_characteristics(sqlite3_file *f)
{
	(void)flush();
	return real_of(f)->pMethods->xDeviceCharacteristics(real_of(f));
}

static int wb_shm_map(sqlite3_file *f, int page, int size, int extend, void volatile **out)
{
	FLUSHED(real_of(f)->pMethods->xShmMap(real_of(f), page, size, extend, out));
}

static int wb_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
	FLUSHED(real_of(f)->pMethods->xShmLock(real_of(f), offset, n, flags));
}

static void wb_shm_barrier(sqlite3_file *f)
{
	(void)flush(); /* empty by now: a commit's last page flushed in its own write */
	real_of(f)->pMethods->xShmBarrier(real_of(f));
}

static int wb_shm_unmap(sqlite3_file *f, int del)
{
	FLUSHED(real_of(f)->pMethods->xShmUnmap(real_of(f), del));
}

static int wb_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **out)
{
	FLUSHED(real_of(f)->pMethods->xFetch(real_of(f), off, n, out));
}

static int wb_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	FLUSHED(real_of(f)->pMethods->xUnfetch(real_of(f), off, p));
}

/* One table per version of the platform's files: SQLite asks a file's
 * methods for what its version has. */
#define WB_METHODS(v)                                                                              \
	{                                                                                          \
		v, wb_close, wb_read, wb_write, wb_truncate, wb_sync, wb_file_size, wb_lock,       \
		    wb_unlock, wb_check_reserved, wb_file_control, wb_sector_size,                 \
		    wb_device_characteristics, wb_shm_map, wb_shm_lock, wb_shm_barrier,            \
		    wb_shm_unmap, wb_fetch, wb_unfetch                                             \
	}
static const sqlite3_io_methods wb_methods[3] = {WB_METHODS(1), WB_METHODS(2), WB_METHODS(3)};

static int wb_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags,
                   int *out_flags)
{
	struct wb_file *w = (struct wb_file *)f;
	int rc, v;

	(void)vfs;
	if ((rc = flush()) != SQLITE_OK)
		return rc;
	memset(w, 0, sizeof *w);
	w->real = (sqlite3_file *)(w + 1);
	w->wal = (flags & SQLITE_OPEN_WAL) != 0;
	w->real->pMethods = NULL;
	rc = real_vfs->xOpen(real_vfs, name, w->real, flags, out_flags);
	if (!w->real->pMethods) {
		w->base.pMethods = NULL; /* not opened: SQLite calls nothing on it */
		return rc;
	}
	v = w->real->pMethods->iVersion;
	w->base.pMethods = &wb_methods[v < 1 ? 0 : v > 3 ? 2 : v - 1];
	return rc;
}

static int wb_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
	(void)vfs;
	FLUSHED(real_vfs->xDelete(real_vfs, name, sync_dir));
}

static int wb_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	(void)vfs;
	FLUSHED(real_vfs->xAccess(real_vfs, name, flags, out));
}

static int wb_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	(void)vfs;
	return real_vfs->xFullPathname(real_vfs, name, n, out);
}

static void *wb_dl_open(sqlite3_vfs *vfs, const char *name)
{
	(void)vfs;
	return real_vfs->xDlOpen(real_vfs, name);
}

static void wb_dl_error(sqlite3_vfs *vfs, int n, char *msg)
{
	(void)vfs;
	real_vfs->xDlError(real_vfs, n, msg);
}

static void (*wb_dl_sym(sqlite3_vfs *vfs, void *h, const char *sym))(void)
{
	(void)vfs;
	return real_vfs->xDlSym(real_vfs, h, sym);
}

static void wb_dl_close(sqlite3_vfs *vfs, void *h)
{
	(void)vfs;
	real_vfs->xDlClose(real_vfs, h);
}

static int wb_randomness(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return real_vfs->xRandomness(real_vfs, n, out);
}

static int wb_sleep(sqlite3_vfs *vfs, int us)
{
	(void)vfs;
	(void)flush();
	return real_vfs->xSleep(real_vfs, us);
}

static int wb_current_time(sqlite3_vfs *vfs, double *out)
{
	(void)vfs;
	return real_vfs->xCurrentTime(real_vfs, out);
}

static int wb_last_error(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return real_vfs->xGetLastError ? real_vfs->xGetLastError(real_vfs, n, out) : 0;
}

static int wb_current_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
	(void)vfs;
	return real_vfs->xCurrentTimeInt64(real_vfs, out);
}

const char *wal_batch_vfs(void)
{
	static sqlite3_vfs vfs;
	static int state; /* 0: not tried; 1: registered; -1: cannot be */

	if (state == 0) {
		state = -1;
		real_vfs = sqlite3_vfs_find(NULL);
		/* version 2 at least (xCurrentTimeInt64); SQLite's own unix VFS is 3 */
		if (real_vfs && real_vfs->iVersion >= 2) {
			vfs.iVersion = 2;
			vfs.szOsFile = (int)sizeof(struct wb_file) + real_vfs->szOsFile;
			vfs.mxPathname = real_vfs->mxPathname;
			vfs.zName = WAL_BATCH_NAME;
			vfs.xOpen = wb_open;
			vfs.xDelete = wb_delete;
			vfs.xAccess = wb_access;
			vfs.xFullPathname = wb_full_pathname;
			vfs.xDlOpen = wb_dl_open;
			vfs.xDlError = wb_dl_error;
			vfs.xDlSym = wb_dl_sym;
			vfs.xDlClose = wb_dl_close;
			vfs.xRandomness = wb_randomness;
			vfs.xSleep = wb_sleep;
			vfs.xCurrentTime = wb_current_time;
			vfs.xGetLastError = wb_last_error;
			vfs.xCurrentTimeInt64 = wb_current_time64;
			if (sqlite3_vfs_register(&vfs, 0) == SQLITE_OK)
				state = 1;
		}
	}
	return state == 1 ? WAL_BATCH_NAME : NULL;
}
