import Foundation
import SluiceTestSupport
import Testing

/// `--threads N` with XML (issue 28, point 1): the parse side cuts the
/// document into items at record elements, and each worker parses its items
/// after their context (the declaration, the DOCTYPE, the open ancestors'
/// start tags). Any N gives what one thread gives.
extension ParallelParseTests {
    /// Events in groups whose start tags change between records (an
    /// ancestor with attributes), a namespace and an attribute type declared
    /// before them, comments, processing instructions and CDATA between
    /// them, some on the line of a record after characters of several bytes.
    var xmlMapping: String {
        TestPaths.file(
            "parallel-xml.yml",
            """
            entities:
              Event:
                records: /feed/events/event
                key: id
                attributes: {id: integer, kind: string, score: integer, text: string, note: string}
                relationships:
                  actor: {entity: Actor, source: actor}
                  tags: {entity: Tag, source: "tag[*]", many: true, missing: stub}
              Actor:
                key: id
                attributes: {id: integer, login: string, rank: integer}
              Tag:
                key: name
                attributes: {name: string}
            """)
    }

    /// `count` events as XML declared in `encoding` (its bytes UTF-8
    /// whatever it declares: read as ISO-8859-1 they are other characters,
    /// as well-formed); record `bad`, when
    /// given, is replaced by `badRecord` (the input ends with it when it
    /// ends with `>cut`); with `distinct`, as
    /// ``input(_:count:bad:badLine:distinct:)`` makes them.
    func xmlInput(
        _ name: String, count: Int = 8_000, bad: Int? = nil, badRecord: String = "", distinct: Bool = false,
        encoding: String = "UTF-8"
    ) -> String {
        var lines = [
            #"<?xml version="1.0" encoding="\#(encoding)"?>"#,
            #"<!DOCTYPE feed [ <!ATTLIST event kind NMTOKEN #IMPLIED> <!-- the kind is a token --> ]>"#,
            #"<feed xmlns:x="urn:x" xml:lang="en"><?feed start?>"#,
        ]
        var state: UInt64 = 11
        for index in 1...count {
            if index % 700 == 1 {
                if index > 1 { lines.append("</events><!-- group \(index / 700) -->") }
                lines.append(#"<events group="\#(index / 700)" xmlns:y="urn:y\#(index / 700)">"#)
            }
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let id = distinct ? (index % 10 == 0 ? index / 2 : index) : Int(state >> 33) % 6_000
            let actor = Int(state >> 20) % 300
            var actorFields = #"id="\#(actor)""#
            if distinct || index % 3 == 0 { actorFields += #" login="a\#(actor)""# }
            if distinct || index % 5 == 0 { actorFields += #" rank="\#(distinct ? actor : index)""# }
            let tags = (0..<(index % 3)).map { "<tag>t\(($0 + index) % 11)</tag>" }.joined()
            let note = index % 4 == 0 ? "<x:note>n\(index) é</x:note>" : ""
            let record =
                #"<event id="\#(id)" kind=" k\#(index % 7) "><actor \#(actorFields)/><score>\#(index)</score>"#
                + #"<text>record \#(index) 東京 &amp; <![CDATA[a<b]]></text>\#(note)\#(tags)</event>"#
            let before =
                switch index % 9 {
                case 0: "<!-- é東京 before \(index) -->"
                case 1: "<?pi \(index)?>"
                case 2: "  "
                default: ""
                }
            lines.append(before + (index == bad ? badRecord : record))
            if index % 13 == 0 { lines.append("<![CDATA[ between ]]><!-- \(index) --><y:other a=\"1\"><b/></y:other>") }
        }
        lines.append("</events>")
        lines.append("</feed>")
        lines.append("<!-- end -->")
        var text = lines.joined(separator: "\n") + "\n"
        if let cut = badRecord.hasSuffix(">cut") ? text.range(of: badRecord) : nil {
            text = String(text[..<cut.upperBound])
        }
        return TestPaths.file(name, text)
    }

    func xmlArguments(_ store: String, _ input: String, threads: Int, _ extra: [String] = []) -> [String] {
        ["import", "--mapping", xmlMapping, "--into", store, "--threads", "\(threads)", "-q"] + extra + [input]
    }

    /// Stores at `paths` sharing one digest secret, their digests voided (as
    /// ``digestStores(_:)``, with the XML mapping).
    func xmlDigestStores(_ paths: [String]) throws {
        try sharedSecretStores(paths, seed: "xml-digest-seed.sqlite") {
            xmlArguments($0, xmlInput("xml-seed.xml", count: 1), threads: 1, $1)
        }
    }

    /// The next day of `day0`: every 50th event changed, every 97th gone.
    func xmlNextDay(_ day0: String, _ name: String) throws -> String {
        let lines = try String(contentsOfFile: day0, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        var next: [String] = []
        for (index, line) in lines.enumerated() {
            guard line.contains("<event ") else {
                next.append(String(line))
                continue
            }
            if index % 97 == 96 { continue }
            next.append(index % 50 == 0 ? line.replacingOccurrences(of: ">record ", with: ">changed ") : String(line))
        }
        return TestPaths.file(name, next.joined(separator: "\n"))
    }

    /// A first import without digests (`--no-skip`), then, into stores that
    /// share a secret, the runs that keep them: a first import, the same
    /// file again (skipped units: one thread parses it, whatever N says), and
    /// the next day with `--delete-missing`. Every table (the digest tables
    /// included) and the statistics of 2 and 3 threads are one thread's.
    @Test func xmlWithThreadsGivesTheStoreAndStatisticsOfOne() throws {
        let day0 = xmlInput("xml-day0.xml", distinct: true)
        let day1 = try xmlNextDay(day0, "xml-day1.xml")
        let mixed = xmlInput("xml-mixed.xml")
        let runs = [(1, 65_536), (2, 1_024), (3, 65_536)]
        let paths = runs.map { store("xml-threads-\($0.0).sqlite") }
        try xmlDigestStores(paths)
        let steps: [(input: String, extra: [String], unchanged: ClosedRange<Int>)] = [
            (mixed, ["--no-skip"], 0...0), (day0, [], 0...0), (day0, [], 5_000...8_000),
            (day1, ["--delete-missing"], 5_000...8_000),
        ]
        try eachRunGivesWhatTheFirstGives(
            steps: steps.count, runs: runs, paths: paths, named: { "--threads \($0.0)" },
            command: { number, run, path, stats in
                let extra = steps[number].extra + ["--chunk-size", "\(run.1)", "--stats-json", stats]
                return xmlArguments(path, steps[number].input, threads: run.0, extra)
            },
            first: { number, first in
                #expect(first.tables["Event"]?.count ?? 0 > 4_000, "step \(number)")
                #expect(first.tables["Actor"]?.count == 300, "step \(number)")
                // The attribute type declared in the DOCTYPE trims the kind.
                #expect(first.tables["Event"]?.allSatisfy { $0.contains("|k") } == true, "step \(number)")
                #expect(first.tables["Event"]?.contains { $0.contains("0 é|") } == true, "step \(number)")
                let unchanged = first.statistics["unchangedRecords"] as? Int ?? -1
                #expect(steps[number].unchanged.contains(unchanged), "step \(number): \(unchanged)")
                if number > 0 { #expect(first.tables["_sluice_unit_pages"]?.isEmpty == false, "step \(number)") }
            })
    }

    /// A malformed record in the middle of an item, an error in the text
    /// between two records, a record cut by the input's end: the message of
    /// one thread (file, line:column, byte, record number) and its status,
    /// with record digests kept and without.
    @Test(arguments: [
        ("xml-malformed", 5_001, #"<event id="5"><score>1</scor></event>"#, 5_001),
        ("xml-between", 4_001, #"<event id="4"/> & stray"#, 4_002),
        ("xml-truncated", 7_990, #"<event id="3"><text>cut"#, 7_990),
    ])
    func xmlErrorsAreReportedAsOneThreadReportsThem(name: String, bad: Int, record: String, reported: Int) throws {
        let events = xmlInput("\(name).xml", bad: bad, badRecord: record)
        for extra in [[], ["--no-skip"]] {
            let first = try eachGivesWhatTheFirstGives { threads in
                let path = store("\(name)-\(threads)-\(extra.count).sqlite")
                let run = try runCommand(
                    sluice, xmlArguments(path, events, threads: threads, extra + ["--chunk-size", "4096"]))
                #expect(run.status == 65)
                return run.stderr
            }
            #expect(first?.contains("record \(reported): ") == true, "\(first ?? "")")
        }
    }

    /// A document in another encoding than UTF-8 is one item (a decoder's
    /// columns and byte counts cannot be repeated by a placed parser), one
    /// in UTF-16 is parsed on the parse side: rows, statistics and errors
    /// as one thread's.
    @Test func xmlNotInUTF8IsParsedWholeWithThreads() throws {
        let latin = xmlInput(
            "xml-latin1.xml", count: 3_000, bad: 2_500, badRecord: "<event id=\"9\"><text>é</tex></event>",
            encoding: "ISO-8859-1")
        let utf8 = try String(contentsOfFile: xmlInput("xml-for-utf16.xml", count: 3_000), encoding: .utf8)
        let utf16 = TestPaths.temporaryDirectory().appendingPathComponent("xml-utf16.xml").path
        let body = utf8.replacingOccurrences(of: #"encoding="UTF-8""#, with: #"encoding="UTF-16""#)
        #expect(FileManager.default.createFile(atPath: utf16, contents: body.data(using: .utf16)))
        struct Result: Equatable {
            var message: String
            var rows: [String: [String]]
        }
        for (input, status) in [(latin, Int32(65)), (utf16, Int32(0))] {
            let first = try eachGivesWhatTheFirstGives(threads: [1, 3]) { threads in
                let path = store("xml-encoding-\(threads)-\(status).sqlite")
                let run = try runCommand(sluice, xmlArguments(path, input, threads: threads, ["--chunk-size", "4096"]))
                #expect(run.status == status, "\(run.stderr)")
                return Result(message: run.stderr, rows: dump(path).filter { !$0.key.hasPrefix("_sluice") })
            }
            if status == 0 {
                #expect(first?.rows["Event"]?.count ?? 0 > 2_000)
            } else {
                #expect(first?.message.contains("record 2500: ") == true, "\(first?.message ?? "")")
            }
        }
    }

    /// An XML run with two threads killed at random moments, resumed with
    /// three, ends in the rows of one uninterrupted thread.
    @Test func killedXMLRunResumedWithOtherThreadsGivesTheSameStore() throws {
        let events = xmlInput("xml-resume.xml", count: 12_000, distinct: true)
        let extra = ["--batch-rows", "300", "--sort-mib", "1"]
        let rows = { (path: String) in self.dump(path).filter { !$0.key.hasPrefix("_sluice") } }
        let reference = store("xml-resume-reference.sqlite")
        let duration = try timed(xmlArguments(reference, events, threads: 1, extra))
        let expected = rows(reference)
        try killedRunsResumed(
            "xml-resume", duration: duration, killed: { xmlArguments($0, events, threads: 2, extra) },
            resumed: { xmlArguments($0, events, threads: 3, extra + ["--resume"]) },
            check: { path, attempt in
                #expect(rows(path) == expected, "attempt \(attempt)")
            })
    }
}
