/// A checked mapping turned into what the import runs: record paths routed to
/// entities, and one ``RowMapper`` per entity.
package struct CompiledMapping {
    /// A record path and the entities its records fill.
    package struct Route {
        /// Where the records are.
        package var path: RecordPath
        /// Indices into ``mappers``.
        package var entities: [Int]
        /// Those of ``entities`` whose records here delete their key.
        package var deleting: [Int] = []
    }

    /// The routes, one per distinct record path.
    package var routes: [Route]
    /// One mapper per entity, in mapping order.
    package var mappers: [RowMapper]
    /// The link tables of to-many relationships.
    package var links: [LinkSchema] = []
    /// Each entity's relationships as the batcher follows them (nested
    /// objects found or created, to-many lists made link rows), by entity.
    package private(set) var relations: [[Relation]]
    /// Each entity's derived key column (an entity without a key reached
    /// through `keyless` relationships), which the batcher fills; by entity.
    package private(set) var derivedKeys: [Int?]
    /// What the mapping does, as ``Mapping/fingerprint`` (hooks, being
    /// code, are not in it).
    package var fingerprint: String
    /// The entities whose records can delete keys (see ``deletes(_:)``).
    private var deletingEntities: Set<Int> = []

    /// The most record paths one mapping may declare.
    package static let maxRoutes = 64
    /// The most attributes one entity may declare.
    package static let maxAttributes = 256

    /// Compiles a mapping, with Swift `hooks` by entity name, for a run
    /// whose options give `defaults` (each entity's table schema carries its
    /// settled write mode and delete-missing). O(mapping size).
    ///
    /// - Throws: ``MappingError`` with every problem found, including hooks
    ///   for entities or attributes the mapping does not have.
    package init(
        _ mapping: Mapping, hooks: [String: EntityHooks] = [:], defaults: EntityDefaults = EntityDefaults()
    ) throws(MappingError) {
        var problems = Self.check(mapping)
        for (name, entityHooks) in hooks.sorted(by: { $0.key < $1.key }) {
            guard let entity = mapping.entities.first(where: { $0.name == name }) else {
                problems.append(
                    .init(line: nil, message: "hooks are given for `\(name)`, which the mapping does not declare"))
                continue
            }
            for attribute in entityHooks.valueHandlers.keys.sorted()
            where !entity.attributes.contains(where: { $0.name == attribute }) {
                problems.append(
                    .init(
                        line: entity.line,
                        message:
                            "a value handler is given for `\(name).\(attribute)`, which the mapping does not declare"))
            }
        }
        if !problems.isEmpty { throw MappingError(file: mapping.file, problems: problems) }
        routes = []
        mappers = []
        relations = []
        derivedKeys = []
        fingerprint = mapping.fingerprint
        var entityMappers: [EntityMapper] = []
        for (index, entity) in mapping.entities.enumerated() {
            if !entity.deleteRecords.isEmpty || !entity.deleteWhen.isEmpty { deletingEntities.insert(index) }
            for (text, deletes) in entity.records.map({ ($0, false) }) + entity.deleteRecords.map({ ($0, true) }) {
                guard case .success(let path) = RecordPath.parse(text) else { continue }
                let route =
                    routes.firstIndex { $0.path == path }
                    ?? {
                        routes.append(Route(path: path, entities: []))
                        return routes.count - 1
                    }()
                routes[route].entities.append(index)
                if deletes { routes[route].deleting.append(index) }
            }
            let kind = Self.documentKind(of: entity, in: mapping)
            entityMappers.append(
                Self.mapper(
                    for: entity, in: mapping, kind: kind, hooks: hooks[entity.name] ?? EntityHooks(), defaults: defaults
                ))
        }
        mappers = entityMappers
        derivedKeys = entityMappers.map(\.derivedKey)
        relations = Array(repeating: [], count: entityMappers.count)
        // Relationships, now that every mapper exists.
        for (index, entity) in mapping.entities.enumerated() {
            let mapper = entityMappers[index]
            let kind = Self.documentKind(of: entity, in: mapping)
            for relationship in entity.relationships {
                let targetEntity = relationship.entities.first?.entity ?? relationship.entity
                guard let target = mapping.entities.firstIndex(where: { $0.name == targetEntity }),
                    case .success(let source) = FieldPath.parse(relationship.source, kind: kind),
                    let targetKey = mappers[target].schema.keyColumns.first
                else { continue }
                let keyColumn = mappers[target].schema.columns[targetKey]
                var link: Int?
                if relationship.many {
                    let sourceSchema = mapper.schema
                    let sourceColumns = sourceSchema.keyColumns.map { column in
                        ColumnSchema(
                            name: "\(entity.name)_\(sourceSchema.columns[column].name)",
                            type: sourceSchema.columns[column].type)
                    }
                    var targetName =
                        relationship.entities.isEmpty ? "\(relationship.entity)_\(keyColumn.name)" : "target_key"
                    if sourceColumns.contains(where: { $0.name.lowercased() == targetName.lowercased() }) {
                        targetName = "\(relationship.name)_\(keyColumn.name)"
                    }
                    links.append(
                        LinkSchema(
                            name: "\(entity.name)_\(relationship.name)", sourceTable: entity.name,
                            sourceColumns: sourceColumns,
                            sourceKeys: sourceSchema.keyColumns.map { sourceSchema.columns[$0].name },
                            targetColumn: ColumnSchema(name: targetName, type: keyColumn.type),
                            targetTable: targetEntity,
                            targetKey: keyColumn.name, ordered: relationship.ordered,
                            rule: relationship.ordered && relationship.rule == .union ? .replace : relationship.rule,
                            missing: relationship.missing,
                            choices: Self.linkTargets(relationship, mappers: mappers, in: mapping),
                            attributeColumns: relationship.attributes.map { ColumnSchema(name: $0.name, type: $0.type) }
                        ))
                    links[links.count - 1].storedTargetsOnly =
                        !relationship.missingIsExplicit
                        && links[links.count - 1].choices.isEmpty && mappers[target].schema.mode == .updateOnly
                    link = links.count - 1
                }
                var relation = Relation(
                    name: relationship.name, source: source, target: target, link: link,
                    keyRule: ValueRule(type: keyColumn.type),
                    keyless: relationship.keyless,
                    referenceColumn: relationship.many
                        ? nil : mapper.schema.columns.firstIndex { $0.name == relationship.name })
                Self.readItems(relationship, into: &relation, kind: kind, mappers: mappers, in: mapping)
                relations[index].append(relation)
            }
        }
    }

    /// The syntax of an entity's paths: its records', or for an entity filled
    /// only through relationships, that of an entity leading to it.
    static func documentKind(of entity: EntityMapping, in mapping: Mapping, visited: Set<String> = []) -> DocumentKind {
        if let first = entity.records.first, case .success(let path) = RecordPath.parse(first) { return path.kind }
        for referrer in mapping.entities
        where !visited.contains(referrer.name) && referrer.relationships.contains(where: { $0.targets(entity.name) }) {
            return documentKind(of: referrer, in: mapping, visited: visited.union([entity.name]))
        }
        return .xml
    }

    /// A mapping for schemaless JSON: each record (`records` path) becomes a
    /// row of `entity`, columns discovered from the top-level members,
    /// written as the run's `defaults` say.
    package init(
        schemaless entity: String, key: String, records: RecordPath, defaults: EntityDefaults = EntityDefaults()
    ) {
        routes = [Route(path: records, entities: [0])]
        mappers = [SchemalessMapper(entity: entity, key: key, defaults: defaults)]
        relations = [[]]
        derivedKeys = [nil]
        fingerprint = Mapping.fingerprint(of: "schemaless \(entity) \(key) \(records)")
    }

    /// Whether records delete keys of entity `entity` (`delete-records` or
    /// `delete-when`).
    package func deletes(_ entity: Int) -> Bool { deletingEntities.contains(entity) }

    /// The kind of document (XML or JSON) the record paths address.
    package var documentKind: DocumentKind { routes.first?.path.kind ?? .json }

    private static func mapper(
        for entity: EntityMapping, in mapping: Mapping, kind: DocumentKind, hooks: EntityHooks, defaults: EntityDefaults
    ) -> EntityMapper {
        var columns: [ColumnSchema] = []
        var attributes: [EntityMapper.Attribute] = []
        var references: [Reference] = []
        // A to-one relationship is a column holding the target's key: read
        // from the nested object (its key's sources below the relationship's
        // source), or the source itself when it is the key.
        var relationshipAttributes: [AttributeMapping] = []
        var unsourced: Set<String> = []
        for relationship in entity.relationships where !relationship.many {
            guard let target = mapping.entities.first(where: { $0.name == relationship.entity }) else { continue }
            if target.key.isEmpty && relationship.keyless != nil {
                // The batcher writes the derived key of the nested object.
                unsourced.insert(relationship.name)
                relationshipAttributes.append(AttributeMapping(name: relationship.name, type: .string))
                references.append(
                    Reference(
                        column: entity.attributes.count + relationshipAttributes.count - 1, name: relationship.name,
                        targetTable: target.name, targetKey: TableSchema.derivedKeyName, missing: relationship.missing))
                continue
            }
            guard target.key.count == 1, let key = target.attributes.first(where: { $0.name == target.key[0] }) else {
                continue
            }
            let separator = kind == .xml ? "/" : "."
            let keySources = sources(of: key, kind: kind)
            let sources =
                (relationship.source == "." ? keySources : keySources.map { relationship.source + separator + $0 })
                + [relationship.source]
            relationshipAttributes.append(AttributeMapping(name: relationship.name, type: key.type, sources: sources))
            references.append(
                Reference(
                    column: entity.attributes.count + relationshipAttributes.count - 1, name: relationship.name,
                    targetTable: target.name, targetKey: key.name, missing: relationship.missing))
        }
        for attribute in entity.attributes + relationshipAttributes {
            let paths =
                unsourced.contains(attribute.name)
                ? [] : sources(of: attribute, kind: kind).compactMap { try? FieldPath.parse($0, kind: kind).get() }
            let rule = self.rule(for: attribute)
            var object: (key: FieldPath, value: FieldPath)?
            if let key = attribute.objectKey, let value = attribute.objectValue,
                case .success(let keyPath) = FieldPath.parse(key, kind: kind),
                case .success(let valuePath) = FieldPath.parse(value, kind: kind)
            {
                object = (keyPath, valuePath)
            }
            attributes.append(
                .init(
                    name: attribute.name, rule: rule, sources: paths, onInvalid: attribute.onInvalid,
                    items: attribute.items,
                    object: object))
            columns.append(
                ColumnSchema(
                    name: attribute.name, type: attribute.type,
                    defaultValue: attribute.defaultValue.flatMap { try? defaultValue($0, rule).get() }))
        }
        var keys = entity.key.compactMap { key in entity.attributes.firstIndex { $0.name == key } }
        var derivedKey: Int?
        if entity.key.isEmpty && isKeylessTarget(entity, in: mapping) {
            columns.append(ColumnSchema(name: TableSchema.derivedKeyName, type: .string))
            derivedKey = columns.count - 1
            keys = [columns.count - 1]
        }
        func compiled(_ conditions: [FilterCondition]) -> [EntityMapper.Filter] {
            conditions.compactMap { condition in
                (try? FieldPath.parse(condition.path, kind: kind).get()).map {
                    EntityMapper.Filter(path: $0, test: condition.test)
                }
            }
        }
        var schema = TableSchema(name: entity.name, columns: columns, keyColumns: keys)
        schema.references = references
        schema.settle(mode: entity.mode, deleteMissing: entity.deleteMissing, defaults)
        schema.overwrite = entity.overwrite.map { names in
            Set(names.compactMap { name in entity.attributes.firstIndex { $0.name == name } })
        }
        schema.deleteScope = entity.deleteScope.compactMap { condition in
            entity.attributes.firstIndex { $0.name == condition.path }.map { ($0, condition.test) }
        }
        schema.deleteScopeParent = entity.deleteScopeParent.flatMap { name in references.first { $0.name == name } }
        return EntityMapper(
            schema: schema, attributes: attributes,
            filters: compiled(entity.filter), deleteWhen: compiled(entity.deleteWhen), missingKey: entity.missingKey,
            kind: kind,
            hooks: hooks, derivedKey: derivedKey)
    }

    /// The source paths of `attribute`: its own, or the field named like it
    /// (`@name`, then the child element `name`, in XML).
    static func sources(of attribute: AttributeMapping, kind: DocumentKind) -> [String] {
        guard attribute.sources.isEmpty else { return attribute.sources }
        return kind == .xml ? ["@" + attribute.name, attribute.name] : [attribute.name]
    }

    static func rule(for attribute: AttributeMapping) -> ValueRule {
        ValueRule(
            type: attribute.type, patterns: attribute.formats.compactMap(DatePattern.init), epoch: attribute.epoch)
    }

    private static func defaultValue(_ text: String, _ rule: ValueRule) -> Result<DefaultValue, ConversionProblem> {
        var arena = RowArena(columnCount: 1)
        let bytes = Array(text.utf8)
        return ValueConversion.scalar(bytes[...], isNumber: false, rule, into: &arena).map { cell in
            switch cell {
            case .integer(let value): return .integer(value)
            case .real(let value): return .real(value)
            case .text, .blob: return .text(arena.withText(cell) { String(decoding: $0, as: UTF8.self) })
            // `scalar` spills nothing: a default is its own text.
            case .absent, .null, .spilledText, .spilledBlob: return .text(text)
            }
        }
    }

    /// Two tables the mapping makes with one name (letter case ignored, as
    /// SQLite does): relationships `A_b.c` and `A.b_c` both make link table
    /// `A_b_c`; an entity `Event_tags` beside relationship `Event.tags`.
    static func tableNameProblems(_ mapping: Mapping) -> [MappingError.Problem] {
        var owners: [String: String] = [:]
        for entity in mapping.entities {
            owners[entity.name.lowercased()] = owners[entity.name.lowercased()] ?? "entity `\(entity.name)`"
        }
        var problems: [MappingError.Problem] = []
        for entity in mapping.entities {
            for relationship in entity.relationships where relationship.many {
                let name = "\(entity.name)_\(relationship.name)"
                let owner = "the link table `\(name)` of relationship `\(entity.name).\(relationship.name)`"
                if let other = owners[name.lowercased()] {
                    problems.append(
                        .init(
                            line: relationship.line,
                            message: "\(owner) has the name of \(other) (table names ignore letter case); rename one"))
                } else if name.lowercased().hasPrefix("sqlite_") || name.lowercased().hasPrefix("_sluice") {
                    problems.append(.init(line: relationship.line, message: "\(owner) has a reserved name"))
                } else {
                    owners[name.lowercased()] = owner
                }
            }
        }
        return problems
    }

    /// Every problem of `mapping` that the YAML reader cannot see: bad paths,
    /// keys that are not attributes, names used twice, defaults of the wrong
    /// type, date formats without a date.
    static func check(_ mapping: Mapping) -> [MappingError.Problem] {
        var problems: [MappingError.Problem] = []
        var entityNames: Set<String> = []
        var pathCount = 0
        for entity in mapping.entities {
            let context = "entity `\(entity.name)`"
            if !entityNames.insert(entity.name.lowercased()).inserted {
                problems.append(
                    .init(line: entity.line, message: "\(context) is declared twice (names ignore letter case)"))
            }
            // Rules of the mapping language, whatever the store (a mapping is
            // checked before any store is named, and means the same in each):
            // table names ignore letter case, as SQLite's do, and `sqlite_`
            // and `_sluice` names are reserved, SQLite's and sluice's own.
            if entity.name.isEmpty || entity.name.lowercased().hasPrefix("sqlite_")
                || entity.name.lowercased().hasPrefix("_sluice")
            {
                problems.append(.init(line: entity.line, message: "\(context): the name is empty or reserved"))
            }
            let targeted = mapping.entities.contains { other in other.relationships.contains { $0.targets(entity.name) }
            }
            if entity.records.isEmpty && !targeted {
                problems.append(
                    .init(
                        line: entity.line, message: "\(context) has no `records` path and no relationship leads to it"))
            }
            var kinds: Set<DocumentKind> = []
            for text in entity.deleteRecords where entity.records.contains(text) {
                problems.append(
                    .init(line: entity.line, message: "\(context): `\(text)` is in both records and delete-records"))
            }
            if (!entity.deleteRecords.isEmpty || !entity.deleteWhen.isEmpty) && entity.key.isEmpty {
                problems.append(
                    .init(line: entity.line, message: "\(context): delete-records and delete-when need a key"))
            }
            for text in entity.records + entity.deleteRecords {
                switch RecordPath.parse(text) {
                case .success(let path):
                    kinds.insert(path.kind)
                    pathCount += 1
                case .failure(let problem):
                    problems.append(.init(line: entity.line, message: "\(context): \(problem)"))
                }
            }
            if kinds.count > 1 {
                problems.append(.init(line: entity.line, message: "\(context) mixes XML and JSON record paths"))
            }
            let kind = kinds.first ?? documentKind(of: entity, in: mapping)
            var attributeNames: Set<String> = []
            for attribute in entity.attributes {
                let attributeContext = "\(context), attribute `\(attribute.name)`"
                if !attributeNames.insert(attribute.name.lowercased()).inserted {
                    problems.append(
                        .init(
                            line: attribute.line,
                            message: "\(attributeContext) is mapped twice (names ignore letter case)"))
                }
                if attribute.name.isEmpty {
                    problems.append(
                        .init(line: attribute.line, message: "\(context) has an attribute with an empty name"))
                }
                for source in attribute.sources {
                    if case .failure(let problem) = FieldPath.parse(source, kind: kind) {
                        problems.append(.init(line: attribute.line, message: "\(attributeContext): \(problem)"))
                    }
                }
                if let text = attribute.defaultValue,
                    case .failure(let problem) = defaultValue(text, rule(for: attribute))
                {
                    problems.append(
                        .init(
                            line: attribute.line, message: "\(attributeContext): the default is not valid: \(problem)"))
                }
                let gathers = attribute.sources.contains {
                    (try? FieldPath.parse($0, kind: kind).get())?.gathers == true
                }
                if gathers && attribute.type != .json {
                    problems.append(
                        .init(
                            line: attribute.line,
                            message:
                                "\(attributeContext): a source with [*] gathers values into JSON: give it `type: json`")
                    )
                }
                if (attribute.items != nil || attribute.objectKey != nil) && !gathers {
                    problems.append(
                        .init(
                            line: attribute.line,
                            message: "\(attributeContext): `items` and `object` need a source with [*]"))
                }
                if let items = attribute.items, !AttributeType.itemTypes.contains(items) {
                    let types = MappingKeywords.list(AttributeType.itemTypes.map(\.rawValue))
                    problems.append(.init(line: attribute.line, message: "\(attributeContext): `items` is \(types)"))
                }
                for path in [attribute.objectKey, attribute.objectValue].compactMap({ $0 }) {
                    if case .failure(let problem) = FieldPath.parse(path, kind: kind) {
                        problems.append(.init(line: attribute.line, message: "\(attributeContext): object: \(problem)"))
                    }
                }
                for pattern in attribute.formats where DatePattern(pattern) == nil {
                    problems.append(
                        .init(
                            line: attribute.line,
                            message:
                                "\(attributeContext): the date format `\(pattern)` needs a year (y), month (M) and day (d)"
                        ))
                }
                if !attribute.formats.isEmpty && attribute.type != .date {
                    problems.append(
                        .init(line: attribute.line, message: "\(attributeContext): `formats` is for date attributes"))
                }
            }
            for key in entity.key {
                guard let attribute = entity.attributes.first(where: { $0.name == key }) else {
                    problems.append(
                        .init(line: entity.line, message: "\(context): the key `\(key)` is not one of its attributes"))
                    continue
                }
                if AttributeType.unkeyable.contains(attribute.type) {
                    problems.append(
                        .init(
                            line: attribute.line,
                            message: "\(context): the key `\(key)` cannot be of type \(attribute.type.rawValue)"))
                }
            }
            if Set(entity.key).count != entity.key.count {
                problems.append(.init(line: entity.line, message: "\(context): the key names an attribute twice"))
            }
            for name in (entity.overwrite ?? []) + entity.deleteScope.map(\.path)
            where !entity.attributes.contains(where: { $0.name == name }) {
                problems.append(
                    .init(
                        line: entity.line,
                        message: "\(context): `\(name)` in overwrite or delete-scope is not one of its attributes"))
            }
            for relationship in entity.relationships {
                let attributeContext = "\(context), relationship `\(relationship.name)`"
                problems += itemProblems(relationship, in: mapping, kind: kind, attributeContext)
                let targetName = relationship.entities.first?.entity ?? relationship.entity
                guard let target = mapping.entities.first(where: { $0.name == targetName }) else {
                    problems.append(
                        .init(
                            line: relationship.line, message: "\(attributeContext): there is no entity `\(targetName)`")
                    )
                    continue
                }
                problems += keyProblems(relationship, target: target, attributeContext)
                if relationship.source == "." && target.name == entity.name && relationship.key == nil {
                    problems.append(
                        .init(
                            line: relationship.line,
                            message:
                                "\(attributeContext): source `.` makes each record its own nested object (a cycle); name a field"
                        )
                    )
                }
                if relationship.many && entity.key.isEmpty {
                    problems.append(
                        .init(
                            line: relationship.line,
                            message: "\(attributeContext): a to-many relationship needs a key on `\(entity.name)`"))
                }
                switch FieldPath.parse(relationship.source, kind: kind) {
                case .success(let path):
                    if path.gathers != relationship.many {
                        problems.append(
                            .init(
                                line: relationship.line,
                                message: "\(attributeContext): a to-many source has one [*] step, a to-one source none")
                        )
                    }
                case .failure(let problem):
                    problems.append(.init(line: relationship.line, message: "\(attributeContext): \(problem)"))
                }
                if entity.attributes.contains(where: { $0.name.lowercased() == relationship.name.lowercased() })
                    && !relationship.many
                {
                    problems.append(
                        .init(line: relationship.line, message: "\(attributeContext): an attribute has the same name"))
                }
            }
            if let parent = entity.deleteScopeParent,
                !entity.relationships.contains(where: { $0.name == parent && !$0.many && $0.keyless == nil })
            {
                problems.append(
                    .init(
                        line: entity.line,
                        message:
                            "\(context): delete-scope-parent `\(parent)` is not a to-one relationship to an entity with a key"
                    ))
            }
            if entity.deleteMissing == true && entity.key.isEmpty {
                problems.append(.init(line: entity.line, message: "\(context): delete-missing needs a key"))
            }
            for (setting, conditions) in [("filter", entity.filter), ("delete-when", entity.deleteWhen)] {
                for condition in conditions {
                    if case .failure(let problem) = FieldPath.parse(condition.path, kind: kind) {
                        problems.append(.init(line: entity.line, message: "\(context): \(setting): \(problem)"))
                    }
                }
            }
            if entity.attributes.count > maxAttributes {
                problems.append(
                    .init(line: entity.line, message: "\(context) has more than \(maxAttributes) attributes"))
            }
        }
        problems += tableNameProblems(mapping)
        if pathCount > maxRoutes {
            problems.append(.init(line: nil, message: "the mapping declares more than \(maxRoutes) record paths"))
        }
        return problems
    }
}
