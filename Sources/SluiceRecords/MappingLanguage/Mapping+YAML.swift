import SluiceInput
import Yams

extension Mapping {
    /// Reads a mapping from YAML (or JSON, which is YAML too).
    ///
    /// The format, with every option:
    /// ```yaml
    /// entities:
    ///   Post:                      # entity = table name
    ///     records: /posts/row      # or a list; JSON: $, $[*], $.jobs[*]
    ///     key: Id                  # the key attribute
    ///     attributes:
    ///       Id: integer            # type only: source is the field "Id"
    ///       Title: {type: string, source: "@Title", default: "", invalid: null}
    ///       Owner: {type: integer, source: ["@OwnerUserId", "@OwnerId"]}
    /// ```
    /// Parsing and checking cost O(mapping size); every problem is collected
    /// and reported at once.
    ///
    /// - Throws: ``MappingError`` listing every problem with its line.
    public static func parse(yaml text: String, file: String? = nil) throws(MappingError) -> Mapping {
        var reader = MappingReader(file: file)
        let mapping = reader.read(text)
        let problems = reader.problems + CompiledMapping.check(mapping)
        if !problems.isEmpty {
            let ordered = problems.enumerated().sorted {
                ($0.element.line ?? 0, $0.offset) < ($1.element.line ?? 0, $1.offset)
            }
            throw MappingError(file: file, problems: ordered.map(\.element))
        }
        return mapping
    }
}

/// Walks the YAML node tree, collecting problems instead of stopping.
private struct MappingReader {
    let file: String?
    var problems: [MappingError.Problem] = []

    init(file: String?) { self.file = file }

    mutating func problem(_ node: Node?, _ message: String) {
        problems.append(.init(line: node?.mark?.line, message: message))
    }

    mutating func read(_ text: String) -> Mapping {
        let root: Node?
        do {
            // Yams' default resolver types plain scalars with regular
            // expressions, and compiling the first one starts ICU: 9.1 M
            // instructions, a seventh of a small run's CPU (callgrind).
            // The reader reads every value as text and types it itself
            // (`flag(_:)` for booleans), so none is needed.
            root = try Yams.compose(yaml: text, .basic)
        } catch let error as YamlError {
            problems.append(Self.describe(error))
            return Mapping(entities: [], file: file)
        } catch {
            problems.append(.init(line: nil, message: "not YAML: \(error)"))
            return Mapping(entities: [], file: file)
        }
        guard let root, let top = root.mapping else {
            problem(root, "a mapping file is a YAML mapping with an `entities` key")
            return Mapping(entities: [], file: file)
        }
        var entities: [EntityMapping] = []
        for (key, value) in top {
            switch MappingSetting(rawValue: key.string ?? "") {
            case .entities:
                guard let list = value.mapping else {
                    problem(value, "`entities` maps entity names to their settings")
                    continue
                }
                for (name, settings) in list { entities.append(entity(name, settings)) }
            case nil:
                problem(key, "unknown setting `\(key.string ?? "")` (expected \(MappingSetting.choices))")
            }
        }
        if entities.isEmpty && problems.isEmpty { problem(root, "the mapping declares no entities") }
        return Mapping(entities: entities, file: file)
    }

    mutating func entity(_ nameNode: Node, _ node: Node) -> EntityMapping {
        let name = nameNode.string ?? ""
        var entity = EntityMapping(name: name, records: [], key: [], attributes: [], line: nameNode.mark?.line)
        guard let settings = node.mapping else {
            problem(node, "entity `\(name)`: expected `records`, `key` and `attributes`")
            return entity
        }
        var keyGiven = false
        for (key, value) in settings {
            guard let setting = EntitySetting(rawValue: key.string ?? "") else {
                let text = key.string ?? ""
                problem(key, "entity `\(name)`: unknown setting `\(text)` (expected \(EntitySetting.choices))")
                continue
            }
            let context = "entity `\(name)`: `\(setting.rawValue)`"
            switch setting {
            case .records: entity.records = strings(value, context)
            case .key:
                entity.key = strings(value, context)
                keyGiven = true
            case .missingKey: entity.missingKey = word(value, context) ?? entity.missingKey
            case .filter: entity.filter = filter(value, context)
            case .mode: entity.mode = word(value, context) ?? entity.mode
            case .overwrite: entity.overwrite = strings(value, context)
            case .deleteMissing:
                guard let flag = Self.flag(value) else {
                    problem(value, "\(context) is true or false")
                    continue
                }
                entity.deleteMissing = flag
            case .deleteScope: entity.deleteScope = filter(value, context)
            case .deleteRecords: entity.deleteRecords = strings(value, context)
            case .deleteWhen: entity.deleteWhen = filter(value, context)
            case .deleteScopeParent:
                guard let parent = value.string else {
                    problem(value, "\(context) names a to-one relationship")
                    continue
                }
                entity.deleteScopeParent = parent
            case .relationships:
                guard let list = value.mapping else {
                    problem(value, "\(context) maps names to \(RelationshipSetting.braced)")
                    continue
                }
                for (relationName, spec) in list {
                    entity.relationships.append(relationship(entity: name, relationName, spec))
                }
            case .attributes:
                guard let attributes = value.mapping else {
                    problem(value, "\(context) maps attribute names to types or settings")
                    continue
                }
                for (attributeName, spec) in attributes {
                    entity.attributes.append(attribute(entity: name, attributeName, spec))
                }
            }
        }
        if !keyGiven {
            problem(nameNode, "entity `\(name)` has no `key` (use `key: []` to insert every record as a new row)")
        }
        if entity.attributes.isEmpty { problem(nameNode, "entity `\(name)` has no `attributes`") }
        return entity
    }

    mutating func attribute(entity: String, _ nameNode: Node, _ node: Node) -> AttributeMapping {
        let name = nameNode.string ?? ""
        var attribute = AttributeMapping(name: name, line: nameNode.mark?.line)
        let context = "entity `\(entity)`, attribute `\(name)`"
        if let typeName = node.scalar?.string {
            attribute.type = type(typeName, node, context)
            return attribute
        }
        guard let settings = node.mapping else {
            problem(node, "\(context): expected a type name or \(AttributeSetting.braced)")
            return attribute
        }
        for (key, value) in settings {
            guard let setting = AttributeSetting(rawValue: key.string ?? "") else {
                problem(key, "\(context): unknown setting `\(key.string ?? "")` (expected \(AttributeSetting.choices))")
                continue
            }
            let settingContext = "\(context): `\(setting.rawValue)`"
            switch setting {
            case .type: attribute.type = type(value.string ?? "", value, context)
            case .source: attribute.sources = strings(value, settingContext)
            case .default:
                if Self.isNull(value) { continue }
                attribute.defaultValue = value.scalar?.string
                if attribute.defaultValue == nil { problem(value, "\(settingContext) must be a scalar") }
            case .items: attribute.items = type(value.string ?? "", value, context)
            case .object:
                let paths = ObjectSetting.allCases.compactMap { value.mapping?[$0.rawValue]?.string }
                guard paths.count == ObjectSetting.allCases.count, value.mapping?.count == paths.count else {
                    let pairs = ObjectSetting.allCases.map { "\($0.rawValue): PATH" }.joined(separator: ", ")
                    problem(value, "\(settingContext) is {\(pairs)}")
                    continue
                }
                attribute.objectKey = paths[0]
                attribute.objectValue = paths[1]
            case .formats: attribute.formats = strings(value, settingContext)
            case .epoch: attribute.epoch = word(value, settingContext) ?? attribute.epoch
            case .invalid:
                // A plain null is the policy `null`, not an absent value.
                let spelled = Self.isNull(value) ? InvalidValuePolicy.null.rawValue : nil
                attribute.onInvalid = word(value, settingContext, spelled: spelled) ?? attribute.onInvalid
            }
        }
        return attribute
    }

    mutating func relationship(entity: String, _ nameNode: Node, _ node: Node) -> RelationshipMapping {
        let name = nameNode.string ?? ""
        let context = "entity `\(entity)`, relationship `\(name)`"
        var relationship = RelationshipMapping(name: name, entity: "", source: name, line: nameNode.mark?.line)
        guard let settings = node.mapping else {
            problem(node, "\(context): expected \(RelationshipSetting.braced)")
            return relationship
        }
        for (key, value) in settings {
            guard let setting = RelationshipSetting(rawValue: key.string ?? "") else {
                let text = key.string ?? ""
                problem(key, "\(context): unknown setting `\(text)` (expected \(RelationshipSetting.choices))")
                continue
            }
            let settingContext = "\(context): `\(setting.rawValue)`"
            switch setting {
            case .entity: relationship.entity = value.string ?? ""
            case .source: relationship.source = value.string ?? ""
            case .many, .ordered:
                guard let flag = Self.flag(value) else {
                    problem(value, "\(settingContext) is true or false")
                    continue
                }
                if setting == .many { relationship.many = flag } else { relationship.ordered = flag }
            case .rule: relationship.rule = word(value, settingContext) ?? relationship.rule
            case .missing:
                guard let policy: MissingTargetPolicy = word(value, settingContext) else { continue }
                relationship.missing = policy
                relationship.missingIsExplicit = true
            case .key: relationship.key = value.string
            case .entityBy: relationship.entityBy = value.string
            case .entities:
                guard let pairs = value.mapping else {
                    problem(value, "\(settingContext) maps item values to entities, e.g. {node: Node, way: Way}")
                    continue
                }
                relationship.entities = pairs.map {
                    TargetChoice(value: $0.key.string ?? "", entity: $0.value.string ?? "")
                }
            case .attributes:
                guard let attributes = value.mapping else {
                    problem(value, "\(settingContext) maps link column names to types or settings")
                    continue
                }
                relationship.attributes = attributes.map {
                    attribute(entity: "\(entity)`, relationship `\(name)", $0.key, $0.value)
                }
            case .keyless: relationship.keyless = word(value, settingContext) ?? relationship.keyless
            }
        }
        if relationship.entity.isEmpty && relationship.entities.isEmpty {
            problem(nameNode, "\(context) names no target `entity`")
        }
        return relationship
    }

    mutating func filter(_ node: Node, _ context: String) -> [FilterCondition] {
        guard let fields = node.mapping else {
            problem(node, "\(context) maps source paths to conditions, e.g. {\"@PostTypeId\": {in: [\"1\"]}}")
            return []
        }
        var conditions: [FilterCondition] = []
        for (pathNode, testNode) in fields {
            let path = pathNode.string ?? ""
            guard let tests = testNode.mapping, tests.count == 1, let (kind, argument) = tests.first else {
                problem(testNode, "\(context): `\(path)` needs one test: \(ConditionTest.choices) (e.g. {in: [a, b]})")
                continue
            }
            guard let test = ConditionTest(rawValue: kind.string ?? "") else {
                let text = kind.string ?? ""
                problem(kind, "\(context): unknown condition `\(text)` (expected \(ConditionTest.choices))")
                continue
            }
            let testContext = "\(context): \(test.rawValue)"
            switch test {
            case .equals, .in: conditions.append(.init(path: path, test: .oneOf(strings(argument, testContext))))
            case .notIn, .notEquals: conditions.append(.init(path: path, test: .noneOf(strings(argument, testContext))))
            case .exists:
                guard let flag = Self.flag(argument) else {
                    problem(argument, "\(testContext) is true or false")
                    continue
                }
                conditions.append(.init(path: path, test: .exists(flag)))
            }
        }
        return conditions
    }

    mutating func type(_ name: String, _ node: Node, _ context: String) -> AttributeType {
        if let type = AttributeType(rawValue: name) { return type }
        problem(node, "\(context): unknown type `\(name)` (known: \(AttributeType.choices))")
        return .string
    }

    /// The word of `Word`'s table that `node` (or `spelled`, when given)
    /// spells; `nil` with a problem naming the table's words otherwise.
    mutating func word<Word: MappingKeyword>(_ node: Node, _ context: String, spelled: String? = nil) -> Word? {
        let text = spelled ?? node.string ?? ""
        if let word = Word(rawValue: text) { return word }
        problem(node, "\(context) is \(Word.choices), not `\(text)`")
        return nil
    }

    mutating func strings(_ node: Node, _ context: String) -> [String] {
        if let single = node.scalar?.string { return [single] }
        if let list = node.sequence {
            var values: [String] = []
            for item in list {
                if let text = item.scalar?.string {
                    values.append(text)
                } else {
                    problem(item, "\(context): expected text")
                }
            }
            return values
        }
        problem(node, "\(context): expected text or a list of text")
        return []
    }

    /// The boolean a plain scalar spells as YAML 1.1 does (`true`, `True`,
    /// `TRUE`, `yes`, `on` and their `false` forms, the spellings of Yams'
    /// default resolver); nil for anything else, a quoted `"true"` included.
    static func flag(_ node: Node) -> Bool? {
        guard let scalar = node.scalar, scalar.style == .plain else { return nil }
        switch scalar.string {
        case "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON": return true
        case "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF": return false
        default: return nil
        }
    }

    /// A plain YAML null: `null`, `~` or nothing.
    static func isNull(_ node: Node) -> Bool {
        guard let scalar = node.scalar, scalar.style == .plain else { return false }
        return ["null", "Null", "NULL", "~", ""].contains(scalar.string)
    }

    static func describe(_ error: YamlError) -> MappingError.Problem {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _):
            return .init(line: mark.line, message: "not valid YAML: \(problem)")
        default:
            return .init(line: nil, message: "not valid YAML: \(error)")
        }
    }
}

extension Mapping {
    /// Reads and checks the mapping file at `path` (see ``parse(yaml:file:)``).
    ///
    /// - Throws: ``MappingError``, also when the file cannot be read.
    public static func load(path: String) throws(MappingError) -> Mapping {
        var bytes: [UInt8] = []
        do {
            let source = try FileByteSource(path: path)
            let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 1)
            defer { chunk.deallocate() }
            while true {
                let count = try source.read(into: chunk)
                if count == 0 { break }
                bytes.append(contentsOf: chunk[..<count])
            }
        } catch {
            throw MappingError(file: path, problems: [.init(line: nil, message: "cannot read the mapping: \(error)")])
        }
        return try parse(yaml: String(decoding: bytes, as: UTF8.self), file: path)
    }
}
