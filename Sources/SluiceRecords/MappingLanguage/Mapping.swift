/// The type an attribute's values are converted to before they are stored.
public enum AttributeType: String, Sendable, CaseIterable {
    /// UTF-8 text; numbers keep their source digits.
    case string
    /// A 64-bit signed integer, exact.
    case integer
    /// A double.
    case double
    /// A double too (the name peers use for 32-bit floats; stored as 64 bits).
    case float
    /// A decimal number kept exactly, as plain text without exponent.
    case decimal
    /// `true`/`false`, `1`/`0`, `yes`/`no`, stored as 1 and 0.
    case boolean
    /// An ISO-8601 date or date-time (or epoch seconds), stored as UTC text
    /// `YYYY-MM-DD HH:MM:SS[.ffffff]`, which sorts in time order.
    case date
    /// Base64 text, stored as bytes (BLOB).
    case binary
    /// Any value, stored as compact JSON text.
    case json
}

/// How numbers in a date attribute count time since 1970-01-01 UTC.
public enum EpochUnit: String, Sendable, CaseIterable {
    /// Seconds (the default for numbers).
    case seconds
    /// Milliseconds.
    case milliseconds
    /// Microseconds.
    case microseconds
    /// Nanoseconds.
    case nanoseconds
    /// Decided by the digits of the integer part, which for dates since
    /// 1973 (and before year 5138) tell the unit: up to 11 seconds, 12 to 14
    /// milliseconds, 15 to 17 microseconds, 18 or more nanoseconds
    /// (1441888808000000 is 2015-09-10 12:40:08 UTC).
    case auto

    /// The unit `auto` takes for an integer part of `digits` digits.
    static func byDigits(_ digits: Int) -> EpochUnit {
        switch digits {
        case ...11: return .seconds
        case 12...14: return .milliseconds
        case 15...17: return .microseconds
        default: return .nanoseconds
        }
    }
}

/// How an entity's rows are written.
public enum WriteMode: String, Sendable, CaseIterable {
    /// Insert new keys, update changed rows (the default).
    case upsert
    /// Insert new keys only; existing rows are never written ("add the new
    /// recipes but keep the user's edits").
    case insertOnly = "insert-only"
    /// Update existing rows only; new keys are skipped.
    case updateOnly = "update-only"
    /// Like upsert, but an update replaces the whole row: fields the record
    /// lacks take their default (or NULL) instead of keeping the stored value.
    case replace
}

/// What to do with a record whose key is absent or null.
public enum MissingKeyPolicy: String, Sendable, CaseIterable {
    /// Stop the import with an error naming the record.
    case error
    /// Skip the record and count it.
    case skip
}

/// What to do with a value that cannot be converted to its attribute's type.
public enum InvalidValuePolicy: String, Sendable, CaseIterable {
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
    /// Date patterns tried in order before ISO-8601 (`M/d/yyyy H-mm-ss`);
    /// see docs/mapping.md for the letters.
    public var formats: [String] = []
    /// How numbers count time in a date attribute.
    public var epoch: EpochUnit = .seconds
    /// For a gathering source (`nd[*]/@ref`): the type of each element of
    /// the JSON array (string, integer, double, boolean); `nil` keeps each
    /// value's JSON form.
    public var items: AttributeType?
    /// For a gathering source: build a JSON object instead of an array, with
    /// member names from `objectKey` and values from `objectValue`, both
    /// paths relative to each gathered node (OSM tags: `@k`, `@v`).
    public var objectKey: String?
    /// See ``objectKey``.
    public var objectValue: String?
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
    /// The key attributes: one, several (a compound key) or none (every
    /// record is inserted as a new row).
    public var key: [String]
    /// What to do with a record whose key is missing.
    public var missingKey: MissingKeyPolicy = .error
    /// Records are imported only when every condition holds.
    public var filter: [FilterCondition] = []
    /// How rows are written; `nil` takes the run's mode.
    public var mode: WriteMode?
    /// The attributes an update may change; the others are written on
    /// insert only. `nil` lets updates change every attribute.
    public var overwrite: [String]?
    /// Whether a run with delete-missing removes this entity's stored rows
    /// that the run did not see; `nil` follows the run.
    public var deleteMissing: Bool?
    /// Limits delete-missing to stored rows whose columns pass these
    /// conditions (compared with the stored values as text).
    public var deleteScope: [FilterCondition] = []
    /// Limits delete-missing to stored rows whose to-one relationship of
    /// this name points at a record the run imported (children of imported
    /// parents).
    public var deleteScopeParent: String?
    /// Record paths whose records delete their key (and the links from it)
    /// instead of writing it: a change file's deletions (osmChange's
    /// `<delete>` blocks).
    public var deleteRecords: [String] = []
    /// Conditions under which a record deletes its key instead of writing
    /// it (a `deleted: true` or `op: d` member, a tombstone); all must hold.
    public var deleteWhen: [FilterCondition] = []
    /// Links to other entities.
    public var relationships: [RelationshipMapping] = []
    /// The attributes, in column order.
    public var attributes: [AttributeMapping]
    /// Line of the entity in the mapping file, for messages.
    public var line: Int?

    /// Creates an entity mapping.
    public init(name: String, records: [String], key: [String], attributes: [AttributeMapping], line: Int? = nil) {
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

/// What a link to a record that is not in the store means.
public enum MissingTargetPolicy: String, Sendable, CaseIterable {
    /// Keep the link; it resolves when the target arrives (default).
    case dangling
    /// Create a row holding only the target's key (MagicalRecord's stub).
    case stub
    /// Fail the run if any link still dangles at its end.
    case error
}

/// How a to-many relationship's links change when a record lists them again.
public enum LinkRule: String, Sendable, CaseIterable {
    /// Add the listed links, never remove any.
    case union
    /// Unlink what the new list does not hold (the default).
    case replace
    /// Like replace, and delete the target rows that were unlinked (children
    /// dropped from their parent's list).
    case replaceAndDelete = "replace-and-delete"
}

/// One target entity of a relationship whose items name their entity.
public struct TargetChoice: Sendable, Equatable {
    /// The item's value (`way`).
    public var value: String
    /// The entity it means (`Way`).
    public var entity: String

    /// Creates a choice.
    public init(value: String, entity: String) {
        self.value = value
        self.entity = entity
    }
}

/// What a nested object of an entity without a key becomes.
public enum KeylessRule: String, Sendable, CaseIterable {
    /// The parent's object updates the row linked from the same parent (and
    /// position): re-importing the parent does not add rows.
    case reuse
    /// Every occurrence is a new row.
    case create
}

/// A relationship from an entity to another: a scalar key or list of keys
/// (linked by the target's natural key), or nested objects that are found or
/// created in the target entity and linked.
public struct RelationshipMapping: Sendable, Equatable {
    /// The relationship's name: the column (to-one) or the link table's
    /// suffix (to-many, table `<Entity>_<name>`).
    public var name: String
    /// The target entity.
    public var entity: String
    /// Where the key(s) or nested object(s) are; for to-many a gathering
    /// path (`nd[*]/@ref`, `tags[*]`).
    public var source: String
    /// To-many (a link table) instead of to-one (a column).
    public var many: Bool
    /// To-many: keep the source order (a `position` column).
    public var ordered: Bool
    /// To-many: union or replace.
    public var rule: LinkRule
    /// Links to targets that are not stored.
    public var missing: MissingTargetPolicy
    /// Whether the mapping says `missing:` (a link to a target row its
    /// entity's mode skipped is written only then).
    public var missingIsExplicit = false
    /// For a target entity without a key: whether a parent's nested object
    /// updates the one linked before or is always a new row.
    public var keyless: KeylessRule?
    /// To-many over objects: where each item holds the target's key (the
    /// item itself is not imported).
    public var key: String?
    /// To-many with targets of several entities: where each item names its
    /// target's entity, and which value means which entity.
    public var entityBy: String?
    public var entities: [TargetChoice] = []
    /// To-many over objects: columns of the link table read from each item
    /// (an OSM member's role).
    public var attributes: [AttributeMapping] = []
    /// Line in the mapping file.
    public var line: Int?

    /// Whether `entity` is the target, or one of the targets.
    public func targets(_ entity: String) -> Bool {
        self.entity == entity || entities.contains { $0.entity == entity }
    }

    /// Creates a relationship.
    public init(
        name: String, entity: String, source: String, many: Bool = false, ordered: Bool = false,
        rule: LinkRule = .replace,
        missing: MissingTargetPolicy = .dangling, line: Int? = nil
    ) {
        self.name = name
        self.entity = entity
        self.source = source
        self.many = many
        self.ordered = ordered
        self.rule = rule
        self.missing = missing
        self.line = line
    }
}

/// One condition of an entity's `filter`: the source field at `path`
/// compared as text, before any type conversion.
public struct FilterCondition: Sendable, Equatable {
    /// What the field must satisfy.
    public enum Test: Sendable, Equatable {
        /// Equal to one of these texts.
        case oneOf([String])
        /// Equal to none of these texts (absent fields pass).
        case noneOf([String])
        /// Present (`true`) or absent (`false`); null counts as present.
        case exists(Bool)
    }

    /// The source path, in the syntax of the entity's records.
    public var path: String
    /// The test.
    public var test: Test

    /// Creates a condition.
    public init(path: String, test: Test) {
        self.path = path
        self.test = test
    }
}
