import Foundation

// Each of sluice's errors reads in an app (`error.localizedDescription`, an
// alert) as it does in the CLI's messages, with the place it names: the
// file, line, column and byte of an input, the mapping's line, the store.

extension ImportError: LocalizedError {
    /// ``description``: the CLI's message.
    public var errorDescription: String? { description }
}

extension MappingError: LocalizedError {
    /// The problems with their lines, as `sluice` prints them.
    public var errorDescription: String? { description }
}

extension InputError: LocalizedError {
    /// The input's name and the reason.
    public var errorDescription: String? { description }
}

extension ParseError: LocalizedError {
    /// The input's name, line, column and byte, then the reason.
    public var errorDescription: String? { description }
}

extension StoreError: LocalizedError {
    /// The store, what sluice was doing, and the database's message.
    public var errorDescription: String? { description }
}

extension SpillError: LocalizedError {
    /// The sorted run's file and the reason.
    public var errorDescription: String? { description }
}
