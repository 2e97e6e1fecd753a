import Foundation
import SluiceTestSupport
import Testing

/// A next day killed in its hash pass on the parse workers (`--threads 2`),
/// over JSON Lines and over one XML document.
extension SyncCrashTests {
    /// The sync mapping with its events the elements under an XML
    /// document's root, their tags `tag` children.
    static let xmlMapping = TestPaths.file(
        "sync-xml.yml",
        TestMappings.sync.replacingOccurrences(of: "records: $\n", with: "records: /events/event\n")
            .replacingOccurrences(of: "source: \"tags[*]\"", with: "source: \"tag[*]\""))

    /// ``events(_:name:)`` as one XML document (the values the XML mapping
    /// reads), an element a line.
    static func xmlEvents(_ ids: [Int], name: String) -> String {
        var generator = SplitMix(seed: 7)
        let lines = ids.shuffled(using: &generator).map { id in
            #"<event id="\#(id)" kind="k\#(id % 7)" score="\#(id * 3)"><tag>t\#(id % 5)</tag><tag>u\#(id % 3)</tag>"#
                + (id % 4 == 0 ? "<tag>v</tag></event>" : "</event>")
        }
        return TestPaths.file(
            name,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<events>\n" + lines.joined(separator: "\n") + "\n</events>\n")
    }

    /// Day 0 of 20,000 events as XML and its next day (every tenth gone),
    /// made once for both stores. The hash pass on the workers reads that
    /// next day for about as long as ``most`` (JSON Lines): seen reading
    /// by a poll every millisecond from 15 to 75 ms into the run, 9 to 19
    /// polls (6 runs at load 5; ``most``, 9 to 31).
    static let xmlDay0 = xmlEvents(Array(1...20_000), name: "day0.xml")
    static let xmlMost = xmlEvents((1...20_000).filter { $0 % 10 != 0 }, name: "most.xml")

    /// Killed once the run has begun and before it records anything of its
    /// plan (the hash pass, on the workers), then resumed or run afresh: the
    /// store an uninterrupted run leaves, nothing written by the killed
    /// run; the run after the fresh one skips again.
    @Test(arguments: RecordDigestTests.kinds)
    func aKillInTheHashPassOnTheWorkersEndsWhereAnUninterruptedRunDoes(kind: RecordDigestTests.Kind) throws {
        try endsWhereAnUninterruptedRunDoes(
            hashPassNight(mapping: mapping, day: Self.day0, next: Self.most, events: 30_000), kind)
    }

    /// The same night over XML, whose hash pass on the workers has the
    /// document check read each item too (`XMLDocumentCheck`).
    @Test(arguments: RecordDigestTests.kinds)
    func aKillInTheXMLHashPassOnTheWorkersEndsWhereAnUninterruptedRunDoes(kind: RecordDigestTests.Kind) throws {
        try endsWhereAnUninterruptedRunDoes(
            hashPassNight(mapping: Self.xmlMapping, day: Self.xmlDay0, next: Self.xmlMost, events: 20_000), kind)
    }

    /// The night of `day` (`events` events) then `next` (all but every
    /// tenth), on 2 threads with `--delete-missing`, each try killed in the
    /// hash pass: the run has begun (its digest set marked not valid,
    /// SQLite's 0 and PostgreSQL's f), and it reads `next` past its first
    /// chunk but not to its end, as only the hash pass reads it (the probe
    /// and the parse read the selected units at their places). It landed
    /// there if nothing of the run is in the store: no removed key
    /// recorded, every event kept.
    private func hashPassNight(mapping: String, day: String, next: String, events: Int) -> KilledNight {
        let size = (try? FileManager.default.attributesOfItem(atPath: next)[.size] as? Int) ?? 0
        return KilledNight(
            mapping: mapping, days: [day], covered: nil, options: ["--threads", "2", "--delete-missing"],
            next: next, unchanged: events - events / 10, attempts: 6, name: "hash", phase: "in the hash pass"
        ) { sync, store, _ in
            var reading = false
            let wasKilled = try killing(store) { poller in
                try Self.killed(sync + ["--into", store]) { pid in
                    reading =
                        ["0", "f"].contains(poller.value("SELECT valid FROM _sluice_digest_state"))
                        && Self.offsets(pid, next).contains { $0 > 65_536 && $0 < size }
                    return reading
                }
            }
            let removed = Self.number(store, "SELECT count(*) FROM \"_sluice_removed_Event\"")
            let landed = wasKilled && reading && removed == 0 && Self.count(store, "Event") == events
            return (landed, "\(removed) removed keys, \(reading ? "" : "not ")reading")
        }
    }

    /// Where process `pid`'s open files of `path` are (`/proc/PID/fdinfo`'s
    /// `pos`, Linux); none once it has ended.
    static func offsets(_ pid: Int32, _ path: String) -> [Int] {
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let directory = "/proc/\(pid)/fd"
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return descriptors.compactMap { descriptor in
            guard (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(descriptor)")) == target,
                let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(descriptor)", encoding: .utf8)
            else { return nil }
            let line = info.split(separator: "\n").first { $0.hasPrefix("pos:") }
            return line.flatMap { Int($0.dropFirst(4).trimmingCharacters(in: .whitespaces)) }
        }
    }
}
