import Foundation
import SluiceTestSupport
import Testing

/// `--threads N` with one JSON document (issue 28, point 1): the parse side
/// cuts the document into items at the elements on its record path, and
/// each worker parses its items as one value after the path to their first
/// element (`[`, `{"items":[`), the structure between the elements
/// included. Any N gives what one thread gives.
extension ParallelParseTests {
    /// The record paths of the document forms: an array of events, and the
    /// `items` member of an object between other members.
    static let documentPaths = ["$[*]", "$.items[*]"]

    /// `mapping`'s entities with the events at record path `path`.
    func documentMapping(_ path: String) -> String {
        let text = try? String(contentsOfFile: mapping, encoding: .utf8)
        let events = text?.replacingOccurrences(of: "records: $\n", with: "records: \"\(path)\"\n") ?? ""
        return TestPaths.file(path == "$[*]" ? "parallel-array.yml" : "parallel-items.yml", events)
    }

    func documentArguments(
        _ store: String, _ input: String, path: String, threads: Int, _ extra: [String] = []
    ) -> [String] {
        ["import", "--mapping", documentMapping(path), "--into", store, "--threads", "\(threads)", "-q"] + extra + [
            input
        ]
    }

    /// How a test damages a document: element 2,001 malformed (in the
    /// second item); without the comma before
    /// the element that begins the second item of a run on 2 to 4 threads
    /// (the first to start 256 KiB or more into the document), or before
    /// element 501 (inside the first item); with a word after the array's
    /// end; cut inside element 2,990.
    enum DocumentDamage: String, CaseIterable, Sendable {
        case malformedElement, commaAtCut, commaInItem, afterTheArray, truncated
    }

    /// The JSON Lines file `lines` as one JSON document at `path`: every
    /// 7th element over two lines, `$.items[*]`'s array between members
    /// that hold arrays and objects; `damage`d. Returns the file and the
    /// number of the record that a damage's error names.
    func document(
        _ lines: String, path: String, name: String, damage: DocumentDamage? = nil
    ) throws -> (file: String, record: Int) {
        let elements = try String(contentsOfFile: lines, encoding: .utf8).split(separator: "\n").enumerated().map {
            $0.offset % 7 == 3
                ? $0.element.replacingOccurrences(of: #", "tags""#, with: ",\n  \"tags\"") : String($0.element)
        }
        let (head, tail) =
            path == "$[*]"
            ? ("[\n", "\n]\n")
            : (
                #"{"meta": {"note": "before", "list": [1, {"a": []}]},"# + "\n\"items\": [\n",
                "\n],\n\"after\": [1, {\"x\": 2}]}\n"
            )
        var text = head
        var record = 0
        for (index, element) in elements.enumerated() {
            let separator = index == 0 ? "" : ",\n"
            let cut = damage == .commaAtCut && record == 0 && text.utf8.count + 1 >= 256 << 10
            if cut || (damage == .commaInItem && index == 500) {
                text += "\n"
                record = index + 1
            } else {
                text += separator
            }
            if damage == .truncated && index == 2_989 {
                return (TestPaths.file(name, text + element.prefix(40)), index + 1)
            }
            text += element
        }
        if damage == .afterTheArray {
            text += "\n] x"
            record = elements.count + 1
        }
        return (TestPaths.file(name, text + tail), record)
    }

    /// For each form, the steps of ``xmlWithThreadsGivesTheStoreAndStatisticsOfOne()``:
    /// keys repeated across items (`--no-skip`), a first import that keeps
    /// record digests (the workers hash the elements), the same document
    /// again (every element skipped: one thread parses it, whatever N
    /// says), the next day with `--delete-missing`. Every table (the digest
    /// tables included) and the statistics of 2 and 3 threads, 1 KiB chunks
    /// (elements split across chunks and items), are one thread's.
    @Test(arguments: documentPaths)
    func jsonDocumentsWithThreadsGiveTheStoreAndStatisticsOfOne(path: String) throws {
        let form = path == "$[*]" ? "array" : "items"
        let mixed = try document(
            input("doc-mixed-\(form).jsonl", count: 4_000), path: path, name: "doc-mixed-\(form).json"
        ).file
        let lines = input("doc-day0-\(form).jsonl", count: 4_000, distinct: true)
        let day0 = try document(lines, path: path, name: "doc-day0-\(form).json").file
        let day1 = try document(
            try nextDay(lines, "doc-day1-\(form).jsonl"), path: path, name: "doc-day1-\(form).json"
        ).file
        let runs = [(1, 65_536), (2, 1_024), (3, 65_536)]
        let paths = runs.map { store("doc-threads-\(form)-\($0.0).sqlite") }
        try documentStores(paths, path: path)
        let steps: [(input: String, extra: [String], unchanged: ClosedRange<Int>)] = [
            (mixed, ["--no-skip"], 0...0), (day0, [], 0...0), (day0, [], 3_000...4_000),
            (day1, ["--delete-missing"], 2_000...4_000),
        ]
        try eachRunGivesWhatTheFirstGives(
            steps: steps.count, runs: runs, paths: paths, named: { "--threads \($0.0)" },
            command: { number, run, store, stats in
                let extra = steps[number].extra + ["--chunk-size", "\(run.1)", "--stats-json", stats]
                return documentArguments(store, steps[number].input, path: path, threads: run.0, extra)
            },
            first: { number, first in
                #expect(first.tables["Event"]?.count ?? 0 > 2_000, "step \(number)")
                #expect(first.tables["Actor"]?.count == 400, "step \(number)")
                let unchanged = first.statistics["unchangedRecords"] as? Int ?? -1
                #expect(steps[number].unchanged.contains(unchanged), "step \(number): \(unchanged)")
                if number > 0 { #expect(first.tables["_sluice_unit_pages"]?.isEmpty == false, "step \(number)") }
            })
    }

    /// Stores at `paths` sharing one digest secret, their digests voided (as
    /// ``digestStores(_:)``, with the mapping of record path `path`).
    func documentStores(_ paths: [String], path: String) throws {
        try sharedSecretStores(paths, seed: "doc-digest-seed-\(paths.count)-\(path.count).sqlite") {
            let one = try document(input("doc-seed.jsonl", count: 1), path: path, name: "doc-seed.json").file
            return documentArguments($0, one, path: path, threads: 1, $1)
        }
    }

    /// A malformed element in the middle of an item, a comma missing
    /// between two elements where an item starts and inside one, a word
    /// after the array, a document cut inside an element: the message of one
    /// thread (file, line:column, byte, record number) and its status, with
    /// record digests kept and without.
    @Test(
        arguments: DocumentDamage.allCases.map { ($0, "$.items[*]") } + [
            (.commaAtCut, "$[*]"), (.afterTheArray, "$[*]"),
        ]
    )
    func jsonDocumentErrorsAreReportedAsOneThreadReportsThem(damage: DocumentDamage, path: String) throws {
        let name = "doc-\(damage.rawValue)-\(path.count)"
        let malformed = damage == .malformedElement
        let lines = input(
            "\(name).jsonl", count: 3_000, bad: malformed ? 2_001 : nil, badLine: #"{"id": 12, "kind": nope}"#)
        let (events, record) = try document(lines, path: path, name: "\(name).json", damage: damage)
        for extra in [[], ["--no-skip"]] {
            let first = try eachGivesWhatTheFirstGives { threads in
                let store = store("\(name)-\(threads)-\(extra.count).sqlite")
                let run = try runCommand(
                    sluice,
                    documentArguments(store, events, path: path, threads: threads, extra + ["--chunk-size", "4096"]))
                #expect(run.status == 65)
                return run.stderr
            }
            #expect(first?.contains("record \(malformed ? 2_001 : record): ") == true, "\(first ?? "")")
        }
    }

    /// A run over a document with two threads killed at random moments,
    /// resumed with three, ends in the rows of one uninterrupted thread.
    @Test func killedJSONDocumentRunResumedWithOtherThreadsGivesTheSameStore() throws {
        let path = "$.items[*]"
        let events = try document(input("doc-resume.jsonl", count: 10_000), path: path, name: "doc-resume.json").file
        let extra = ["--no-skip", "--batch-rows", "300", "--sort-mib", "1"]
        let rows = { (store: String) in self.dump(store).filter { !$0.key.hasPrefix("_sluice") } }
        let reference = store("doc-resume-reference.sqlite")
        let duration = try timed(documentArguments(reference, events, path: path, threads: 1, extra))
        let expected = rows(reference)
        #expect(expected["Event"]?.count ?? 0 > 5_000)
        try killedRunsResumed(
            "doc-resume", duration: duration,
            killed: { documentArguments($0, events, path: path, threads: 2, extra) },
            resumed: { documentArguments($0, events, path: path, threads: 3, extra + ["--resume"]) },
            check: { store, attempt in
                #expect(rows(store) == expected, "attempt \(attempt)")
            })
    }
}
