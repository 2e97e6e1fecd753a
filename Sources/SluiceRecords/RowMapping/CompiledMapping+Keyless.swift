/// Entities without a key reached through relationships: their rows get a
/// derived key (`_sluice_key`) that the batcher writes, so that they can be
/// linked like any other row.
extension CompiledMapping {
    /// Whether some relationship reaches `entity` with a `keyless` rule.
    static func isKeylessTarget(_ entity: EntityMapping, in mapping: Mapping) -> Bool {
        mapping.entities.contains { other in
            other.relationships.contains { $0.entity == entity.name && $0.keyless != nil }
        }
    }

    /// What is wrong with how `relationship` addresses the key of `target`.
    static func keyProblems(_ relationship: RelationshipMapping, target: EntityMapping, _ context: String)
        -> [MappingError.Problem]
    {
        let line = relationship.line
        if target.key.isEmpty {
            guard relationship.keyless != nil else {
                let setting = RelationshipSetting.keyless.rawValue
                let choices = MappingKeywords.list(KeylessRule.allCases.map { "`\(setting): \($0.rawValue)`" })
                let message = "\(context): the target `\(target.name)` has no key: give it one, or say \(choices)"
                return [.init(line: line, message: message)]
            }
            if !target.records.isEmpty {
                return [
                    .init(
                        line: line,
                        message:
                            "\(context): `\(target.name)` has no key and records of its own; a keyless target is filled only through relationships"
                    )
                ]
            }
            return []
        }
        if relationship.keyless != nil {
            return [
                .init(
                    line: line,
                    message: "\(context): `keyless` is for targets without a key, and `\(target.name)` has one")
            ]
        }
        if target.key.count != 1 {
            return [.init(line: line, message: "\(context): the target `\(target.name)` needs a single-attribute key")]
        }
        return []
    }
}
