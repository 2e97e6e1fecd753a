import SluiceRecords

extension AttributeType {
    /// The SQLite column type used for the attribute. A `json` column is
    /// declared `JSON TEXT`: TEXT affinity, as `TEXT`, and a name that a
    /// zero-config run adopting the table reads back as `json`
    /// (``SQLiteStore/attributeType(declared:)``). Declared `TEXT`, it read
    /// back as `string`, and the same file imported again stored its string
    /// values without their JSON quotes, updating their rows.
    package var sqlType: String {
        switch self {
        case .integer, .boolean: return "INTEGER"
        case .double, .float: return "REAL"
        case .json: return "JSON TEXT"
        case .string, .date, .decimal: return "TEXT"
        case .binary: return "BLOB"
        }
    }
}
