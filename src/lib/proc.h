/* proc.h: reading processes from /proc (Linux), for the launcher's and the
 * executor's sweeps: who is a child of whom, in which group or session,
 * how much memory it holds. */
#ifndef WEIR_LIB_PROC_H
#define WEIR_LIB_PROC_H

#include <stddef.h>
#include <stdint.h>

struct proc_stat {
	int pid;
	char state; /* 'R', 'S', 'Z' (zombie) ... */
	int ppid;
	int pgrp;
	int session;
	uint64_t rss_bytes;
	uint64_t
	    start_ticks; /* when it started, in clock ticks since boot: with the pid, one process */
};

/* Reads /proc/PID/stat.  0, or -1 when the process is gone. */
int proc_read_stat(int pid, struct proc_stat *out);

/* Returns non-zero to stop the walk. */
typedef int (*proc_visit_fn)(const struct proc_stat *p, void *arg);

/* Calls `fn` for every process that can be read. */
void proc_each(proc_visit_fn fn, void *arg);

/* Sends SIGKILL to every process in the session led by `sid` but the
 * caller (a detached launcher or shim leads its own session).  Returns how
 * many were signalled; 0 for sid <= 1. */
int proc_kill_session(int sid);

/* This program's own path (the link /proc/self/exe) into buf, ended.  0, or
 * -1 when it cannot be read or does not fit in `size`. */
int proc_self_path(char *buf, size_t size);

/* The path of `name` in this program's folder into buf: "DIR/name" for the
 * program DIR/weir.  0, or -1 as proc_self_path. */
int proc_self_sibling(const char *name, char *buf, size_t size);

#endif
