import Sluice

#if canImport(Glibc)
import Glibc
#endif

/// The end-of-run report, for people and as JSON.
enum Summary {
    /// A table of counts per entity and the totals.
    static func text(_ report: ImportReport) -> String {
        let rate = report.seconds > 0 ? Int(Double(report.records) / report.seconds) : report.records
        var lines = ["\(report.records) records, \(report.bytes) bytes in \(report.secondsText) s (\(rate) records/s)"]
        let width = max(6, report.entities.map(\.name.count).max() ?? 0)
        lines.append("entity".padding(width) + "  inserted   updated unchanged   deleted   skipped")
        for (name, counts) in report.entities {
            lines.append(
                name.padding(width) + "  " + [counts.inserted, counts.updated, counts.unchanged, counts.deleted, counts.skipped]
                    .map { String($0).leftPadding(9) }.joined(separator: " "))
        }
        lines += report.warnings.map { "warning: " + $0 }
        return lines.joined(separator: "\n")
    }

    /// Writes the report's JSON to `path`.
    static func writeJSON(_ report: ImportReport, to path: String) throws(StatsError) {
        guard let file = fopen(path, "w") else { throw StatsError(reason: String(cString: strerror(errno))) }
        let text = report.json + "\n"
        let written = fputs(text, file)
        let closed = fclose(file)
        if written < 0 || closed != 0 { throw StatsError(reason: String(cString: strerror(errno))) }
    }

    /// Why the stats file could not be written.
    struct StatsError: Error, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

}

/// A one-line progress display on standard error, for terminals only.
final class ProgressMeter: Sendable {
    private let enabled: Bool

    init(enabled: Bool) { self.enabled = enabled }

    /// Shows bytes read, records/s and, when the total is known, the ETA.
    func show(_ progress: ImportProgress) {
        guard enabled else { return }
        let rate = progress.seconds > 0 ? Double(progress.records) / progress.seconds : 0
        var line = "\r\(progress.bytesRead >> 20) MiB"
        if let total = progress.bytesTotal, total > 0 {
            let fraction = Double(progress.bytesRead) / Double(total)
            line += " of \(total >> 20) MiB (\(Int(fraction * 100))%)"
            if fraction > 0 { line += ", ETA \(Int(progress.seconds / fraction - progress.seconds)) s" }
        }
        line += ", \(progress.records) records, \(Int(rate)) records/s   "
        _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
    }

    /// Erases the progress line.
    func clear() {
        guard enabled else { return }
        printError("\r" + String(repeating: " ", count: 78) + "\r")
    }
}

extension String {
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
    func leftPadding(_ width: Int, _ pad: Character = " ") -> String {
        String(repeating: pad, count: max(0, width - count)) + self
    }
}
