/// A closed list of words of the mapping language, one table: each case is
/// a word and its raw value the word's spelling. The loader accepts exactly
/// these spellings, the writer writes them and the error messages list
/// them, so a word is spelled in one place.
package protocol MappingKeyword: RawRepresentable<String>, CaseIterable, Sendable where AllCases == [Self] {}

extension MappingKeyword {
    /// Every spelling, in declaration order, as messages list them:
    /// `a, b or c`.
    package static var choices: String { MappingKeywords.list(allCases.map(\.rawValue)) }

    /// Every spelling, in declaration order, as a flow mapping's keys:
    /// `{a, b, c}`.
    package static var braced: String { "{" + allCases.map(\.rawValue).joined(separator: ", ") + "}" }
}

/// Helpers of the keyword tables.
package enum MappingKeywords {
    /// `words` as a sentence lists them: `a`, `a or b`, `a, b or c`.
    package static func list(_ words: [String]) -> String {
        guard let last = words.last, words.count > 1 else { return words.first ?? "" }
        return words.dropLast().joined(separator: ", ") + " or " + last
    }
}

extension AttributeType: MappingKeyword {
    /// The types an element of a gathered array (`items`) may have.
    package static let itemTypes: [AttributeType] = [.string, .integer, .double, .float, .decimal, .boolean]

    /// The types a key attribute may not have: values that do not compare
    /// exactly (floating point) or that are not scalars.
    package static let unkeyable: [AttributeType] = [.json, .binary, .double, .float]
}

extension EpochUnit: MappingKeyword {}
extension WriteMode: MappingKeyword {}
extension MissingKeyPolicy: MappingKeyword {}
extension InvalidValuePolicy: MappingKeyword {}
extension MissingTargetPolicy: MappingKeyword {}
extension LinkRule: MappingKeyword {}
extension KeylessRule: MappingKeyword {}

/// The settings of a mapping file's top level.
package enum MappingSetting: String, MappingKeyword {
    case entities
}

/// The settings of an entity, in the order the writer writes them.
package enum EntitySetting: String, MappingKeyword {
    case records
    case key
    case missingKey = "missing-key"
    case filter
    case mode
    case overwrite
    case deleteMissing = "delete-missing"
    case deleteScope = "delete-scope"
    case deleteScopeParent = "delete-scope-parent"
    case deleteRecords = "delete-records"
    case deleteWhen = "delete-when"
    case attributes
    case relationships
}

/// The settings of an attribute (of an entity, or of a link table), in the
/// order the writer writes them.
package enum AttributeSetting: String, MappingKeyword {
    case type
    case source
    case `default`
    case invalid
    case formats
    case epoch
    case items
    case object
}

/// The two paths of an attribute's `object` setting.
package enum ObjectSetting: String, MappingKeyword {
    case key
    case value
}

/// The settings of a relationship, in the order the writer writes them.
package enum RelationshipSetting: String, MappingKeyword {
    case entity
    case source
    case many
    case ordered
    case rule
    case missing
    case keyless
    case key
    case entityBy = "entity-by"
    case entities
    case attributes
}

/// The tests of a condition in `filter`, `delete-when` and `delete-scope`.
/// `equals` and `in` read the same test (one of the texts), so do `not-in`
/// and `not-equals` (none of them); the writer writes `in` and `not-in`.
package enum ConditionTest: String, MappingKeyword {
    case equals
    case `in`
    case notIn = "not-in"
    case notEquals = "not-equals"
    case exists
}
