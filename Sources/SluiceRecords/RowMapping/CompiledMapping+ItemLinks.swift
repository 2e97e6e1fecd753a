/// To-many relationships over objects that are not imported: each item holds
/// the target's key (`key`), may name its target's entity (`entity-by`,
/// `entities`) and carries link attributes — an OSM relation's members.
extension CompiledMapping {
    /// The possible targets of a relationship whose items name their entity.
    static func linkTargets(_ relationship: RelationshipMapping, mappers: [RowMapper], in mapping: Mapping)
        -> [LinkTarget]
    {
        relationship.entities.compactMap { choice in
            keyColumn(of: choice.entity, mappers: mappers, in: mapping).map {
                LinkTarget(value: choice.value, table: choice.entity, key: $0.name)
            }
        }
    }

    /// The single key column of the entity called `name`.
    private static func keyColumn(of name: String, mappers: [RowMapper], in mapping: Mapping) -> ColumnSchema? {
        guard let index = mapping.entities.firstIndex(where: { $0.name == name }),
            let key = mappers[index].schema.keyColumns.first
        else { return nil }
        return mappers[index].schema.columns[key]
    }

    /// Sets how `relation` reads each item: its key path, entity choice and
    /// link attributes.
    static func readItems(
        _ relationship: RelationshipMapping, into relation: inout Relation, kind: DocumentKind, mappers: [RowMapper],
        in mapping: Mapping
    ) {
        relation.itemKey = relationship.key.flatMap { try? FieldPath.parse($0, kind: kind).get() }
        relation.choosing = relationship.entityBy.flatMap { try? FieldPath.parse($0, kind: kind).get() }
        relation.choices = relationship.entities.compactMap { choice in
            keyColumn(of: choice.entity, mappers: mappers, in: mapping).map {
                (Array(choice.value.utf8), ValueRule(type: $0.type))
            }
        }
        relation.linkAttributes = relationship.attributes.map { attribute in
            (
                sources(of: attribute, kind: kind).compactMap { try? FieldPath.parse($0, kind: kind).get() },
                rule(for: attribute)
            )
        }
    }

    /// What is wrong with a relationship's item settings.
    static func itemProblems(
        _ relationship: RelationshipMapping, in mapping: Mapping, kind: DocumentKind, _ context: String
    ) -> [MappingError.Problem] {
        var messages: [String] = []
        let readsItems =
            relationship.key != nil || !relationship.attributes.isEmpty || relationship.entityBy != nil
            || !relationship.entities.isEmpty
        guard readsItems else { return [] }
        if !relationship.many {
            messages.append("`key`, `entity-by`, `entities` and `attributes` are for to-many relationships")
        }
        if relationship.key == nil { messages.append("items that are not imported need a `key` path inside each item") }
        if (relationship.entityBy == nil) != relationship.entities.isEmpty {
            messages.append("`entity-by` and `entities` go together")
        }
        if !relationship.entities.isEmpty {
            if !relationship.entity.isEmpty { messages.append("give either `entity` or `entities`") }
            if relationship.rule == .replaceAndDelete {
                messages.append("replace-and-delete needs a single target entity")
            }
            // The first choice is checked like a single target.
            for choice in relationship.entities.dropFirst() {
                guard let target = mapping.entities.first(where: { $0.name == choice.entity }) else {
                    messages.append("there is no entity `\(choice.entity)`")
                    continue
                }
                if target.key.count != 1 { messages.append("the target `\(target.name)` needs a single-attribute key") }
            }
            if Set(relationship.entities.map(\.value)).count != relationship.entities.count {
                messages.append("`entities` names a value twice")
            }
        }
        if relationship.keyless != nil { messages.append("`keyless` is for nested objects that are imported") }
        for path in [relationship.key, relationship.entityBy].compactMap({ $0 })
            + relationship.attributes.flatMap(\.sources)
        {
            if case .failure(let problem) = FieldPath.parse(path, kind: kind) { messages.append("\(problem)") }
        }
        let reserved = ["position", LinkSchema.entityColumnName, "target_key"]
        var names: Set<String> = []
        for attribute in relationship.attributes {
            if reserved.contains(attribute.name.lowercased()) || !names.insert(attribute.name.lowercased()).inserted
                || attribute.name.isEmpty
            {
                messages.append("the link attribute name `\(attribute.name)` is empty, reserved or used twice")
            }
        }
        return messages.map { .init(line: relationship.line, message: "\(context): \($0)") }
    }
}
