/* wal_batch.h: a SQLite VFS over the platform's own that writes a commit's
 * WAL frames in one write.
 *
 * SQLite writes each frame of a commit with two calls (its 24-byte header,
 * then the page): about 30 write(2)s a task for the store's ~15 pages.  This
 * VFS keeps the writes that extend the -wal file one after the other in a
 * buffer and writes them as one, before any other call SQLite makes through
 * it, on any file: a read, a sync, a size, a truncation, a lock, and the
 * shared-memory calls (the barrier SQLite passes before it publishes a
 * commit's frames to readers).  So every byte is in the file before SQLite
 * could read it, sync it, or tell a reader it is there, as with the plain
 * VFS; a crash before that loses what a crash in the middle of the frames'
 * writes loses (a commit not yet published, which recovery drops either
 * way).
 *
 * One thread: the buffer is the process's (the server's loop owns the
 * store).  Everything else passes through.
 */
#ifndef WEIR_STORE_WAL_BATCH_H
#define WEIR_STORE_WAL_BATCH_H

/* The VFS's name for sqlite3_open_v2(), registered (not as the default)
 * at the first call; NULL when it cannot be (the plain VFS is used then). */
const char *wal_batch_vfs(void);

#endif
