import Foundation

/// Random sequences of nightly runs for the differential test of record
/// digests (issue 27): small dumps of events in two files (JSON Lines, XML
/// documents with a DOCTYPE and namespace declarations, or JSON documents
/// whose `events` array holds the records between other members), and
/// the steps a user's nightly job goes through — the next day's dump, the
/// same dump again, a change file under another mapping, a mapping change,
/// a run killed or cancelled and then resumed or run afresh. Everything
/// follows from the seed, so a failure replays; the files are written once
/// to `directory` and shared by both sides of the test.
public struct SyncSequence {
    /// One line of a dump: an event (or, with kind `note`, a note: the
    /// mapping's second route) with a nested actor shared by id and tags.
    public struct Record {
        public var id: Int
        public var kind: String
        public var region: String
        public var score: Int
        /// Nil: the member is absent (an update keeps the stored value).
        public var title: String?
        public var extra: String
        /// The nested actor's id; nil: no actor member.
        public var actor: Int?
        /// The actor's login in this record: records sharing an actor may
        /// disagree on it.
        public var login: String
        /// Nil: no tags member; empty: `[]`, which clears the links.
        public var tags: [String]?

        /// The record as one line of JSON.
        public var line: String {
            var members = [
                #""id": \#(id)"#, #""kind": "\#(kind)""#, #""region": "\#(region)""#, #""score": \#(score)"#,
            ]
            if let title { members.append(#""title": "\#(title)""#) }
            members.append(#""extra": "\#(extra)""#)
            if let actor {
                members.append(#""actor": {"id": \#(actor), "login": "\#(login)", "url": "u/\#(actor)"}"#)
            }
            if let tags { members.append(#""tags": [\#(tags.map { "\"\($0)\"" }.joined(separator: ", "))]"#) }
            return "{" + members.joined(separator: ", ") + "}"
        }

        /// The record as one XML element on one line: its scalars as
        /// attributes, the actor as an empty element (its login in the
        /// namespace the document declares as `s`), each tag as a `tag`
        /// element (no tags and an absent member read the same in XML).
        public var element: String {
            var attributes = #"id="\#(id)" kind="\#(kind)" region="\#(region)" score="\#(score)""#
            if let title { attributes += #" title="\#(title)""# }
            attributes += #" extra="\#(extra)""#
            var children = ""
            if let actor { children += #"<actor id="\#(actor)" s:login="\#(login)" url="u/\#(actor)"/>"# }
            for tag in tags ?? [] { children += "<tag>\(tag)</tag>" }
            return children.isEmpty ? "<event \(attributes)/>" : "<event \(attributes)>\(children)</event>"
        }
    }

    /// What a mapping change changes; the mapping of each step follows.
    public struct MappingShape: Equatable {
        /// Whether Event maps the `extra` member (an attribute added).
        public var extra = false
        /// Event's `score` type: `integer`, or `string` after a type change.
        public var scoreType = "integer"
        /// Whether Event's delete-missing is limited to `region: north`, and
        /// Note's to the notes whose actor the run saw (`delete-scope-parent`).
        public var scoped: Bool
    }

    /// One step of a sequence, as both sides run it.
    public enum Step: CustomStringConvertible {
        /// Import a dump (its two files, or both through standard input).
        case dump(Dump, deleteMissing: Bool, orderInput: Bool, standardInput: Bool)
        /// A change file under the change mapping (`deleted: true` deletes).
        case changeFile(path: String)
        /// The mapping changes (`what`), then the next day's dump is imported.
        case mappingChange(String, Dump, deleteMissing: Bool)
        /// The dump's run is stopped by `signal` after `fraction` of the
        /// time the side's previous run took, then run again with
        /// `--resume` or afresh.
        case stopped(Dump, signal: Int32, fraction: Double, resume: Bool, deleteMissing: Bool)
        /// The next day's XML or JSON document dump with one file damaged
        /// between its elements (`damage` says how): both sides' runs must
        /// fail, with the same exit status and message.
        case damaged(Dump, damage: String, deleteMissing: Bool)

        /// The dump the step imports; nil for a change file.
        public var dump: Dump? {
            switch self {
            case .dump(let dump, _, _, _), .mappingChange(_, let dump, _), .stopped(let dump, _, _, _, _): return dump
            case .changeFile, .damaged: return nil
            }
        }

        /// Whether the step's runs sweep with `--delete-missing`.
        public var deletesMissing: Bool {
            switch self {
            case .dump(_, let deleteMissing, _, _), .mappingChange(_, _, let deleteMissing),
                .stopped(_, _, _, _, let deleteMissing), .damaged(_, _, let deleteMissing):
                return deleteMissing
            case .changeFile: return false
            }
        }

        public var description: String {
            switch self {
            case .dump(let dump, let deleteMissing, let orderInput, let standardInput):
                return "dump \(dump.name)\(deleteMissing ? " --delete-missing" : "")"
                    + "\(orderInput ? " --order input" : "")\(standardInput ? " from standard input" : "")"
            case .changeFile(let path): return "change file \(URL(fileURLWithPath: path).lastPathComponent)"
            case .mappingChange(let what, let dump, let deleteMissing):
                return "mapping change (\(what)), dump \(dump.name)\(deleteMissing ? " --delete-missing" : "")"
            case .stopped(let dump, let signal, let fraction, let resume, let deleteMissing):
                return "dump \(dump.name)\(deleteMissing ? " --delete-missing" : "")"
                    + " \(signal == SIGKILL ? "killed" : "interrupted (SIGINT)") at \(Int(fraction * 100))% of a run, then "
                    + (resume ? "--resume" : "a fresh run")
            case .damaged(let dump, let damage, let deleteMissing):
                return "dump \(dump.name) damaged (\(damage))\(deleteMissing ? " --delete-missing" : ""), failing"
            }
        }
    }

    /// A day's dump: its name, its two files, and one file of both
    /// files' records (what a step reads from standard input).
    public struct Dump {
        public var name: String
        public var files: [String]
        public var joined: String
    }

    /// The form of the dumps: JSON Lines, XML, or one JSON document a file
    /// (records at `$.events[*]`).
    public enum Format: String, Sendable {
        case jsonl, xml, json
    }

    /// A step and the mapping both sides run it with.
    public struct PlannedStep: CustomStringConvertible {
        public var step: Step
        /// The mapping file of the step's runs (the change mapping for a
        /// change file).
        public var mapping: String
        /// Whether a run that sweeps adds `--allow-empty-delete`: Tag, whose
        /// rows only stubs make, is emptied (and the digests voided).
        public var allowEmptyDelete = false

        public var description: String { "\(step)\(allowEmptyDelete ? " --allow-empty-delete" : "")" }
    }

    /// The seed the sequence follows from.
    public let seed: UInt64
    /// The form of its dumps and change files.
    public let format: Format
    /// The steps, in order.
    public private(set) var steps: [PlannedStep] = []

    private var random: SplitMix
    private let directory: URL
    private var files: [[Record]] = [[], []]
    private var nextID = 1
    private var day = 0
    private var shape: MappingShape
    private var mapping = ""
    private var damagedSteps = 0

    /// A sequence of `count` steps (the first imports day 0's dump) of
    /// dumps of about `records` lines, written to `directory`.
    public init(seed: UInt64, steps count: Int, records: Int, directory: URL, format: Format = .jsonl) {
        self.seed = seed
        self.format = format
        self.directory = directory
        random = SplitMix(seed: seed)
        shape = MappingShape(scoped: false)
        shape.scoped = chance(2)
        for _ in 0..<records { files[below(2)].append(newRecord(records: records)) }
        mapping = write(Self.mapping(shape, changeFile: false, format: format), "mapping0.yml")
        var current = writeDump()
        steps.append(
            PlannedStep(
                step: .dump(current, deleteMissing: false, orderInput: false, standardInput: false), mapping: mapping))
        for _ in 1..<count {
            if case .changeFile = steps[steps.count - 1].step, chance(2) {
                // The dump before the change file again: every key the change file wrote is written back.
                let again = Step.dump(current, deleteMissing: chance(2), orderInput: false, standardInput: false)
                steps.append(PlannedStep(step: again, mapping: mapping))
            } else {
                steps.append(nextStep(records: records, current: current))
            }
            if steps[steps.count - 1].step.deletesMissing { steps[steps.count - 1].allowEmptyDelete = chance(4) }
            current = steps[steps.count - 1].step.dump ?? current
        }
    }

    /// The mapping of a shape: Event (keyed, with a nested Actor found or
    /// created by id, tag links with stubs), and Note, a second route of
    /// the same records (`kind: note`, with its actor); for change files
    /// Event deletes the records marked `deleted: true`.
    public static func mapping(_ shape: MappingShape, changeFile: Bool, format: Format = .jsonl) -> String {
        let records = format == .xml ? "/events/event" : format == .json ? "$.events[*]" : "$"
        let tags = format == .xml ? "tag[*]" : "tags[*]"
        return """
            entities:
              Event:
                records: \(records)
                key: id
                filter: {kind: {not-equals: note}}
            \(changeFile ? "    delete-when: {deleted: {equals: \"true\"}}\n" : "")\
            \(shape.scoped ? "    delete-scope: {region: {equals: north}}\n" : "")\
                attributes:
                  id: integer
                  kind: string
                  region: string
                  score: \(shape.scoreType)
                  title: string
            \(shape.extra ? "      extra: string\n" : "")\
                relationships:
                  actor: {entity: Actor, source: actor}
                  tags: {entity: Tag, source: "\(tags)", many: true, missing: stub}
              Actor:
                key: id
                attributes: {id: integer, login: string, url: string}
              Tag:
                key: name
                attributes: {name: string}
              Note:
                records: \(records)
                key: id
                filter: {kind: {equals: note}}
            \(shape.scoped ? "    delete-scope-parent: actor\n" : "")\
                attributes: {id: integer, region: string, title: string}
                relationships:
                  actor: {entity: Actor, source: actor}
            """
    }

    private mutating func below(_ bound: Int) -> Int { bound <= 0 ? 0 : Int(random.next() % UInt64(bound)) }

    private mutating func chance(_ oneIn: Int) -> Bool { below(oneIn) == 0 }

    private mutating func newRecord(records: Int) -> Record {
        defer { nextID += 1 }
        var record = Record(
            id: nextID, kind: "push", region: "north", score: below(100), title: "t\(nextID)", extra: "e0",
            actor: below(max(3, records / 4)), login: "", tags: [])
        record.login = "login\(record.actor ?? 0)"
        for _ in 0..<5 { edit(&record, records: records) }
        return record
    }

    /// One change to a record's content.
    private mutating func edit(_ record: inout Record, records: Int) {
        switch below(8) {
        case 0: record.kind = ["push", "issue", "note"][below(3)]
        case 1: record.region = chance(2) ? "north" : "south"
        case 2: record.score = below(1000)
        case 3: record.title = chance(4) ? nil : "t\(below(1000))"
        case 4: record.extra = "e\(below(50))"
        case 5:
            record.actor = chance(6) ? nil : below(max(3, records / 4))
            record.login = "login\(record.actor ?? 0)"
        case 6: record.login = "login\(record.actor ?? 0)-\(below(3))"
        default:
            record.tags = chance(6) ? nil : (0..<below(4)).map { _ in "tag\(below(8))" }
        }
    }

    /// The next step and its mapping: most often the next day's dump, else
    /// `current` (the dump the last dump step imported) again, a change
    /// file, a mapping change or a stopped run.
    private mutating func nextStep(records: Int, current: Dump) -> PlannedStep {
        let deleteMissing = chance(2)
        switch below(10) {
        case 0...2:
            nextDay(records: records)
            if format != .jsonl && chance(2) {
                let damaged =
                    format == .xml
                    ? writeDamagedDump(deleteMissing: deleteMissing)
                    : writeDamagedDocument(deleteMissing: deleteMissing)
                return PlannedStep(step: damaged, mapping: mapping)
            }
            return PlannedStep(
                step: .dump(writeDump(), deleteMissing: deleteMissing, orderInput: chance(4), standardInput: chance(6)),
                mapping: mapping)
        case 3:
            return PlannedStep(
                step: .dump(current, deleteMissing: deleteMissing, orderInput: chance(3), standardInput: false),
                mapping: mapping)
        case 4, 5:
            return PlannedStep(
                step: .changeFile(path: writeChangeFile(records: records)),
                mapping: write(
                    Self.mapping(shape, changeFile: true, format: format), "changes\(steps.count).yml"))
        case 6:
            let what: String
            if !shape.extra && chance(2) {
                shape.extra = true
                what = "attribute extra added"
            } else {
                shape.scoreType = shape.scoreType == "integer" ? "string" : "integer"
                what = "score's type made \(shape.scoreType)"
            }
            mapping = write(Self.mapping(shape, changeFile: false, format: format), "mapping\(steps.count).yml")
            nextDay(records: records)
            return PlannedStep(step: .mappingChange(what, writeDump(), deleteMissing: deleteMissing), mapping: mapping)
        default:
            break
        }
        nextDay(records: records)
        let signal = below(10) < 7 ? SIGKILL : SIGINT
        return PlannedStep(
            step: .stopped(
                writeDump(), signal: signal, fraction: Double(below(100)) / 100, resume: chance(2),
                deleteMissing: deleteMissing),
            mapping: mapping)
    }

    /// The next day: records edited, deleted and inserted, moved within
    /// their file and between the two, repeated with other content. Each
    /// change costs the same whatever the dump's size (a swap, not a shift),
    /// so that the benchmark's 200,000-record sequence is made in seconds.
    private mutating func nextDay(records: Int) {
        day += 1
        for _ in 0..<max(2, records / 8) {
            let file = below(2)
            guard !files[file].isEmpty else {
                files[file].append(newRecord(records: records))
                continue
            }
            let at = below(files[file].count)
            switch below(6) {
            case 0, 1:
                var edited = files[file][at]
                edit(&edited, records: records)
                files[file][at] = edited
            case 2:
                files[file].swapAt(at, files[file].count - 1)
                files[file].removeLast()
            case 3: place(newRecord(records: records))
            case 4:
                let other = 1 - file
                guard !files[other].isEmpty else { break }
                let there = below(files[other].count)
                (files[file][at], files[other][there]) = (files[other][there], files[file][at])
            default:
                var repeated = files[file][at]
                edit(&repeated, records: records)
                place(repeated)
            }
        }
    }

    /// Puts `record` at a random place of a random file (the record there
    /// moves to the end).
    private mutating func place(_ record: Record) {
        let file = below(2)
        files[file].append(record)
        files[file].swapAt(below(files[file].count), files[file].count - 1)
    }

    /// Writes the current files as day `day`'s dump (new names: a resumed
    /// run continues the last run of the same inputs), and both in one.
    private mutating func writeDump() -> Dump {
        let suffix = format.rawValue
        let paths = (0..<2).map { file in
            write(document(files[file]), "day\(day)-\("ab".dropFirst(file).prefix(1)).\(suffix)")
        }
        return Dump(
            name: "day \(day)", files: paths, joined: write(document(files[0] + files[1]), "day\(day).\(suffix)"))
    }

    /// Writes the current files as day `day`'s XML dump with one file
    /// damaged outside its elements: a bare `&` or a `<` in the text after
    /// one, the root's end tag misnamed or missing, or the file cut short.
    private mutating func writeDamagedDump(deleteMissing: Bool) -> Step {
        let damaged = below(2)
        let records = files[damaged]
        var text = document(records)
        let damage: String
        // The kinds in turn from one that the seed picks: consecutive seeds cover them all.
        damagedSteps += 1
        switch (Int(seed % 5) + damagedSteps) % 5 {
        case let kind where kind < 2 && !records.isEmpty:
            let after = below(records.count)
            let inserted = kind == 0 ? " & " : " a < b"
            damage = "\"\(inserted)\" after element \(after + 1)"
            text = document(Array(records[...after])).replacingOccurrences(of: "</events>\n", with: "")
            text.removeLast()
            text += inserted + "\n" + records[(after + 1)...].map { $0.element + "\n" }.joined() + "</events>\n"
        case 0...2:
            damage = "the root's end tag misnamed"
            text = text.replacingOccurrences(of: "</events>", with: "</event>")
        case 3:
            damage = "the root's end tag missing"
            text = text.replacingOccurrences(of: "</events>\n", with: "")
        default:
            // Short of the root's end tag: what is left never ends the root.
            let length = below(text.utf8.count - 11) + 1
            damage = "cut after \(length) bytes"
            text = String(decoding: text.utf8.prefix(length), as: UTF8.self)
        }
        let paths = (0..<2).map { file in
            write(file == damaged ? text : document(files[file]), "day\(day)-\("ab".dropFirst(file).prefix(1)).xml")
        }
        let dump = Dump(name: "day \(day)", files: paths, joined: write(text, "day\(day).xml"))
        return .damaged(dump, damage: damage, deleteMissing: deleteMissing)
    }

    /// Writes the current files as day `day`'s dump of JSON documents with
    /// one file damaged outside its elements: a word or a missing comma
    /// after one, the array's or the document's end missing, the value of
    /// the member after the array missing, or the file cut short.
    private mutating func writeDamagedDocument(deleteMissing: Bool) -> Step {
        let damaged = below(2)
        let records = files[damaged]
        var text = document(records)
        let damage: String
        damagedSteps += 1
        switch (Int(seed % 6) + damagedSteps) % 6 {
        case let kind where kind < 2 && !records.isEmpty:
            let after = below(records.count)
            let lines = records.map(\.line)
            let inserted = kind == 0 ? " x" : ""
            damage =
                kind == 0 ? "\"\(inserted)\" after element \(after + 1)" : "comma missing after element \(after + 1)"
            let separator = after + 1 < lines.count && kind == 1 ? "\n" : ",\n"
            let rest = lines[(after + 1)...].joined(separator: ",\n")
            text =
                Self.documentHead + lines[...after].joined(separator: ",\n") + inserted
                + (rest.isEmpty ? "" : separator + rest) + Self.documentTail(records.count)
        case 0...2:
            damage = "the array's end missing"
            text = text.replacingOccurrences(of: "\n],", with: "\n")
        case 3:
            damage = "the document's end missing"
            text.removeLast(2)
        case 4:
            damage = "the value of the member after the array missing"
            text = text.replacingOccurrences(of: "\"count\": \(records.count)}", with: "\"count\": }")
        default:
            let length = below(text.utf8.count - 3) + 1
            damage = "cut after \(length) bytes"
            text = String(decoding: text.utf8.prefix(length), as: UTF8.self)
        }
        let paths = (0..<2).map { file in
            write(file == damaged ? text : document(files[file]), "day\(day)-\("ab".dropFirst(file).prefix(1)).json")
        }
        let dump = Dump(name: "day \(day)", files: paths, joined: write(text, "day\(day).json"))
        return .damaged(dump, damage: damage, deleteMissing: deleteMissing)
    }

    /// A JSON document's members before its `events` array, and after it.
    private static let documentHead = "{\"source\": \"sync\", \"events\": [\n"
    private static func documentTail(_ count: Int) -> String { "\n], \"count\": \(count)}\n" }

    /// `records` as a file of the sequence's format: JSON Lines, an XML
    /// document (a DOCTYPE, the root declaring the namespace of the actors'
    /// logins) with one element a line, or a JSON document with one element
    /// of its `events` array a line.
    private func document(_ records: [Record]) -> String {
        switch format {
        case .jsonl: return records.map { $0.line + "\n" }.joined()
        case .json:
            return Self.documentHead + records.map(\.line).joined(separator: ",\n") + Self.documentTail(records.count)
        case .xml:
            return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE events [\n<!ELEMENT events ANY>\n]>\n"
                + "<events xmlns:s=\"urn:sluice:actor\">\n" + records.map { $0.element + "\n" }.joined() + "</events>\n"
        }
    }

    /// A change file against the current dump: some records changed, some
    /// new, some deleted (`{"id": K, "deleted": true}`, `<event id="K"
    /// deleted="true"/>`), in one file of the sequence's format.
    private mutating func writeChangeFile(records: Int) -> String {
        var lines: [String] = []
        let all = files[0] + files[1]
        for _ in 0..<max(2, records / 6) {
            switch below(3) {
            case 0 where !all.isEmpty:
                var changed = all[below(all.count)]
                edit(&changed, records: records)
                lines.append(format == .xml ? changed.element : changed.line)
            case 1 where !all.isEmpty:
                let id = all[below(all.count)].id
                lines.append(
                    format == .xml ? #"<event id="\#(id)" deleted="true"/>"# : #"{"id": \#(id), "deleted": true}"#)
            default:
                let added = newRecord(records: records)
                lines.append(format == .xml ? added.element : added.line)
            }
        }
        let text: String
        switch format {
        case .xml: text = "<events xmlns:s=\"urn:sluice:actor\">\n" + lines.map { $0 + "\n" }.joined() + "</events>\n"
        case .json: text = Self.documentHead + lines.joined(separator: ",\n") + Self.documentTail(lines.count)
        case .jsonl: text = lines.map { $0 + "\n" }.joined()
        }
        return write(text, "changes\(steps.count).\(format.rawValue)")
    }

    private func write(_ text: String, _ name: String) -> String {
        let url = directory.appendingPathComponent(name)
        try? text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }
}
