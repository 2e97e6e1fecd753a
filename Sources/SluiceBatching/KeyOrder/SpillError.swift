#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A temporary run file of the key-ordered apply could not be created,
/// written or read (disk full, directory missing, I/O error).
public struct SpillError: Error, CustomStringConvertible {
    /// The file or directory concerned.
    public var path: String
    /// What was being done.
    public var action: String
    /// The system's reason.
    public var message: String

    /// An error for `action` on `path`, with `errno`'s text.
    package init(path: String, action: String, errno code: Int32) {
        self.path = path
        self.action = action
        message = String(cString: strerror(code))
    }

    /// An error with an explicit reason.
    init(path: String, action: String, message: String) {
        self.path = path
        self.action = action
        self.message = message
    }

    public var description: String { "\(path): \(action): \(message)" }
}
