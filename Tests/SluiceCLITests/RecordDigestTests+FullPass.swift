import Foundation
import SluiceTestSupport
import Testing

/// A run that parses every record although its store keeps record digests
/// says why, in its summary and its `--stats-json` (`fullPass`), so that a
/// nightly job that never skips is not left to guess
/// (docs/record-digests.md, "When a run parses everything").
extension RecordDigestTests {
    /// What `fullPass` of the last run into `store` said, nil when absent.
    func fullPass(_ store: String) throws -> String? {
        let data = try Data(contentsOf: URL(fileURLWithPath: stats(store)))
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["fullPass"] as? String
    }

    /// A mapping of the digests' events that keeps no digests, the option
    /// that turns them off, and the reason each run gives.
    static let offCases: [(name: String, mapping: String, options: [String], reason: String)] = [
        (
            "keyless",
            TestPaths.file(
                "digest-keyless.yml",
                "entities:\n  Event:\n    records: $\n    key: []\n    attributes: {id: integer, kind: string}\n"),
            [], "Event has no key: each run creates its rows"
        ),
        (
            "update-only",
            variant(
                "digest-update-only.yml", "  Actor:\n    key: id\n", "  Actor:\n    key: id\n    mode: update-only\n"),
            [], "Actor is update-only"
        ),
        ("input order", mapping, ["--order", "input"], "--order input"),
    ]

    /// The digests' mapping with `text` replaced by `replacement`, as file `name`.
    static func variant(_ name: String, _ text: String, _ replacement: String) -> String {
        let yaml = (try? String(contentsOfFile: mapping, encoding: .utf8)) ?? ""
        return TestPaths.file(name, yaml.replacingOccurrences(of: text, with: replacement))
    }

    /// Each run of a mapping or an option that keeps no digests parses every
    /// record and says why, the first into a new store too; `--no-skip`,
    /// which the user asked for, says nothing.
    @Test(arguments: offCases.indices) func aRunWithDigestsOffSaysWhy(index: Int) throws {
        let off = Self.offCases[index]
        let day0 = file((1...20).map { Self.event($0) })
        let target = try store(.sqlite)
        let arguments = ["import", "--mapping", off.mapping, "--into", target, "--stats-json", stats(target)]
        for _ in 1...2 {
            let result = try runCommand(sluice, arguments + off.options + [day0])
            #expect(result.status == 0, "\(off.name): \(result.stderr)")
            #expect(
                result.stdout.contains("every record parsed: record digests are off (\(off.reason))"),
                "\(off.name): \(result.stdout)")
            #expect(try fullPass(target) == "record digests are off (\(off.reason))", "\(off.name)")
            #expect(try unchangedRecords(target) == 0)
        }
        let asked = try runCommand(sluice, arguments + off.options + ["--no-skip", day0])
        #expect(asked.status == 0, "\(asked.stderr)")
        #expect(!asked.stdout.contains("every record parsed"), "\(off.name): \(asked.stdout)")
        #expect(try fullPass(target) == nil)
    }

    /// A dump run under a changed mapping parses every record, says that the
    /// digests were made under another mapping and makes them anew; the next
    /// run under it skips every record and says nothing. A set an earlier run
    /// voided is not valid, and the run that makes it anew says that.
    @Test(arguments: kinds) func aChangedMappingSaysTheDigestsWereMadeAnew(kind: Kind) throws {
        let day0 = file((1...20).map { Self.event($0) })
        let changed = Self.variant(
            "digest-changed.yml", "{id: integer, login: string}", "{id: integer, login: string, url: string}")
        let target = try store(kind)
        let first = try run(target, [day0])
        #expect(!first.stdout.contains("every record parsed"), "\(first.stdout)")
        #expect(try fullPass(target) == nil)
        let arguments = ["import", "--mapping", changed, "--into", target, "--stats-json", stats(target)]
        let anew = try runCommand(sluice, arguments + [day0])
        #expect(anew.status == 0, "\(anew.stderr)")
        let madeAnew =
            "the store's record digests were made under another mapping, sluice version or options; this run made them anew"
        #expect(anew.stdout.contains("every record parsed: " + madeAnew), "\(anew.stdout)")
        #expect(try fullPass(target) == madeAnew)
        let again = try runCommand(sluice, arguments + [day0])
        #expect(!again.stdout.contains("every record parsed"), "\(again.stdout)")
        #expect(try fullPass(target) == nil && unchangedRecords(target) == 20)
        let voiding = try runCommand(sluice, arguments + ["--order", "input", day0])
        #expect(voiding.stderr.contains("record digests voided (--order input)"), "\(voiding.stderr)")
        let after = try runCommand(sluice, arguments + [day0])
        #expect(
            after.stdout.contains(
                "every record parsed: the store's record digests are not valid (an earlier run voided them or did not finish)"
            ), "\(after.stdout)")
        #expect(try unchangedRecords(target) == 0)
    }

    /// A change file under a mapping of its own that deletes a tag the
    /// dump's links stub: the dump again skips every record and leaves the
    /// store a full run leaves (neither makes the stub again: the links
    /// stand unchanged, and a stub is made only for a link a run writes).
    @Test(arguments: kinds) func aChangeFileThatDeletesAStubTargetLeavesTheStoreAFullRunLeaves(kind: Kind) throws {
        let tags = TestPaths.file(
            "digest-tag-deletes.yml",
            """
            entities:
              Tag:
                records: $
                key: name
                delete-when: {deleted: {equals: "true"}}
                attributes: {name: string}
            """)
        let day0 = file((1...40).map { Self.event($0) })
        let change = file([#"{"name": "t1", "deleted": true}"#])
        let (skipping, parsing) = (try store(kind), try store(kind))
        for (target, extra) in [(skipping, [String]()), (parsing, ["--no-skip"])] {
            _ = try run(target, extra + [day0])
            let result = try runCommand(sluice, ["import", "--mapping", tags, "--into", target] + extra + [change])
            #expect(result.status == 0, "\(result.stderr)")
            _ = try run(target, extra + [day0])
        }
        #expect(try unchangedRecords(skipping) == 40)
        #expect(rows(skipping) == rows(parsing))
    }
}
