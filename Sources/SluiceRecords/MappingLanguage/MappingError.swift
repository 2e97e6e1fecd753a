/// Everything wrong with a mapping, found before any input is read.
public struct MappingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One problem, at a line of the mapping file when known.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// 1-based line in the mapping file.
        public var line: Int?
        /// What is wrong.
        public var message: String

        /// `line N: message`, or the message alone.
        public var description: String { line.map { "line \($0): \(message)" } ?? message }
    }

    /// The mapping file, when there is one.
    public var file: String?
    /// All problems, in file order.
    public var problems: [Problem]

    /// One problem per line: `file:line: message`.
    public var description: String {
        problems.map { problem in
            let place = [file, problem.line.map(String.init)].compactMap { $0 }.joined(separator: ":")
            return place.isEmpty ? problem.message : "\(place): \(problem.message)"
        }.joined(separator: "\n")
    }
}
