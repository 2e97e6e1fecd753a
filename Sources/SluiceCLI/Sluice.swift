import ArgumentParser
import Sluice

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `sluice` command.
@main
struct SluiceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sluice",
        abstract: "Keep a SQLite store in step with a huge XML or JSON dump, streaming.",
        version: "0.1.0",
        subcommands: [ImportCommand.self, CheckCommand.self, InferCommand.self, StatusCommand.self])
}

/// Exit codes, as in sysexits.h.
enum ExitStatus {
    static let usage: Int32 = 64
    static let dataError: Int32 = 65
    static let noInput: Int32 = 66
    static let ioError: Int32 = 74
    static let config: Int32 = 78

    /// The exit code for an import error.
    static func code(for error: ImportError) -> Int32 {
        switch error {
        case .input(.notFound), .input(.unreadable): return noInput
        case .input, .damagedInput, .source: return dataError
        case .parse, .danglingReferences, .deletionLimit: return dataError
        case .mapping: return config
        case .store, .spill: return ioError
        case .cancelled: return 130
        case .usage: return usage
        }
    }
}

/// Writes a line to standard error.
func printError(_ text: String) {
    let line = text + "\n"
    _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
}

/// Fails the command with `error`'s message and exit code.
func fail(_ error: ImportError) -> ExitCode {
    printError("sluice: \(error)")
    return ExitCode(ExitStatus.code(for: error))
}
