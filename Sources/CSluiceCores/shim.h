// The cores a process may use: glibc's sched_getaffinity and CPU_COUNT are
// GNU extensions (a macro, for the count) that Swift's Glibc module does not
// import, and a cgroup v2 CPU quota is read from its file.
#if defined(__linux__)
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdio.h>

/// The CPUs this process may run on (its affinity mask: `taskset`, a
/// container's cpuset), or 0 when the mask cannot be read (more than 1,024
/// CPUs). One system call.
static inline int sluice_affinity_cpus(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    return CPU_COUNT(&set);
}

/// The CPUs' worth of time a cgroup v2 quota (`/sys/fs/cgroup/cpu.max`, a
/// container's `--cpus`) allows this process, rounded up; 0 when there is
/// no quota or no such file. One small file read.
static inline int sluice_quota_cpus(void) {
    FILE *file = fopen("/sys/fs/cgroup/cpu.max", "r");
    if (file == NULL) return 0;
    long long quota = 0, period = 0;
    int read = fscanf(file, "%lld %lld", &quota, &period);
    fclose(file);
    if (read != 2 || quota <= 0 || period <= 0) return 0;
    return (int)((quota + period - 1) / period);
}
#else
static inline int sluice_affinity_cpus(void) { return 0; }
static inline int sluice_quota_cpus(void) { return 0; }
#endif
