#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process that runs an import, as a ledger records it so that a later
/// process can tell whether that run's process still exists: the host name,
/// the process id, and on Linux what makes the pair unique over time (the
/// kernel's boot id, the PID namespace and the process's start time, so that
/// a reused pid or a restarted host is not taken for the run).
package struct ProcessIdentity: Equatable, Sendable {
    /// The host name (`gethostname`).
    package var host: String
    package var pid: Int32
    /// `boot-id/pid-namespace/start-ticks` on Linux; nil elsewhere, where
    /// the pid alone is checked.
    package var start: String?

    /// What a ledger can say of a run recorded as running.
    package enum Liveness: Equatable, Sendable {
        /// Its process exists.
        case alive
        /// Its process is gone (or the host restarted since): the run died.
        case dead
        /// Its process cannot be checked from here; the text says why.
        case unknown(String)
    }

    /// This process. Reads two small files under /proc on Linux.
    package static let current = ProcessIdentity(host: hostName(), pid: getpid(), start: startToken(of: getpid()))

    /// Whether this identity's process still exists, judged from `here` (by
    /// default this process): dead when `here` is the same host and the pid
    /// is gone or belongs to a process started at another time, or when the
    /// host restarted since; unknown on another host or in another PID
    /// namespace. Costs a `kill(pid, 0)` or one read of /proc/PID/stat.
    package func liveness(from here: ProcessIdentity = .current) -> Liveness {
        guard host == here.host else {
            return .unknown(
                "it ran on host \(host), pid \(pid); sluice cannot tell from \(here.host) whether it still runs")
        }
        switch (start.map(Self.parts), here.start.map(Self.parts)) {
        case (nil, nil):
            return kill(pid, 0) == 0 || errno == EPERM ? .alive : .dead
        case (let recorded?, let mine?):
            if recorded.boot != mine.boot { return .dead }
            if recorded.namespace != mine.namespace {
                return .unknown(
                    "it ran as pid \(pid) in another PID namespace (container) of this host; sluice cannot tell from here whether it still runs"
                )
            }
            return Self.startTicks(of: pid) == recorded.ticks ? .alive : .dead
        default:
            return .unknown("it ran as pid \(pid) on a system whose process start times differ from this one's")
        }
    }

    private static func parts(_ token: String) -> (boot: Substring, namespace: Substring, ticks: Substring) {
        let fields = token.split(separator: "/", omittingEmptySubsequences: false)
        return fields.count == 3 ? (fields[0], fields[1], fields[2]) : ("", "", Substring(token))
    }

    private static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        let name = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: name, as: UTF8.self)
    }

    /// `boot-id/pid-namespace/start-ticks` of process `pid`, nil where there
    /// is no /proc.
    private static func startToken(of pid: Int32) -> String? {
        #if canImport(Glibc)
            guard let ticks = startTicks(of: pid) else { return nil }
            let boot = readSmallFile("/proc/sys/kernel/random/boot_id") ?? ""
            var link = [CChar](repeating: 0, count: 64)
            let length = readlink("/proc/self/ns/pid", &link, link.count - 1)
            let namespace =
                length > 0 ? String(decoding: link[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
            return "\(boot.filter { !$0.isWhitespace })/\(namespace)/\(ticks)"
        #else
            return nil
        #endif
    }

    /// The start time of process `pid` in clock ticks since boot (field 22
    /// of /proc/PID/stat), nil when there is no such process or it is a
    /// zombie (dead, not yet reaped).
    private static func startTicks(of pid: Int32) -> Substring? {
        // The command name, field 2, is in parentheses and may hold spaces
        // and parentheses: the fields after the last `)` are unambiguous.
        guard let stat = readSmallFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, fields[0] != "Z", fields[0] != "X" else { return nil }
        return fields[19]
    }

    /// The first 4 KiB of the file at `path`, nil when it cannot be read.
    private static func readSmallFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
    }
}
