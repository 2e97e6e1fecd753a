import SluiceRecords

/// A relationship whose links can point at no row, as a store that keeps its
/// dangling count up to date needs to know it: a reference column of an
/// entity table, or a link table (summed over ``LinkSchema/targets``).
package enum DanglingRelation: Sendable, Equatable {
    /// Reference `reference` of `schema`'s table.
    case reference(TableSchema, Reference)
    /// Link table `link`.
    case link(LinkSchema)

    /// The relationships of `schemas` (their references, in order) then
    /// `links`: the order of the run's report.
    package static func all(_ schemas: [TableSchema], _ links: [LinkSchema]) -> [DanglingRelation] {
        schemas.flatMap { schema in schema.references.map { DanglingRelation.reference(schema, $0) } }
            + links.map { DanglingRelation.link($0) }
    }

    /// The name its count is reported under (``DanglingCount/name``):
    /// `Entity.relationship` for a reference, the link table's name for a
    /// link.
    package var name: String {
        switch self {
        case .reference(let schema, let reference): return "\(schema.name).\(reference.name)"
        case .link(let link): return link.name
        }
    }

    /// What the relationship says a missing target means.
    package var policy: MissingTargetPolicy {
        switch self {
        case .reference(_, let reference): return reference.missing
        case .link(let link): return link.missing
        }
    }

    /// `count` dangling links of this relationship.
    package func count(_ count: Int) -> DanglingCount {
        DanglingCount(name: name, count: count, policy: policy)
    }
}
