/* powercut_vfs.h: a SQLite VFS over the platform's that can cut the power
 * (powercut_disk.h: what the disk keeps).
 *
 * It passes every call through to the platform's VFS (the files are real
 * files) and tells the disk of every write, truncation and sync of a
 * database, WAL or rollback-journal file.  After the power cut every write,
 * truncation, sync, read and delete fails with SQLITE_IOERR (the machine is
 * off), so that closing the connection changes nothing on the disk; then
 * pc_reset() and the store is opened again, as after a reboot.
 *
 * Registered as the default VFS (pc_install()) before anything else asks
 * for the default, so that wal_batch.c, which sits over the default VFS it
 * finds at its first call, writes through this one: the power cut sees the
 * writes wal_batch.c makes, not SQLite's.
 *
 * xSync does not call fsync(2): the power is never really cut, and the
 * simulated disk's durability is the durable image.  A delete is durable at
 * once (SQLite deletes a WAL only after its checkpoint is synced).  The
 * shared-memory file is not followed: nothing in it survives a reboot
 * (SQLite rebuilds it from the WAL when it is the first to open the file
 * again, as here).
 *
 * Header only, like store_tmp.h: each unit test is a binary of its own.  One
 * thread. */
#ifndef WEIR_TESTS_POWERCUT_VFS_H
#define WEIR_TESTS_POWERCUT_VFS_H

#include <stdbool.h>
#include <string.h>

#include <sqlite3.h>

#include "powercut_disk.h"

#define PC_VFS_NAME "weir-powercut"

struct pc_file {
	sqlite3_file base;
	sqlite3_file *real;   /* right after this struct */
	struct pc_node *node; /* NULL: not followed (temporary files) */
};

static struct {
	sqlite3_vfs vfs;
	sqlite3_vfs *real;
	/* the disk does not promise that a write leaves the rest of its sectors
	 * alone (no SQLITE_IOCAP_POWERSAFE_OVERWRITE): SQLite then pads a synced
	 * commit's frames to a sector, writing its last frame again */
	bool no_psow;
} pcv;

#define PC_REAL(f) (((struct pc_file *)(f))->real)
#define PC_NODE(f) (((struct pc_file *)(f))->node)

static int pc_close(sqlite3_file *f)
{
	return PC_REAL(f)->pMethods->xClose(PC_REAL(f));
}

static int pc_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
	if (pc.dead)
		return SQLITE_IOERR_READ;
	return PC_REAL(f)->pMethods->xRead(PC_REAL(f), buf, n, off);
}

static int pc_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
	int rc;

	if (PC_NODE(f) && !pc_event())
		return SQLITE_IOERR_WRITE;
	if (pc.dead)
		return SQLITE_IOERR_WRITE;
	rc = PC_REAL(f)->pMethods->xWrite(PC_REAL(f), buf, n, off);
	if (rc == SQLITE_OK && PC_NODE(f))
		pc_op_add(PC_NODE(f), false, off, buf, (size_t)n);
	return rc;
}

static int pc_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	int rc;

	if ((PC_NODE(f) && !pc_event()) || pc.dead)
		return SQLITE_IOERR_TRUNCATE;
	rc = PC_REAL(f)->pMethods->xTruncate(PC_REAL(f), size);
	if (rc == SQLITE_OK && PC_NODE(f))
		pc_op_add(PC_NODE(f), true, size, NULL, 0);
	return rc;
}

static int pc_sync(sqlite3_file *f, int flags)
{
	struct pc_node *n = PC_NODE(f);

	(void)flags;
	if ((n && !pc_event()) || pc.dead)
		return SQLITE_IOERR_FSYNC;
	if (n)
		pc_synced(n);
	return SQLITE_OK;
}

static int pc_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return PC_REAL(f)->pMethods->xFileSize(PC_REAL(f), size);
}

static int pc_lock(sqlite3_file *f, int level)
{
	return PC_REAL(f)->pMethods->xLock(PC_REAL(f), level);
}

static int pc_unlock(sqlite3_file *f, int level)
{
	return PC_REAL(f)->pMethods->xUnlock(PC_REAL(f), level);
}

static int pc_check_reserved(sqlite3_file *f, int *out)
{
	return PC_REAL(f)->pMethods->xCheckReservedLock(PC_REAL(f), out);
}

static int pc_file_control(sqlite3_file *f, int op, void *arg)
{
	return PC_REAL(f)->pMethods->xFileControl(PC_REAL(f), op, arg);
}

static int pc_sector_size(sqlite3_file *f)
{
	return PC_REAL(f)->pMethods->xSectorSize(PC_REAL(f));
}

static int pc_device_characteristics(sqlite3_file *f)
{
	int c = PC_REAL(f)->pMethods->xDeviceCharacteristics(PC_REAL(f));
	return pcv.no_psow ? c & ~SQLITE_IOCAP_POWERSAFE_OVERWRITE : c;
}

static int pc_shm_map(sqlite3_file *f, int page, int size, int extend, void volatile **out)
{
	return PC_REAL(f)->pMethods->xShmMap(PC_REAL(f), page, size, extend, out);
}

static int pc_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
	return PC_REAL(f)->pMethods->xShmLock(PC_REAL(f), offset, n, flags);
}

static void pc_shm_barrier(sqlite3_file *f)
{
	PC_REAL(f)->pMethods->xShmBarrier(PC_REAL(f));
}

static int pc_shm_unmap(sqlite3_file *f, int del)
{
	return PC_REAL(f)->pMethods->xShmUnmap(PC_REAL(f), del);
}

/* No memory-mapped reads: every byte SQLite reads comes through pc_read. */
static int pc_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **out)
{
	(void)f;
	(void)off;
	(void)n;
	*out = NULL;
	return SQLITE_OK;
}

static int pc_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	(void)f;
	(void)off;
	(void)p;
	return SQLITE_OK;
}

static const sqlite3_io_methods pc_methods = {3,
                                              pc_close,
                                              pc_read,
                                              pc_write,
                                              pc_truncate,
                                              pc_sync,
                                              pc_file_size,
                                              pc_lock,
                                              pc_unlock,
                                              pc_check_reserved,
                                              pc_file_control,
                                              pc_sector_size,
                                              pc_device_characteristics,
                                              pc_shm_map,
                                              pc_shm_lock,
                                              pc_shm_barrier,
                                              pc_shm_unmap,
                                              pc_fetch,
                                              pc_unfetch};

static int pc_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags,
                   int *out_flags)
{
	struct pc_file *p = (struct pc_file *)f;
	int rc;

	(void)vfs;
	memset(p, 0, sizeof *p);
	p->real = (sqlite3_file *)(p + 1);
	if (pc.dead)
		return SQLITE_CANTOPEN;
	if (name && (flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL)))
		p->node = pc_node_of(name, (flags & SQLITE_OPEN_WAL) != 0);
	rc = pcv.real->xOpen(pcv.real, name, p->real, flags, out_flags);
	p->base.pMethods = p->real->pMethods ? &pc_methods : NULL;
	return rc;
}

static int pc_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
	(void)vfs;
	if (pc.dead)
		return SQLITE_IOERR_DELETE;
	pc_node_forget(name);
	return pcv.real->xDelete(pcv.real, name, sync_dir);
}

static int pc_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	(void)vfs;
	return pcv.real->xAccess(pcv.real, name, flags, out);
}

static int pc_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	(void)vfs;
	return pcv.real->xFullPathname(pcv.real, name, n, out);
}

static int pc_randomness(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return pcv.real->xRandomness(pcv.real, n, out);
}

static int pc_sleep(sqlite3_vfs *vfs, int us)
{
	(void)vfs;
	return pcv.real->xSleep(pcv.real, us);
}

static int pc_current_time(sqlite3_vfs *vfs, double *out)
{
	(void)vfs;
	return pcv.real->xCurrentTime(pcv.real, out);
}

static int pc_last_error(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return pcv.real->xGetLastError ? pcv.real->xGetLastError(pcv.real, n, out) : 0;
}

static int pc_current_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
	(void)vfs;
	return pcv.real->xCurrentTimeInt64(pcv.real, out);
}

/* Registers the VFS as the default, over the platform's.  0, or -1. */
static int pc_install(void)
{
	pcv.real = sqlite3_vfs_find(NULL);
	if (!pcv.real || pcv.real->iVersion < 2)
		return -1;
	pcv.vfs.iVersion = 2;
	pcv.vfs.szOsFile = (int)sizeof(struct pc_file) + pcv.real->szOsFile;
	pcv.vfs.mxPathname = pcv.real->mxPathname;
	pcv.vfs.zName = PC_VFS_NAME;
	pcv.vfs.xOpen = pc_open;
	pcv.vfs.xDelete = pc_delete;
	pcv.vfs.xAccess = pc_access;
	pcv.vfs.xFullPathname = pc_full_pathname;
	pcv.vfs.xRandomness = pc_randomness;
	pcv.vfs.xSleep = pc_sleep;
	pcv.vfs.xCurrentTime = pc_current_time;
	pcv.vfs.xGetLastError = pc_last_error;
	pcv.vfs.xCurrentTimeInt64 = pc_current_time64;
	return sqlite3_vfs_register(&pcv.vfs, 1) == SQLITE_OK ? 0 : -1;
}

#endif
