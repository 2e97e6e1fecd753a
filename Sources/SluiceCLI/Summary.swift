import Sluice

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The end-of-run report, for people and as JSON.
enum Summary {
    /// The totals, then a line per table the mapping has: entity tables
    /// (with the stub rows among their inserts) and link tables (links
    /// added and removed); a dry run says so first. Warnings go to standard
    /// error, not here.
    static func text(_ report: ImportReport) -> String {
        let rate = report.seconds > 0 ? Int(Double(report.records) / report.seconds) : report.records
        var lines =
            report.dryRun ? ["dry run: nothing was written to the store; the counts are what the run would write"] : []
        lines.append(
            "\(ProgressDisplay.grouped(report.records)) records, \(ProgressDisplay.grouped(Int(report.bytes))) bytes in \(report.secondsText) s "
                + "(\(ProgressDisplay.grouped(rate)) records/s)")
        if report.unchangedRecords > 0 {
            lines.append(
                "\(ProgressDisplay.grouped(report.unchangedRecords)) of them unchanged since the last run, not parsed (--no-skip parses them)"
            )
        }
        if let fullPass = report.fullPass { lines.append("every record parsed: \(fullPass)") }
        let tables = report.tables
        let width = max(5, tables.map(\.name.count).max() ?? 0)
        let headings = ["inserted", "updated", "unchanged", "deleted", "skipped", "stubs"]
        lines.append("table".padding(width) + "  " + "kind".padding(6) + headings.map { $0.leftPadding(10) }.joined())
        for table in tables {
            let skipped = table.kind == .entity ? String(report[entity: table.name]?.skipped ?? 0) : ""
            let cells =
                table.kind == .entity
                ? [
                    String(table.inserted), String(table.updated), String(table.unchanged), String(table.deleted),
                    skipped, String(table.stubs),
                ]
                : [String(table.inserted), "", "", String(table.deleted), "", ""]
            lines.append(
                table.name.padding(width) + "  " + table.kind.rawValue.padding(6)
                    + cells.map { $0.leftPadding(10) }.joined())
        }
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

extension String {
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
    func leftPadding(_ width: Int, _ pad: Character = " ") -> String {
        String(repeating: pad, count: max(0, width - count)) + self
    }
}
