/// The type an attribute's values are converted to before they are stored.
public enum AttributeType: String, Sendable, CaseIterable {
    /// UTF-8 text; numbers keep their source digits.
    case string
    /// A 64-bit signed integer, exact.
    case integer
    /// A double.
    case double
    /// `true`/`false`, `1`/`0`, `yes`/`no`, stored as 1 and 0.
    case boolean
    /// An ISO-8601 date or date-time (or epoch seconds), stored as UTC text
    /// `YYYY-MM-DD HH:MM:SS[.ffffff]`, which sorts in time order.
    case date
    /// Any value, stored as compact JSON text.
    case json

    /// The SQLite column type used for the attribute.
    public var sqlType: String {
        switch self {
        case .integer, .boolean: return "INTEGER"
        case .double: return "REAL"
        case .string, .date, .json: return "TEXT"
        }
    }
}

/// What to do with a value that cannot be converted to its attribute's type.
public enum InvalidValuePolicy: String, Sendable {
    /// Stop the import with an error naming the record and the attribute.
    case error
    /// Store null instead.
    case null
}

/// How one source field becomes one column.
public struct AttributeMapping: Sendable, Equatable {
    /// The column name.
    public var name: String
    /// The stored type.
    public var type: AttributeType
    /// Source paths tried in order, the first present one wins. Empty means
    /// "the field named like the attribute" (`@name`, then the child element
    /// `name`, for XML).
    public var sources: [String]
    /// The value stored on insert when the source has no such field; text in
    /// the mapping, converted to ``type`` when the mapping is compiled.
    public var defaultValue: String?
    /// What to do with unconvertible values.
    public var onInvalid: InvalidValuePolicy
    /// Line of the attribute in the mapping file, for messages.
    public var line: Int?

    /// Creates an attribute mapping.
    public init(
        name: String, type: AttributeType = .string, sources: [String] = [], defaultValue: String? = nil,
        onInvalid: InvalidValuePolicy = .error, line: Int? = nil
    ) {
        self.name = name
        self.type = type
        self.sources = sources
        self.defaultValue = defaultValue
        self.onInvalid = onInvalid
        self.line = line
    }
}

/// One entity: which records of the input it reads, its key and attributes.
/// Stored as a table named like the entity.
public struct EntityMapping: Sendable, Equatable {
    /// The entity (and table) name.
    public var name: String
    /// Where its records are: XML element paths (`/posts/row`) or JSON paths
    /// (`$` for each top-level value, `$[*]`, `$.jobs[*]`).
    public var records: [String]
    /// The name of the key attribute.
    public var key: String
    /// The attributes, in column order.
    public var attributes: [AttributeMapping]
    /// Line of the entity in the mapping file, for messages.
    public var line: Int?

    /// Creates an entity mapping.
    public init(name: String, records: [String], key: String, attributes: [AttributeMapping], line: Int? = nil) {
        self.name = name
        self.records = records
        self.key = key
        self.attributes = attributes
        self.line = line
    }
}

/// A whole mapping: every entity one import fills.
public struct Mapping: Sendable, Equatable {
    /// The entities, in the order their tables are created.
    public var entities: [EntityMapping]
    /// The mapping file's path, when loaded from one (for messages).
    public var file: String?

    /// Creates a mapping from entities.
    public init(entities: [EntityMapping], file: String? = nil) {
        self.entities = entities
        self.file = file
    }
}
