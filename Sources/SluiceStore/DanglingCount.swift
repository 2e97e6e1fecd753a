import SluiceRecords

/// How many links of one relationship point at no row.
package struct DanglingCount: Sendable, Equatable {
    /// `Entity.relationship` for references, the link table's name for links.
    package var name: String
    package var count: Int
    /// What the relationship says a missing target means.
    package var policy: MissingTargetPolicy

    /// `count` dangling links of relationship `name` under `policy`.
    package init(name: String, count: Int, policy: MissingTargetPolicy) {
        self.name = name
        self.count = count
        self.policy = policy
    }
}
