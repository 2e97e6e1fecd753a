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
            let ordered = problems.enumerated().sorted { ($0.element.line ?? 0, $0.offset) < ($1.element.line ?? 0, $1.offset) }
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
            root = try Yams.compose(yaml: text)
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
            switch key.string {
            case "entities":
                guard let list = value.mapping else {
                    problem(value, "`entities` maps entity names to their settings")
                    continue
                }
                for (name, settings) in list { entities.append(entity(name, settings)) }
            default:
                problem(key, "unknown setting `\(key.string ?? "")` (expected `entities`)")
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
            switch key.string {
            case "records": entity.records = strings(value, "entity `\(name)`: `records`")
            case "key":
                entity.key = strings(value, "entity `\(name)`: `key`")
                keyGiven = true
            case "missing-key":
                if let policy = MissingKeyPolicy(rawValue: value.string ?? "") {
                    entity.missingKey = policy
                } else {
                    problem(value, "entity `\(name)`: `missing-key` is `error` or `skip`")
                }
            case "filter":
                entity.filter = filter(value, "entity `\(name)`: `filter`")
            case "mode":
                if let mode = WriteMode(rawValue: value.string ?? "") {
                    entity.mode = mode
                } else {
                    problem(value, "entity `\(name)`: `mode` is one of \(WriteMode.allCases.map(\.rawValue).joined(separator: ", "))")
                }
            case "overwrite": entity.overwrite = strings(value, "entity `\(name)`: `overwrite`")
            case "delete-missing":
                if let flag = value.bool { entity.deleteMissing = flag } else { problem(value, "entity `\(name)`: `delete-missing` is true or false") }
            case "delete-scope": entity.deleteScope = filter(value, "entity `\(name)`: `delete-scope`")
            case "delete-records": entity.deleteRecords = strings(value, "entity `\(name)`: `delete-records`")
            case "delete-when": entity.deleteWhen = filter(value, "entity `\(name)`: `delete-when`")
            case "delete-scope-parent":
                if let parent = value.string { entity.deleteScopeParent = parent } else { problem(value, "entity `\(name)`: `delete-scope-parent` names a to-one relationship") }
            case "relationships":
                guard let list = value.mapping else {
                    problem(value, "entity `\(name)`: `relationships` maps names to {entity, source, many, ordered, rule, missing}")
                    continue
                }
                for (relationName, spec) in list { entity.relationships.append(relationship(entity: name, relationName, spec)) }
            case "attributes":
                guard let attributes = value.mapping else {
                    problem(value, "entity `\(name)`: `attributes` maps attribute names to types or settings")
                    continue
                }
                for (attributeName, spec) in attributes {
                    entity.attributes.append(attribute(entity: name, attributeName, spec))
                }
            default:
                problem(key, "entity `\(name)`: unknown setting `\(key.string ?? "")` (expected records, key, missing-key, filter, mode, overwrite, delete-missing, delete-scope, delete-scope-parent, delete-records, delete-when, attributes, relationships)")
            }
        }
        if !keyGiven { problem(nameNode, "entity `\(name)` has no `key` (use `key: []` to insert every record as a new row)") }
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
            problem(node, "\(context): expected a type name or {type, source, default, invalid}")
            return attribute
        }
        for (key, value) in settings {
            switch key.string {
            case "type": attribute.type = type(value.string ?? "", value, context)
            case "source": attribute.sources = strings(value, "\(context): `source`")
            case "default":
                if Self.isNull(value) { continue }
                attribute.defaultValue = value.scalar?.string
                if attribute.defaultValue == nil { problem(value, "\(context): `default` must be a scalar") }
            case "items": attribute.items = type(value.string ?? "", value, context)
            case "object":
                guard let pair = value.mapping, let key = pair["key"]?.string, let member = pair["value"]?.string, pair.count == 2 else {
                    problem(value, "\(context): `object` is {key: PATH, value: PATH}")
                    continue
                }
                attribute.objectKey = key
                attribute.objectValue = member
            case "formats": attribute.formats = strings(value, "\(context): `formats`")
            case "epoch":
                if let unit = EpochUnit(rawValue: value.string ?? "") {
                    attribute.epoch = unit
                } else {
                    problem(value, "\(context): `epoch` is `seconds`, `milliseconds`, `microseconds`, `nanoseconds` or `auto`")
                }
            case "invalid":
                let policy = Self.isNull(value) ? "null" : (value.string ?? "")
                if let parsed = InvalidValuePolicy(rawValue: policy) {
                    attribute.onInvalid = parsed
                } else {
                    problem(value, "\(context): `invalid` is `error` or `null`, not `\(policy)`")
                }
            default:
                problem(key, "\(context): unknown setting `\(key.string ?? "")` (expected type, source, default, invalid, formats, epoch, items, object)")
            }
        }
        return attribute
    }

    mutating func relationship(entity: String, _ nameNode: Node, _ node: Node) -> RelationshipMapping {
        let name = nameNode.string ?? ""
        let context = "entity `\(entity)`, relationship `\(name)`"
        var relationship = RelationshipMapping(name: name, entity: "", source: name, line: nameNode.mark?.line)
        guard let settings = node.mapping else {
            problem(node, "\(context): expected {entity, source, many, ordered, rule, missing, keyless, key, entity-by, entities, attributes}")
            return relationship
        }
        for (key, value) in settings {
            switch key.string {
            case "entity": relationship.entity = value.string ?? ""
            case "source": relationship.source = value.string ?? ""
            case "many", "ordered":
                guard let flag = value.bool else {
                    problem(value, "\(context): `\(key.string ?? "")` is true or false")
                    continue
                }
                if key.string == "many" { relationship.many = flag } else { relationship.ordered = flag }
            case "rule":
                if let rule = LinkRule(rawValue: value.string ?? "") { relationship.rule = rule } else { problem(value, "\(context): `rule` is union, replace or replace-and-delete") }
            case "missing":
                if let policy = MissingTargetPolicy(rawValue: value.string ?? "") {
                    relationship.missing = policy
                    relationship.missingIsExplicit = true
                } else {
                    problem(value, "\(context): `missing` is dangling, stub or error")
                }
            case "key": relationship.key = value.string
            case "entity-by": relationship.entityBy = value.string
            case "entities":
                guard let pairs = value.mapping else {
                    problem(value, "\(context): `entities` maps item values to entities, e.g. {node: Node, way: Way}")
                    continue
                }
                relationship.entities = pairs.map { TargetChoice(value: $0.key.string ?? "", entity: $0.value.string ?? "") }
            case "attributes":
                guard let attributes = value.mapping else {
                    problem(value, "\(context): `attributes` maps link column names to types or settings")
                    continue
                }
                relationship.attributes = attributes.map { attribute(entity: "\(entity)`, relationship `\(name)", $0.key, $0.value) }
            case "keyless":
                if let rule = KeylessRule(rawValue: value.string ?? "") { relationship.keyless = rule } else { problem(value, "\(context): `keyless` is reuse or create") }
            default:
                problem(key, "\(context): unknown setting `\(key.string ?? "")` (expected entity, source, many, ordered, rule, missing, keyless, key, entity-by, entities, attributes)")
            }
        }
        if relationship.entity.isEmpty && relationship.entities.isEmpty { problem(nameNode, "\(context) names no target `entity`") }
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
                problem(testNode, "\(context): `\(path)` needs one of {equals: …}, {in: […]}, {not-in: […]}, {exists: true|false}")
                continue
            }
            switch kind.string {
            case "equals": conditions.append(.init(path: path, test: .oneOf(strings(argument, "\(context): equals"))))
            case "in": conditions.append(.init(path: path, test: .oneOf(strings(argument, "\(context): in"))))
            case "not-in", "not-equals":
                conditions.append(.init(path: path, test: .noneOf(strings(argument, "\(context): \(kind.string ?? "")"))))
            case "exists":
                guard let flag = argument.bool else {
                    problem(argument, "\(context): `exists` is true or false")
                    continue
                }
                conditions.append(.init(path: path, test: .exists(flag)))
            default:
                problem(kind, "\(context): unknown condition `\(kind.string ?? "")` (expected equals, in, not-in, exists)")
            }
        }
        return conditions
    }

    mutating func type(_ name: String, _ node: Node, _ context: String) -> AttributeType {
        if let type = AttributeType(rawValue: name) { return type }
        let known = AttributeType.allCases.map(\.rawValue).joined(separator: ", ")
        problem(node, "\(context): unknown type `\(name)` (known: \(known))")
        return .string
    }

    mutating func strings(_ node: Node, _ context: String) -> [String] {
        if let single = node.scalar?.string { return [single] }
        if let list = node.sequence {
            var values: [String] = []
            for item in list {
                if let text = item.scalar?.string { values.append(text) } else { problem(item, "\(context): expected text") }
            }
            return values
        }
        problem(node, "\(context): expected text or a list of text")
        return []
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
