import CSluiceCores

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension ImportOptions {
    /// The most threads ``defaultThreads`` gives: a run at 16 threads peaked
    /// at 61.1 MiB against 55.4 at one (200,000 events into a new SQLite
    /// store, record digests kept; docs/performance.md), each thread holding
    /// about 1.5 MiB while it works. At 2,000,000 events runs on 2 to 16
    /// threads peaked at 59.4 to 62.3 MiB against 57.7 at one with the
    /// `sluice` command's one malloc arena, up to 67 MiB at 16 threads with
    /// glibc's arena a thread (docs/performance.md, "Runs, items and malloc
    /// arenas with threads"; GettingStarted has the setting). A larger
    /// ``threads`` may still be set.
    public static let maxDefaultThreads = 16

    /// The default of ``threads``, for the library and the CLI alike: the
    /// cores this process may use, at most ``maxDefaultThreads``. On Linux
    /// the CPUs of its affinity mask (`sched_getaffinity(2)`: what
    /// `taskset` and a container's cpuset allow, where the count of CPUs
    /// online would count cores the process cannot run on), fewer when a
    /// cgroup v2 quota (`/sys/fs/cgroup/cpu.max`, a container's `--cpus`)
    /// allows less time, rounded up; elsewhere the CPUs online. Worked out
    /// once per process: a system call and one small file read.
    public static let defaultThreads: Int = {
        var cores = Int(sluice_affinity_cpus())
        if cores < 1 { cores = sysconf(Int32(_SC_NPROCESSORS_ONLN)) }
        let quota = Int(sluice_quota_cpus())
        if quota > 0 { cores = min(cores, quota) }
        return max(1, min(cores, maxDefaultThreads))
    }()
}
