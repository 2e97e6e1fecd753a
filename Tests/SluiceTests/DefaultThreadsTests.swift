import Foundation
import Sluice
import Testing

/// The default of ``ImportOptions/threads`` (issue 28, point 1): the cores
/// the process may use, here read another way than the library reads them
/// (the kernel's list of the CPUs it allows in `/proc/self/status`, and
/// the cgroup v2 quota's file), at most 16.
@Suite struct DefaultThreadsTests {
    /// The CPUs of `Cpus_allowed_list:` (as `0-3,8,10-11`); nil where there
    /// is no `/proc`.
    static func allowedCPUs() throws -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        let field = "Cpus_allowed_list:"
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix(field) })
        var count = 0
        for range in line.dropFirst(field.count).trimmingCharacters(in: .whitespaces).split(separator: ",") {
            let bounds = range.split(separator: "-").compactMap { Int($0) }
            count += bounds.count == 2 ? bounds[1] - bounds[0] + 1 : 1
        }
        return count
    }

    /// The CPUs' worth of time a cgroup v2 quota allows, rounded up; nil
    /// without one.
    static func quotaCPUs() -> Int? {
        guard let text = try? String(contentsOfFile: "/sys/fs/cgroup/cpu.max", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard fields.count == 2, fields[0] > 0, fields[1] > 0 else { return nil }
        return (fields[0] + fields[1] - 1) / fields[1]
    }

    @Test func theDefaultIsTheCoresTheProcessMayUseAtMostSixteen() throws {
        var cores = try Self.allowedCPUs() ?? ProcessInfo.processInfo.activeProcessorCount
        if let quota = Self.quotaCPUs() { cores = min(cores, quota) }
        let expected = max(1, min(cores, 16))
        #expect(ImportOptions.maxDefaultThreads == 16)
        #expect(ImportOptions.defaultThreads == expected, "\(cores) cores")
        #expect(ImportOptions().threads == expected)
    }
}
