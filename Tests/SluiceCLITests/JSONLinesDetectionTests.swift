import Foundation
import SluiceTestSupport
import Testing

/// JSON Lines named `.json` (GH Archive's hourly files are) is read as JSON
/// Lines by import, check and infer (issue 18): the README tour's second
/// command failed with "trailing garbage".
@Suite struct JSONLinesDetectionTests {
    let lines = (1...5).map { #"{"id": \#($0), "name": "n\#($0)"}"# }.joined(separator: "\n") + "\n"

    @Test func aJSONFileOfOneValueAfterAnotherIsJSONLines() throws {
        let file = TestPaths.file("events.json", lines)
        let gzip = try runCommand("/bin/gzip", ["-k", file])
        #expect(gzip.status == 0)
        for input in [file, file + ".gz"] {
            let store = TestPaths.temporaryDirectory().appendingPathComponent("s.sqlite").path
            let imported = try runCommand(sluice, ["import", "--into", store, "--entity", "E", "--key", "id", input])
            #expect(imported.status == 0, "\(input): \(imported.stderr)")
            #expect(StoreReader(store).count("E") == 5)
            #expect(try runCommand(sluice, ["check", input]).status == 0)
            let inferred = try runCommand(sluice, ["infer", input])
            #expect(
                inferred.status == 0 && inferred.stdout.contains("records: \"$\""),
                "\(inferred.stdout)\(inferred.stderr)")
        }
    }

    @Test func aJSONArrayStaysOneDocument() throws {
        let file = TestPaths.file(
            "array.json", "[" + (1...5).map { #"{"id": \#($0)}"# }.joined(separator: ",\n") + "]\n")
        let store = TestPaths.temporaryDirectory().appendingPathComponent("s.sqlite").path
        let imported = try runCommand(sluice, ["import", "--into", store, "--entity", "E", "--key", "id", file])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(StoreReader(store).count("E") == 5)
    }

    @Test func whenTheFirstValueIsTooLongToTellTheErrorSuggestsJSONLines() throws {
        let long = #"{"id": 1, "t": ""# + String(repeating: "x", count: 70_000) + "\"}\n"
        let file = TestPaths.file("long.json", long + #"{"id": 2, "t": "y"}"# + "\n")
        let checked = try runCommand(sluice, ["check", file])
        #expect(checked.status == 65)
        #expect(checked.stderr.contains("give --format jsonl"), "\(checked.stderr)")
    }
}
