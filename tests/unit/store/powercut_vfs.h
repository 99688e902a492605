/* powercut_vfs.h: a SQLite VFS over the platform's that can cut the power.
 *
 * It passes every call through to the platform's VFS (the files are real
 * files) and remembers, for each database, WAL and rollback-journal file,
 * what the disk holds for sure: the file as of its last xSync (its durable
 * image), and the writes and truncations made since, in order.  At the
 * power cut (the Nth write, truncation or sync since pc_arm(), or
 * pc_cut() called by hand) each file is rewritten as a disk could have left
 * it: its durable image, with none, some or all of the unsynced operations
 * applied (pc_mode), a write applied whole, torn (a prefix of its 512-byte
 * sectors) or sector by sector at random.  From then on every write,
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

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#define PC_VFS_NAME "weir-powercut"
#define PC_SECTOR 512

/* What a power cut keeps of the operations made since a file's last sync. */
enum pc_mode {
	PC_DROP_ALL,    /* none: the durable image only */
	PC_PREFIX_TORN, /* the first k operations in order, the next one torn */
	PC_SECTORS,     /* each write's sectors, each truncation, kept or not at random */
	PC_KEEP_ALL,    /* every one (what a process's death leaves) */
	PC_MODES
};

struct pc_op {
	bool truncate;
	sqlite3_int64 off; /* the write's offset, or the truncation's size */
	size_t len;
	char *data;
};

/* One path's simulated disk. */
struct pc_node {
	char *path;
	char *img; /* the durable image */
	size_t img_len, img_cap;
	struct pc_op *ops; /* since the last sync, in order */
	size_t n_ops, cap_ops;
	bool wal;
	struct pc_node *next;
};

struct pc_file {
	sqlite3_file base;
	sqlite3_file *real;   /* right after this struct */
	struct pc_node *node; /* NULL: not followed (temporary files) */
};

static struct {
	sqlite3_vfs vfs;
	sqlite3_vfs *real;
	struct pc_node *nodes;
	uint64_t events;    /* writes, truncations and syncs since pc_arm() */
	uint64_t cut_at;    /* the event that is cut (0: none) */
	uint64_t wal_syncs; /* syncs of a WAL that completed */
	uint64_t rng;
	enum pc_mode mode;
	bool armed, dead;
	/* the disk does not promise that a write leaves the rest of its sectors
	 * alone (no SQLITE_IOCAP_POWERSAFE_OVERWRITE): SQLite then pads a synced
	 * commit's frames to a sector, writing its last frame again */
	bool no_psow;
} pc;

static uint64_t pc_rand(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Grows `img` to hold `len` bytes, the new ones zero (a hole reads as zero). */
static void pc_img_size(struct pc_node *n, size_t len)
{
	if (len > n->img_cap) {
		size_t cap = n->img_cap ? n->img_cap : 4096;
		while (cap < len)
			cap *= 2;
		n->img = realloc(n->img, cap);
		if (!n->img)
			abort();
		n->img_cap = cap;
	}
	if (len > n->img_len)
		memset(n->img + n->img_len, 0, len - n->img_len);
	n->img_len = len;
}

static void pc_img_write(struct pc_node *n, sqlite3_int64 off, const char *data, size_t len)
{
	if ((size_t)off + len > n->img_len)
		pc_img_size(n, (size_t)off + len);
	memcpy(n->img + off, data, len);
}

static void pc_ops_clear(struct pc_node *n)
{
	for (size_t i = 0; i < n->n_ops; i++)
		free(n->ops[i].data);
	n->n_ops = 0;
}

static void pc_node_free(struct pc_node *n)
{
	pc_ops_clear(n);
	free(n->ops);
	free(n->img);
	free(n->path);
	free(n);
}

/* The node of `path`, made with the file's present bytes as its durable
 * image when none is followed yet. */
static struct pc_node *pc_node_of(const char *path, bool wal)
{
	struct pc_node *n;
	int fd;

	for (n = pc.nodes; n; n = n->next)
		if (!strcmp(n->path, path))
			return n;
	n = calloc(1, sizeof *n);
	if (!n || !(n->path = strdup(path)))
		abort();
	n->wal = wal;
	if ((fd = open(path, O_RDONLY)) >= 0) {
		struct stat st;
		if (fstat(fd, &st) == 0 && st.st_size > 0) {
			pc_img_size(n, (size_t)st.st_size);
			if (pread(fd, n->img, n->img_len, 0) != (ssize_t)n->img_len)
				abort();
		}
		close(fd);
	}
	n->next = pc.nodes;
	pc.nodes = n;
	return n;
}

static void pc_node_forget(const char *path)
{
	for (struct pc_node **p = &pc.nodes; *p; p = &(*p)->next)
		if (!strcmp((*p)->path, path)) {
			struct pc_node *n = *p;
			*p = n->next;
			pc_node_free(n);
			return;
		}
}

static void pc_op_add(struct pc_node *n, bool truncate, sqlite3_int64 off, const void *data,
                      size_t len)
{
	struct pc_op *op;

	if (n->n_ops == n->cap_ops) {
		n->cap_ops = n->cap_ops ? 2 * n->cap_ops : 16;
		n->ops = realloc(n->ops, n->cap_ops * sizeof *n->ops);
		if (!n->ops)
			abort();
	}
	op = &n->ops[n->n_ops++];
	op->truncate = truncate;
	op->off = off;
	op->len = len;
	op->data = NULL;
	if (len) {
		if (!(op->data = malloc(len)))
			abort();
		memcpy(op->data, data, len);
	}
}

/* Applies `op` to the image: whole (all), its first `sectors` sectors
 * (counted from the file's own sector boundaries), or each sector at random
 * (random). */
static void pc_op_apply(struct pc_node *n, const struct pc_op *op, bool all, size_t sectors,
                        bool random)
{
	if (op->truncate) {
		if (all || (random && (pc_rand(&pc.rng) & 1)))
			pc_img_size(n, (size_t)op->off);
		return;
	}
	size_t done = 0, k = 0;
	while (done < op->len) {
		sqlite3_int64 at = op->off + (sqlite3_int64)done;
		size_t chunk = PC_SECTOR - (size_t)(at % PC_SECTOR);
		if (chunk > op->len - done)
			chunk = op->len - done;
		bool keep = all || (random ? (pc_rand(&pc.rng) & 1) : k < sectors);
		if (keep)
			pc_img_write(n, at, op->data + done, chunk);
		done += chunk;
		k++;
	}
}

/* The power cut: every followed file becomes what the disk kept, and the
 * machine is off. */
static void pc_cut(void)
{
	for (struct pc_node *n = pc.nodes; n; n = n->next) {
		size_t keep = n->n_ops ? (size_t)(pc_rand(&pc.rng) % (n->n_ops + 1)) : 0;
		for (size_t i = 0; i < n->n_ops; i++) {
			const struct pc_op *op = &n->ops[i];
			switch (pc.mode) {
			case PC_DROP_ALL:
			case PC_MODES:
				break;
			case PC_PREFIX_TORN:
				if (i < keep)
					pc_op_apply(n, op, true, 0, false);
				else if (i == keep)
					pc_op_apply(
					    n, op, false,
					    (size_t)(pc_rand(&pc.rng) % (op->len / PC_SECTOR + 1)),
					    false);
				break;
			case PC_SECTORS:
				pc_op_apply(n, op, false, 0, true);
				break;
			case PC_KEEP_ALL:
				pc_op_apply(n, op, true, 0, false);
				break;
			}
		}
		pc_ops_clear(n);
		int fd = open(n->path, O_WRONLY | O_CREAT, 0644);
		if (fd < 0 || ftruncate(fd, (off_t)n->img_len) != 0 ||
		    (n->img_len && pwrite(fd, n->img, n->img_len, 0) != (ssize_t)n->img_len))
			abort();
		close(fd);
	}
	pc.dead = true;
}

/* A write, truncation or sync is about to happen: false when the power is
 * (or goes) off at it. */
static bool pc_event(void)
{
	if (pc.dead)
		return false;
	if (!pc.armed)
		return true;
	if (++pc.events == pc.cut_at) {
		pc_cut();
		return false;
	}
	return true;
}

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
	if (!n)
		return SQLITE_OK;
	for (size_t i = 0; i < n->n_ops; i++)
		pc_op_apply(n, &n->ops[i], true, 0, false);
	pc_ops_clear(n);
	if (n->wal)
		pc.wal_syncs++;
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
	return pc.no_psow ? c & ~SQLITE_IOCAP_POWERSAFE_OVERWRITE : c;
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
	rc = pc.real->xOpen(pc.real, name, p->real, flags, out_flags);
	p->base.pMethods = p->real->pMethods ? &pc_methods : NULL;
	return rc;
}

static int pc_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
	(void)vfs;
	if (pc.dead)
		return SQLITE_IOERR_DELETE;
	pc_node_forget(name);
	return pc.real->xDelete(pc.real, name, sync_dir);
}

static int pc_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	(void)vfs;
	return pc.real->xAccess(pc.real, name, flags, out);
}

static int pc_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	(void)vfs;
	return pc.real->xFullPathname(pc.real, name, n, out);
}

static int pc_randomness(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return pc.real->xRandomness(pc.real, n, out);
}

static int pc_sleep(sqlite3_vfs *vfs, int us)
{
	(void)vfs;
	return pc.real->xSleep(pc.real, us);
}

static int pc_current_time(sqlite3_vfs *vfs, double *out)
{
	(void)vfs;
	return pc.real->xCurrentTime(pc.real, out);
}

static int pc_last_error(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return pc.real->xGetLastError ? pc.real->xGetLastError(pc.real, n, out) : 0;
}

static int pc_current_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
	(void)vfs;
	return pc.real->xCurrentTimeInt64(pc.real, out);
}

/* Registers the VFS as the default, over the platform's.  0, or -1. */
static int pc_install(void)
{
	pc.real = sqlite3_vfs_find(NULL);
	if (!pc.real || pc.real->iVersion < 2)
		return -1;
	pc.vfs.iVersion = 2;
	pc.vfs.szOsFile = (int)sizeof(struct pc_file) + pc.real->szOsFile;
	pc.vfs.mxPathname = pc.real->mxPathname;
	pc.vfs.zName = PC_VFS_NAME;
	pc.vfs.xOpen = pc_open;
	pc.vfs.xDelete = pc_delete;
	pc.vfs.xAccess = pc_access;
	pc.vfs.xFullPathname = pc_full_pathname;
	pc.vfs.xRandomness = pc_randomness;
	pc.vfs.xSleep = pc_sleep;
	pc.vfs.xCurrentTime = pc_current_time;
	pc.vfs.xGetLastError = pc_last_error;
	pc.vfs.xCurrentTimeInt64 = pc_current_time64;
	return sqlite3_vfs_register(&pc.vfs, 1) == SQLITE_OK ? 0 : -1;
}

/* The power back on: nothing followed (the files' present bytes are durable
 * from here), nothing armed; the disk's no_psow as it was. */
static void pc_reset(void)
{
	while (pc.nodes) {
		struct pc_node *n = pc.nodes;
		pc.nodes = n->next;
		pc_node_free(n);
	}
	pc.events = pc.cut_at = pc.wal_syncs = 0;
	pc.armed = pc.dead = false;
}

/* Counts writes, truncations and syncs from now on; the power goes off at
 * the `cut_at`th (0: never), and the disk keeps what `mode` says, drawn
 * with `seed`. */
static void pc_arm(uint64_t cut_at, enum pc_mode mode, uint64_t seed)
{
	pc.events = 0;
	pc.cut_at = cut_at;
	pc.mode = mode;
	pc.rng = seed;
	pc.armed = true;
}

#endif
