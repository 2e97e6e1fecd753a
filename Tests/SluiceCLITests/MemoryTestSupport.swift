import Foundation
import SluiceTestSupport

/// Runs `executable` with standard input from `inputPath` under GNU time,
/// which forks it from its own small process; returns the exit status and
/// the child's peak resident set size in KiB. (Spawning it from the test
/// process directly would not do: posix_spawn shares the test process's
/// memory until exec, and Linux carries that high-water mark into the
/// child's ru_maxrss.)
func runMeasured(_ executable: String, _ arguments: [String], inputPath: String) throws -> (status: Int32, peakKiB: Int)
{
    let report = TestPaths.temporaryDirectory().appendingPathComponent("time.txt").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
    process.arguments = ["-f", "%M", "-o", report, executable] + arguments
    process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: inputPath))
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    let text = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
    let peak = text.split(separator: "\n").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.last ?? 0
    return (process.terminationStatus, peak)
}
