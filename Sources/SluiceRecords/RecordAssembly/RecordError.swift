/// A record that cannot be stored as its mapping says.
public struct RecordError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The entity being filled.
    public var entity: String
    /// The attribute at fault, when one is.
    public var attribute: String?
    /// What is wrong.
    public var message: String

    /// Creates an error.
    public init(entity: String, attribute: String?, message: String) {
        self.entity = entity
        self.attribute = attribute
        self.message = message
    }

    /// `entity Post, attribute Score: expected an integer, found "x"`.
    public var description: String {
        var text = "entity \(entity)"
        if let attribute { text += ", attribute \(attribute)" }
        return text + ": " + message
    }
}

/// A record or document that exceeds one of the importer's limits.
public struct LimitError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The limit's option name, e.g. `max-record-bytes`.
    public var limit: String
    /// Its value.
    public var value: Int
    /// What exceeded it.
    public var what: String

    /// `record is larger than max-record-bytes (16777216)`.
    public var description: String { "\(what) exceeds \(limit) (\(value)); raise the limit if the input is trusted" }
}
