/* resources.h: what this machine offers: vcores, memory, GPUs.
 *
 * Detection reads the kernel's view (affinity mask, cgroup CPU quota,
 * /proc/meminfo, a cgroup memory limit, the NVIDIA driver's /proc and /dev
 * entries), never a vendor tool.  The parse_* helpers take text so tests can
 * feed them what a host would show.
 */
#ifndef WEIR_SERVER_RESOURCES_H
#define WEIR_SERVER_RESOURCES_H

#include <stddef.h>
#include <stdint.h>

/* CPUs this process may use: the affinity mask, lowered by a cgroup CPU
 * quota (v2 cpu.max or v1 cfs_quota/period), rounded up; at least 1. */
int resources_detect_vcores(void);
/* MemTotal, lowered by a cgroup memory limit; MiB; 0 if unknown. */
uint64_t resources_detect_memory_mb(void);
/* GPU ids "0", "1", ... from the entries of /proc/driver/nvidia/gpus or /dev/nvidiaN.
 * *ids is an array of *n newly allocated strings (NULL when none); free
 * with resources_free_ids().  0, or -1 on out of memory. */
int resources_detect_gpus(char ***ids, size_t *n);
void resources_free_ids(char **ids, size_t n);

/* cgroup v2 "cpu.max" text ("max 100000" or "150000 100000"): CPUs rounded
 * up, or 0 for no limit / unparsable. */
int resources_parse_cpu_max(const char *text);
/* /proc/meminfo text: MemTotal in MiB, or 0. */
uint64_t resources_parse_meminfo(const char *text);
/* A cgroup memory limit ("max", or bytes) in MiB; 0 for no limit. */
uint64_t resources_parse_memory_limit(const char *text);

#endif
