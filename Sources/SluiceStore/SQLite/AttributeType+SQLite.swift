import SluiceRecords

extension AttributeType {
    /// The SQLite column type used for the attribute.
    package var sqlType: String {
        switch self {
        case .integer, .boolean: return "INTEGER"
        case .double, .float: return "REAL"
        case .string, .date, .json, .decimal: return "TEXT"
        case .binary: return "BLOB"
        }
    }
}
