import ArgumentParser
import Foundation
import Sluice

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How `sluice import` shows progress on standard error.
enum ProgressStyle: String, ExpressibleByArgument, CaseIterable {
    /// One line that redraws itself: phase, amounts, rate and ETA.
    case bar
    /// One JSON object per line (an ``ImportProgress``), for schedulers.
    case json
    /// Nothing.
    case none
}

/// Shows an import's progress on standard error, at most
/// ``redrawsPerSecond`` times a second (and at every change of phase or
/// table), so a fast run does not spend its time drawing.
final class ProgressDisplay: @unchecked Sendable {
    static let redrawsPerSecond = 10.0
    /// JSON lines come at most this often (a scheduler polls, it does not watch).
    static let jsonLinesPerSecond = 2.0

    private let style: ProgressStyle
    private let lock = NSLock()
    private var lastShown = -Double.infinity
    private var lastPhase: ImportProgress.Phase?
    private var lastTable: String?
    private var drawn = false
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    init(style: ProgressStyle) { self.style = style }

    /// Takes a report from the import (any thread).
    func show(_ progress: ImportProgress) {
        guard style != .none else { return }
        lock.withLock {
            let interval = 1 / (style == .json ? Self.jsonLinesPerSecond : Self.redrawsPerSecond)
            let changed = progress.phase != lastPhase || progress.table != lastTable
            guard changed || progress.seconds - lastShown >= interval else { return }
            lastShown = progress.seconds
            lastPhase = progress.phase
            lastTable = progress.table
            switch style {
            case .bar:
                let line = "\r" + Self.line(progress)
                writeError(line + String(repeating: " ", count: max(0, 79 - line.count)))
                drawn = true
            case .json:
                if let data = try? encoder.encode(progress) { writeError(String(decoding: data, as: UTF8.self) + "\n") }
            case .none: break
            }
        }
    }

    /// Writes a warning: a line of text, or `{"warning": ...}` in JSON style.
    func warn(_ message: String) {
        lock.withLock {
            eraseBar()
            if style == .json {
                writeError(#"{"warning":"# + Self.quoted(message) + "}\n")
            } else {
                writeError("warning: \(message)\n")
            }
        }
    }

    /// Writes the error that ended the run: `sluice: ...` or, in JSON style,
    /// `{"error": ..., "exit": N}`.
    func fail(_ message: String, exit: Int32) {
        lock.withLock {
            eraseBar()
            if style == .json {
                writeError(#"{"error":"# + Self.quoted(message) + #","exit":\#(exit)}"# + "\n")
            } else {
                writeError("sluice: \(message)\n")
            }
        }
    }

    /// Erases the bar, before a summary or an error is written.
    func clear() { lock.withLock { eraseBar() } }

    private func eraseBar() {
        guard drawn else { return }
        writeError("\r" + String(repeating: " ", count: 79) + "\r")
        drawn = false
    }

    /// The bar's text for one report, e.g. `reading 412 of 914 MiB (45%),
    /// 180,000 records, 52,000 records/s, ETA 1:05`.
    static func line(_ progress: ImportProgress) -> String {
        var parts: [String]
        switch progress.phase {
        case .reading:
            var read = "reading \(progress.bytesRead >> 20)"
            if let total = progress.bytesTotal, total > 0 {
                read += " of \(total >> 20) MiB (\(Int(100 * Double(progress.bytesRead) / Double(total)))%)"
            } else {
                read += " MiB"
            }
            let rate = progress.seconds > 0 ? Int(Double(progress.records) / progress.seconds) : 0
            parts = [read, "\(grouped(progress.records)) records", "\(grouped(rate)) records/s"]
        case .applying:
            var applied = "applying \(progress.table ?? "")"
            if let total = progress.rowsTotal, total > 0 {
                applied +=
                    ": \(grouped(progress.rowsApplied)) of \(grouped(total)) rows (\(min(100, 100 * progress.rowsApplied / total))%)"
            }
            parts = [applied]
        case .deleting: parts = ["deleting the rows of \(progress.table ?? "") the run did not see"]
        case .checking: parts = ["counting links to records not in the store"]
        case .done: parts = ["done in \(clock(progress.seconds))"]
        }
        if progress.phase != .done, let left = progress.secondsLeft { parts.append("ETA \(clock(left))") }
        return parts.joined(separator: ", ")
    }

    /// `1:05`, `12:00:07`.
    static func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(rest))" : "\(minutes):\(two(rest))"
    }

    /// `1,234,567`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return (value < 0 ? "-" : "") + out
    }

    /// `text` as the inside of a JSON string.
    static func quoted(_ text: String) -> String {
        let data = (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

/// Writes `text` to standard error as it is.
func writeError(_ text: String) {
    _ = text.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
}
