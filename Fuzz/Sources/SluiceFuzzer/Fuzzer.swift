import Foundation
import Sluice

/// Hands control to libFuzzer's driver, which parses its own options
/// (`-max_total_time=60`, a corpus directory…) and calls ``fuzz(_:_:)``.
@main
enum Fuzzer {
    static func main() {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(llvmFuzzerRunDriver(&argc, &argv, fuzz))
    }
}

@_silgen_name("LLVMFuzzerRunDriver")
func llvmFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

/// libFuzzer's entry point: each input is checked as XML, as JSON and as
/// JSON Lines, and imported as JSON Lines with a small mapping into a
/// store in a temporary directory. An input may fail as a parse or mapping
/// error; anything else — a crash, a store error — is a finding.
func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-fuzz-\(getpid())")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let input = directory.appendingPathComponent("input").path
    FileManager.default.createFile(atPath: input, contents: Data(bytes: data, count: count))
    for format in InputFormat.allCases {
        do { _ = try Checker.check(path: input, format: format) } catch {
            if case .parse = error { continue }
            finding("check as \(format): \(error)")
        }
    }
    let store = directory.appendingPathComponent("store.sqlite").path
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store + suffix) }
    var options = ImportOptions()
    options.format = .jsonl
    do {
        let importer = try Importer(mapping: mapping, store: store, options: options)
        _ = try importer.runBlocking(inputs: [input])
    } catch {
        switch error {
        case .parse, .danglingReferences: break
        default: finding("import: \(error)")
        }
    }
    return 0
}

/// Reports what the input did and aborts, which libFuzzer records as a
/// crash, keeping the input.
private func finding(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("sluice fuzz finding: " + message + "\n").utf8))
    abort()
}

private let mapping: Mapping = {
    do {
        return try Mapping.parse(
            yaml: """
                entities:
                  Event:
                    records: $
                    key: id
                    attributes: {id: integer, type: string, at: date, n: double, ok: boolean, text: string}
                    relationships:
                      actor: {entity: Actor, source: actor}
                      tags: {entity: Tag, source: "tags[*]", many: true, missing: stub}
                  Actor: {key: id, attributes: {id: integer, login: string}}
                  Tag: {key: name, attributes: {name: string}}
                """)
    } catch {
        finding("the fuzzer's mapping: \(error)")
    }
}()
