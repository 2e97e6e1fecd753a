import ArgumentParser
import Sluice

/// `sluice infer INPUT`: propose a mapping.
struct InferCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "infer",
        abstract: "Read a sample of an input and print a mapping for it: record paths, fields, guessed types, a key.",
        discussion: "Edit the result as needed; it imports the input as it is. Exits 65 when the sample is malformed.")

    @Option(help: "The input syntax: \(InputFormat.choices) (default: from the file name, else the first byte).")
    var format: InputFormat?

    @Option(help: "MiB of (decompressed) input to read.")
    var sampleMib = Inferrer.defaultSampleBytes >> 20

    @Argument(help: "The input (- for standard input); gzip, bzip2, zstd and xz are read directly.")
    var input: String

    func validate() throws {
        if sampleMib < 1 { throw ValidationError("--sample-mib must be at least 1.") }
    }

    func run() throws {
        do {
            let (mapping, bytes) = try Inferrer.infer(path: input, format: format, sampleBytes: sampleMib << 20)
            print(
                mapping.yaml(
                    comment:
                        "Proposed by `sluice infer` from \(input) (\(bytes) bytes read).\nCheck the types and the key, then import with --mapping."
                ), terminator: "")
        } catch {
            throw fail(error)
        }
    }
}
