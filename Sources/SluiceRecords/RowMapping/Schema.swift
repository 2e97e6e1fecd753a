/// A column's default value, applied by the store on insert when the source
/// has no such field.
package enum DefaultValue: Sendable, Equatable {
    case integer(Int64)
    case real(Double)
    case text(String)
}

/// One column of a table.
package struct ColumnSchema: Sendable, Equatable {
    /// The column name (the attribute name).
    package var name: String
    /// The attribute type, which decides the SQL column type.
    package var type: AttributeType
    /// The value stored on insert when the source has none.
    package var defaultValue: DefaultValue?

    /// Creates a column.
    package init(name: String, type: AttributeType, defaultValue: DefaultValue? = nil) {
        self.name = name
        self.type = type
        self.defaultValue = defaultValue
    }
}

/// The table an entity is stored in.
package struct TableSchema: Sendable, Equatable {
    /// The table name (the entity name).
    package var name: String
    /// The columns, in order; the key columns are among them.
    package var columns: [ColumnSchema]
    /// The indices of the key columns in ``columns``: one, several (a
    /// compound key, compared in this order) or none (every row is new).
    package var keyColumns: [Int]

    /// How rows are written: the entity's mode, else the run's (see
    /// ``settle(mode:deleteMissing:_:)``).
    package var mode: WriteMode = .upsert
    /// The columns an update may change; `nil` means all.
    package var overwrite: Set<Int>?
    /// Whether the run sweeps the table with delete-missing: the entity's
    /// `delete-missing`, else the run's, and only with a key (see
    /// ``settle(mode:deleteMissing:_:)``).
    package var deleteMissing = false
    /// Stored-column conditions limiting delete-missing: column index and test.
    package var deleteScope: [(column: Int, test: FilterCondition.Test)] = []
    /// To-one relationships: columns holding another entity's key.
    package var references: [Reference] = []
    /// Limits delete-missing to rows whose reference points at a record
    /// of its target that the run saw (children of imported parents).
    package var deleteScopeParent: Reference?

    /// The key column of an entity without a key that relationships reach
    /// with a `keyless` rule; the batcher derives its value.
    package static let derivedKeyName = "_sluice_key"

    /// Creates a table schema.
    package init(name: String, columns: [ColumnSchema], keyColumns: [Int]) {
        self.name = name
        self.columns = columns
        self.keyColumns = keyColumns
    }

    /// Settles what an entity's mapping leaves to the run: the write mode and
    /// delete-missing are the entity's own (`mode`, `deleteMissing`; nil when
    /// its mapping says nothing), else the run's `defaults`, and
    /// delete-missing needs a key. Called once per entity when a mapping is
    /// compiled for a run, the one place that decides both: the stores, the
    /// sorter and the pipeline read the settled values.
    package mutating func settle(mode: WriteMode?, deleteMissing: Bool?, _ defaults: EntityDefaults) {
        self.mode = mode ?? defaults.mode
        self.deleteMissing = (deleteMissing ?? defaults.deleteMissing) && !keyColumns.isEmpty
    }

    /// Whether several occurrences of a key are combined into one row
    /// (present fields of later ones win) rather than the last kept whole
    /// (`replace`).
    package var combinesOccurrences: Bool { mode != .replace }

    package static func == (lhs: TableSchema, rhs: TableSchema) -> Bool {
        lhs.name == rhs.name && lhs.columns == rhs.columns && lhs.keyColumns == rhs.keyColumns && lhs.mode == rhs.mode
            && lhs.overwrite == rhs.overwrite && lhs.deleteMissing == rhs.deleteMissing
            && lhs.deleteScope.map(\.column) == rhs.deleteScope.map(\.column)
            && lhs.deleteScope.map(\.test) == rhs.deleteScope.map(\.test) && lhs.references == rhs.references
            && lhs.deleteScopeParent == rhs.deleteScopeParent
    }
}

/// What a run decides for the entities whose mapping does not say: the
/// write mode and delete-missing (the options' `store.mode` and
/// `store.deleteMissing`). The defaults are a run's without options.
package struct EntityDefaults: Sendable, Equatable {
    /// The write mode of an entity whose mapping sets none.
    package var mode: WriteMode
    /// Whether an entity whose mapping does not say is swept by delete-missing.
    package var deleteMissing: Bool

    /// Defaults of `mode` and `deleteMissing`.
    package init(mode: WriteMode = .upsert, deleteMissing: Bool = false) {
        self.mode = mode
        self.deleteMissing = deleteMissing
    }
}

/// A column that holds the key of a row of another table (a to-one link, by
/// natural key, so the target may arrive later or never).
package struct Reference: Sendable, Equatable {
    /// The column in the referring table.
    package var column: Int
    /// The relationship's name, for messages.
    package var name: String
    /// The target table and its key column.
    package var targetTable: String
    package var targetKey: String
    /// What a key with no target row means.
    package var missing: MissingTargetPolicy
}

/// The link table of a to-many relationship: rows of (source key…, target
/// key, position).
package struct LinkSchema: Sendable, Equatable {
    /// The table name, `<Source>_<relationship>`.
    package var name: String
    /// The source entity and the link columns holding its key.
    package var sourceTable: String
    package var sourceColumns: [ColumnSchema]
    /// The source table's key column names, in order.
    package var sourceKeys: [String]
    /// The link column holding the target's key.
    package var targetColumn: ColumnSchema
    /// The target table and its key column.
    package var targetTable: String
    package var targetKey: String
    /// Keep source order in a `position` column (and allow repeats).
    package var ordered: Bool
    /// Union or replace.
    package var rule: LinkRule
    /// What a key with no target row means.
    package var missing: MissingTargetPolicy
    /// Whether a link is written only to a target row that is stored: the
    /// mapping says no `missing:`, the link has one target entity, and that
    /// entity's mode is `update-only` (the mode skipped the other targets).
    package var storedTargetsOnly = false

    /// When items name their target's entity: the entities, by item value,
    /// and the entity of each link is stored in column `target_entity`.
    package var choices: [LinkTarget] = []
    /// The targets the link's rows may name: its ``choices``, or its one
    /// target table (item value empty: every row names it) when it has none.
    package var targets: [LinkTarget] {
        choices.isEmpty ? [LinkTarget(value: "", table: targetTable, key: targetKey)] : choices
    }
    /// Columns read from each item (an OSM member's role).
    package var attributeColumns: [ColumnSchema] = []

    /// The name of the column holding each link's target entity.
    package static let entityColumnName = "target_entity"

    /// Cells per link row: the source key, the target key, the position,
    /// the target entity (with ``choices``), then the attribute columns.
    package var columnCount: Int { sourceColumns.count + 2 + (choices.isEmpty ? 0 : 1) + attributeColumns.count }
    /// The index of the first attribute cell of a link row.
    package var firstAttributeCell: Int { sourceColumns.count + 2 + (choices.isEmpty ? 0 : 1) }
}

/// One possible target of a link whose items name their entity.
package struct LinkTarget: Sendable, Equatable {
    /// The item value naming it (`way`).
    package var value: String
    /// The target table and its key column.
    package var table: String
    package var key: String
}
