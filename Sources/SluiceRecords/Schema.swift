/// A column's default value, applied by the store on insert when the source
/// has no such field.
public enum DefaultValue: Sendable, Equatable {
    case integer(Int64)
    case real(Double)
    case text(String)
}

/// One column of a table.
public struct ColumnSchema: Sendable, Equatable {
    /// The column name (the attribute name).
    public var name: String
    /// The attribute type, which decides the SQL column type.
    public var type: AttributeType
    /// The value stored on insert when the source has none.
    public var defaultValue: DefaultValue?

    /// Creates a column.
    public init(name: String, type: AttributeType, defaultValue: DefaultValue? = nil) {
        self.name = name
        self.type = type
        self.defaultValue = defaultValue
    }
}

/// The table an entity is stored in.
public struct TableSchema: Sendable, Equatable {
    /// The table name (the entity name).
    public var name: String
    /// The columns, in order; the key columns are among them.
    public var columns: [ColumnSchema]
    /// The indices of the key columns in ``columns``: one, several (a
    /// compound key, compared in this order) or none (every row is new).
    public var keyColumns: [Int]

    /// Creates a table schema.
    public init(name: String, columns: [ColumnSchema], keyColumns: [Int]) {
        self.name = name
        self.columns = columns
        self.keyColumns = keyColumns
    }
}
