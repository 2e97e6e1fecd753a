import SluiceRecords
import SluiceTestSupport

/// Random mappings that the loader accepts, built from every setting of the
/// mapping language and named with text YAML reads otherwise when it is not
/// quoted, for the writer's property test. The same seed gives the same
/// mappings.
struct MappingGenerator {
    var random: SplitMix

    init(seed: UInt64) { random = SplitMix(seed: seed) }

    /// Text that YAML reads as something else unless quoted (booleans,
    /// nulls, numbers, dates, indicators, comments, line breaks, control and
    /// invisible characters, non-ASCII, a key past YAML's 1,024-character
    /// limit), and plain words.
    static let hostile: [String] = [
        "plain", "Name_2", "true", "False", "yes", "NO", "on", "Off", "y", "null", "Null", "~", "", " ", "1", "-1",
        "0.5", "1e3", "0x1F", ".inf", "2024-01-31", "12:30", "2024-01-31T12:30:00Z", "a: b", "a:b", "key:",
        "# comment", "a #b", "- item", "-", "? q", "[x]", "{y}", "a, b", "*alias", "&anchor", "!tag", "%directive",
        "@at", "`tick`", "|", ">", "'single'", "\"double\"", "back\\slash", "<<", "=", " leading", "trailing ",
        "two  spaces", "line\nbreak", "crlf\r\n", "tab\tbetween", "\u{0}nul", "bell\u{7}", "esc\u{1B}", "del\u{7F}",
        "nel\u{85}", "c1\u{9F}", "nbsp\u{A0}", "ls\u{2028}", "ps\u{2029}", "non\u{FFFE}char", "é", "e\u{301}",
        "Ünïcødé", "日本語", "😀", "𝄞", "Ω", "ﬁ", "Ⅻ", "١٢٣", "a\u{200D}b", String(repeating: "long", count: 275),
        // Not first: Yams drops a byte order mark that starts a scalar, so the loader never returns one there.
        "mid\u{FEFF}bom",
    ]

    /// Date patterns with a year, month and day (literal text among them).
    static let datePatterns = [
        "yyyy-MM-dd", "dd.MM.yyyy HH:mm", "M/d/yyyy h:mm a", "'day' d 'of' MMMM yyyy", "yyyyMMdd",
    ]

    /// A random element of `choices`.
    mutating func pick<T>(_ choices: [T]) -> T { choices[Int.random(in: 0..<choices.count, using: &random)] }

    /// True with probability `chance`.
    mutating func chance(_ chance: Double) -> Bool { Double.random(in: 0..<1, using: &random) < chance }

    /// A count in `range`.
    mutating func count(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }

    /// Hostile text: one or two fragments, sometimes empty.
    mutating func text() -> String { (0..<count(1...2)).map { _ in pick(Self.hostile) }.joined() }

    /// A name that is not empty and not in `taken` (compared without
    /// letter case, as the mapping's checks do), which it joins.
    mutating func name(_ taken: inout Set<String>) -> String {
        while true {
            let name = text()
            let folded = name.lowercased()
            if !name.isEmpty && !Self.isReserved(folded) && taken.insert(folded).inserted { return name }
        }
    }

    /// Whether a table of this name (in lower case) is refused.
    static func isReserved(_ folded: String) -> Bool { folded.hasPrefix("sqlite_") || folded.hasPrefix("_sluice") }

    /// `texts` without repeats, in their order.
    static func distinct(_ texts: [String]) -> [String] {
        var seen: Set<String> = []
        return texts.filter { seen.insert($0).inserted }
    }

    /// A step of a path: hostile text without the characters that separate
    /// steps (`/` in XML; `.` and `[` in JSON; an `@` first in XML).
    mutating func step() -> String {
        var step = String(text().unicodeScalars.filter { !"/.[".unicodeScalars.contains($0) })
        while step.hasPrefix("@") { step.removeFirst() }
        return step.isEmpty ? "f" : step
    }

    /// A source path of `xml` or JSON syntax that reads one value.
    mutating func path(xml: Bool) -> String {
        let steps = (0..<count(1...2)).map { _ in step() }
        if xml {
            let last = chance(0.5) ? "@" + steps[steps.count - 1] : steps[steps.count - 1]
            return (steps.dropLast() + [last]).joined(separator: "/")
        }
        return steps.joined(separator: ".") + (chance(0.2) ? "[\(count(0...3))]" : "")
    }

    /// A source path that gathers (one `[*]` step).
    mutating func gatheringPath(xml: Bool) -> String {
        let list = step() + "[*]"
        guard chance(0.6) else { return list }
        return xml ? list + "/" + (chance(0.5) ? "@" : "") + step() : list + "." + step()
    }

    /// A record path.
    mutating func recordPath(xml: Bool) -> String {
        if xml { return "/" + (0..<count(1...3)).map { _ in chance(0.1) ? "*" : step() }.joined(separator: "/") }
        return "$" + (0..<count(0...2)).map { _ in chance(0.4) ? "[*]" : "." + step() }.joined()
    }

    /// Conditions on distinct paths made by `path`.
    mutating func conditions(_ paths: [String]) -> [FilterCondition] {
        Self.distinct(paths).map { path in
            switch count(0...2) {
            case 0: FilterCondition(path: path, test: .oneOf((0..<count(0...3)).map { _ in text() }))
            case 1: FilterCondition(path: path, test: .noneOf((0..<count(0...3)).map { _ in text() }))
            default: FilterCondition(path: path, test: .exists(chance(0.5)))
            }
        }
    }

    /// An attribute of a type that may be a key.
    mutating func keyAttribute(_ names: inout Set<String>, xml: Bool) -> AttributeMapping {
        var attribute = AttributeMapping(
            name: name(&names), type: pick([.string, .integer, .decimal, .date, .boolean]))
        if chance(0.5) { attribute.sources = [path(xml: xml)] }
        return attribute
    }

    /// An attribute of any type with any of the settings that suit it.
    mutating func attribute(_ names: inout Set<String>, xml: Bool) -> AttributeMapping {
        var attribute = AttributeMapping(name: name(&names), type: pick(AttributeType.allCases))
        attribute.onInvalid = pick(InvalidValuePolicy.allCases)
        if attribute.type == .json && chance(0.5) {
            attribute.sources = [gatheringPath(xml: xml)]
            if chance(0.5) { attribute.items = pick(AttributeType.itemTypes) }
            if chance(0.5) {
                attribute.objectKey = path(xml: xml)
                attribute.objectValue = path(xml: xml)
            }
            return attribute
        }
        attribute.sources = (0..<count(0...2)).map { _ in path(xml: xml) }
        switch attribute.type {
        case .string: if chance(0.6) { attribute.defaultValue = text() }
        case .integer: if chance(0.3) { attribute.defaultValue = "-7" }
        case .boolean: if chance(0.3) { attribute.defaultValue = "yes" }
        case .date:
            attribute.formats = (0..<count(0...2)).map { _ in pick(Self.datePatterns) }
            attribute.epoch = pick(EpochUnit.allCases)
        default: break
        }
        return attribute
    }

    /// A relationship's `missing`, said or not.
    mutating func missing(_ relationship: inout RelationshipMapping) {
        relationship.missing = pick(MissingTargetPolicy.allCases)
        relationship.missingIsExplicit = relationship.missing != .dangling || chance(0.5)
    }

    /// A mapping of one to four entities of one document kind; the last
    /// may be a keyless entity filled through a relationship of the first.
    mutating func mapping() -> Mapping {
        let xml = chance(0.5)
        var entityNames: Set<String> = []
        var entities: [EntityMapping] = []
        for _ in 0..<count(1...3) {
            var names: Set<String> = []
            var attributes = (0..<count(0...2)).map { _ in keyAttribute(&names, xml: xml) }
            attributes += (0..<count(1...4)).map { _ in attribute(&names, xml: xml) }
            let keyable = attributes.filter { !AttributeType.unkeyable.contains($0.type) }.map(\.name)
            let key = Array(keyable.prefix(pick([0, 1, 1, 1, 2])))
            let records = (0..<count(1...2)).map { _ in recordPath(xml: xml) }
            let name = name(&entityNames)
            var entity = EntityMapping(name: name, records: Self.distinct(records), key: key, attributes: attributes)
            entity.missingKey = pick(MissingKeyPolicy.allCases)
            entity.filter = conditions((0..<count(0...2)).map { _ in path(xml: xml) })
            entity.mode = chance(0.3) ? nil : pick(WriteMode.allCases)
            if chance(0.5) { entity.overwrite = attributes.map(\.name).filter { _ in chance(0.5) } }
            entity.deleteMissing = chance(0.3) ? nil : !key.isEmpty && chance(0.5)
            entity.deleteScope = conditions(attributes.map(\.name).filter { _ in chance(0.3) })
            if !key.isEmpty {
                let deleting = (0..<count(0...2)).map { _ in recordPath(xml: xml) }
                entity.deleteRecords = Self.distinct(deleting).filter { !entity.records.contains($0) }
                entity.deleteWhen = conditions((0..<count(0...2)).map { _ in path(xml: xml) })
            }
            entities.append(entity)
        }
        if chance(0.4) {
            var names: Set<String> = []
            let attributes = (0..<count(1...3)).map { _ in attribute(&names, xml: xml) }
            entities.append(EntityMapping(name: name(&entityNames), records: [], key: [], attributes: attributes))
        }
        var tableNames = entityNames
        for index in entities.indices where !entities[index].records.isEmpty {
            relate(&entities, index, xml: xml, tableNames: &tableNames)
        }
        return Mapping(entities: entities)
    }

    /// Gives entity `index` relationships of every kind the others allow:
    /// to one or many keyed entities, to items that name their target, to
    /// the keyless entity (always from the first entity, which it needs).
    mutating func relate(_ entities: inout [EntityMapping], _ index: Int, xml: Bool, tableNames: inout Set<String>) {
        let owner = entities[index]
        let targets = entities.filter { $0.key.count == 1 }.map(\.name)
        let keyless = entities.filter { $0.records.isEmpty }.map(\.name)
        var names = Set(owner.attributes.map { $0.name.lowercased() })
        var relationships: [RelationshipMapping] = []
        func named(_ many: Bool, _ generator: inout MappingGenerator) -> String {
            while true {
                let name = generator.name(&names)
                let table = "\(owner.name)_\(name)".lowercased()
                if !many || !MappingGenerator.isReserved(table) && tableNames.insert(table).inserted { return name }
            }
        }
        for _ in 0..<count(0...3) where !targets.isEmpty {
            let many = !owner.key.isEmpty && chance(0.5)
            var relationship = RelationshipMapping(
                name: named(many, &self), entity: pick(targets),
                source: many ? gatheringPath(xml: xml) : path(xml: xml), many: many, ordered: many && chance(0.5),
                rule: pick(LinkRule.allCases))
            missing(&relationship)
            if many && chance(0.5) {
                relationship.key = path(xml: xml)
                if chance(0.5) {
                    relationship.entity = ""
                    if relationship.rule == .replaceAndDelete { relationship.rule = .union }
                    var values: Set<String> = []
                    relationship.entities = targets.map { TargetChoice(value: name(&values), entity: $0) }
                    relationship.entityBy = path(xml: xml)
                }
                var columns: Set<String> = ["position", "target_entity", "target_key"]
                relationship.attributes = (0..<count(0...2)).map { _ in keyAttribute(&columns, xml: xml) }
            }
            relationships.append(relationship)
        }
        if index == 0 {
            for target in keyless {
                let many = !owner.key.isEmpty && chance(0.5)
                var relationship = RelationshipMapping(
                    name: named(many, &self), entity: target,
                    source: many ? gatheringPath(xml: xml) : path(xml: xml), many: many, ordered: many && chance(0.5),
                    rule: pick(LinkRule.allCases))
                relationship.keyless = pick(KeylessRule.allCases)
                missing(&relationship)
                relationships.append(relationship)
            }
        }
        entities[index].relationships = relationships
        let parents = relationships.filter { !$0.many && $0.keyless == nil }.map(\.name)
        if !parents.isEmpty && chance(0.5) { entities[index].deleteScopeParent = pick(parents) }
    }
}
