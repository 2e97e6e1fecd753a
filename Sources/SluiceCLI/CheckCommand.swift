import ArgumentParser
import Sluice

/// `sluice check INPUT`: is the input well-formed?
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check that inputs are well-formed XML or JSON; write nothing.",
        discussion: """
            Checks every input and prints a line for each: well-formed, or the file, location and message.
            Exits 0 when every input is well-formed, otherwise with the code of the first failure (65 malformed, 66 not found).
            """)

    @Option(help: "The input syntax: \(InputFormat.choices) (default: from the file name, else the first byte).")
    var format: InputFormat?

    @Argument(help: "Inputs to check (- for standard input); gzip, bzip2, zstd and xz are read directly.")
    var inputs: [String]

    func run() throws {
        var failure: ExitCode?
        for input in inputs {
            do {
                let report = try Checker.check(path: input, format: format)
                print("\(input): well-formed (\(report.bytes) bytes)")
            } catch {
                let code = fail(error)
                failure = failure ?? code
            }
        }
        if let failure { throw failure }
    }
}

extension InputFormat: ExpressibleByArgument {
    /// The formats as the options' help lists them (`xml, json or jsonl`).
    static var choices: String { MappingKeywords.list(allCases.map(\.rawValue)) }
}
