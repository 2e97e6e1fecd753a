import ArgumentParser
import Sluice

/// `sluice check INPUT`: is the input well-formed?
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check that inputs are well-formed XML or JSON; write nothing.",
        discussion: "Exits 0 when every input is well-formed, 65 with the file, location and message otherwise.")

    @Option(help: "The input syntax: xml, json or jsonl (default: from the file name, else the first byte).")
    var format: InputFormat?

    @Argument(help: "Inputs to check (- for standard input); gzip, bzip2, zstd and xz are read directly.")
    var inputs: [String]

    func run() throws {
        for input in inputs {
            do {
                let report = try Checker.check(path: input, format: format)
                print("\(input): well-formed (\(report.bytes) bytes)")
            } catch {
                throw fail(error)
            }
        }
    }
}

extension InputFormat: ExpressibleByArgument {}
