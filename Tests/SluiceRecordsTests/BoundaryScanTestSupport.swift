import SluiceParsers
@_spi(Machinery) import SluiceRecords
import SluiceTestSupport

/// Writes down every record the assembler hands over: its entities and its
/// tree, as text that two runs can compare.
final class RecordLog: RecordSink {
    var records: [String] = []

    func record(_ tree: RecordTree, entities: [Int], deleting: [Int], ordinal: Int) throws {
        records.append("\(entities) " + Self.text(tree, 0))
    }

    private static func text(_ tree: RecordTree, _ node: Int32) -> String {
        let entry = tree.nodes[Int(node)]
        var text = "\(entry.kind)(" + String(decoding: tree.name(node), as: UTF8.self) + "="
        text += String(decoding: tree.value(node), as: UTF8.self)
        for child in tree.children(node) { text += " " + Self.text(tree, child) }
        return text + ")"
    }
}

/// The routes of a mapping with one entity per record path.
func boundaryRoutes(_ paths: [String]) throws -> [CompiledMapping.Route] {
    var yaml = "entities:\n"
    for (index, path) in paths.enumerated() {
        yaml += "  E\(index): {records: \"\(path)\", key: [], attributes: {v: {source: .}}}\n"
    }
    return try CompiledMapping(Mapping.parse(yaml: yaml)).routes
}

/// The records that `bytes` gives, parsed whole (split into `chunk`-byte
/// pieces) through the real parser and assembler.
func boundaryRecords(
    _ bytes: [UInt8], routes: [CompiledMapping.Route], kind: DocumentKind, multipleValues: Bool, chunk: Int = 4096
) throws -> [String] {
    let log = RecordLog()
    let assembler = RecordAssembler(routes: routes, sink: log)
    let feed: (UnsafeRawBufferPointer) throws(ParseError) -> Void
    let finish: () throws(ParseError) -> Void
    switch kind {
    case .json:
        let parser = JSONPushParser(handler: assembler, name: "t", multipleValues: multipleValues)
        feed = { (bytes) throws(ParseError) in try parser.feed(bytes) }
        finish = { () throws(ParseError) in try parser.finish() }
    case .xml:
        let parser = XMLPushParser(handler: assembler, name: "t")
        feed = { (bytes) throws(ParseError) in try parser.feed(bytes) }
        finish = { () throws(ParseError) in try parser.finish() }
    }
    for start in stride(from: 0, to: bytes.count, by: chunk) {
        try bytes[start..<min(start + chunk, bytes.count)].withUnsafeBytes { try feed($0) }
    }
    try finish()
    return log.records
}

/// One unit as the scanner found it: where it starts, and the text that
/// parses it alone (its context's open, the unit, its context's close).
struct ScannedUnit: Equatable, CustomStringConvertible {
    /// Its start, without the offset in the chunk (which depends on the chunks).
    var start: UnitBoundary
    var end: Int64
    var alone: [UInt8]

    var description: String {
        "unit \(start.ordinal) at \(start.byteOffset)..<\(end) line \(start.line):\(start.column)"
    }
}

/// Scans `bytes` in pieces of the given sizes (cycled) and returns the
/// units; checks that every start is followed by its end and that a unit's
/// carried bytes and the bytes from its start in the chunk are the input's
/// bytes from its byte offset.
func scanUnits(
    _ bytes: [UInt8], paths: [String], kind: DocumentKind, multipleValues: Bool, chunkSizes: [Int]
) throws -> [ScannedUnit] {
    var scanner = try RecordBoundaryScanner(
        paths: paths.map { try RecordPath.parse($0).get() }, kind: kind, multipleValues: multipleValues,
        name: "t")
    var units: [ScannedUnit] = []
    var open: (start: UnitBoundary, from: Int, context: UnitContext)?
    var start = 0
    var turn = 0
    func note(_ boundary: UnitBoundary, at chunkStart: Int, _ context: UnitContext) throws {
        switch boundary.kind {
        case .start:
            guard open == nil else { throw ScanProblem("unit \(boundary.ordinal) starts inside another") }
            let from = chunkStart + boundary.offsetInChunk
            guard Int(boundary.byteOffset) + context.carried.count == from,
                bytes[Int(boundary.byteOffset)..<from].elementsEqual(context.carried)
            else { throw ScanProblem("unit \(boundary.ordinal): its offsets and carried bytes disagree") }
            var first = boundary
            first.offsetInChunk = 0
            open = (first, from, context)
        case .end:
            guard let unit = open, unit.start.ordinal == boundary.ordinal else {
                throw ScanProblem("unit \(boundary.ordinal) ends without its start")
            }
            guard Int64(chunkStart + boundary.offsetInChunk) == boundary.byteOffset else {
                throw ScanProblem("unit \(boundary.ordinal): its end's offsets disagree")
            }
            let alone =
                unit.context.open + unit.context.carried + bytes[unit.from..<Int(boundary.byteOffset)]
                + unit.context.close
            units.append(ScannedUnit(start: unit.start, end: boundary.byteOffset, alone: alone))
            open = nil
        }
    }
    while start < bytes.count {
        let size = max(1, chunkSizes[turn % chunkSizes.count])
        turn += 1
        let end = min(bytes.count, start + size)
        try bytes[start..<end].withUnsafeBytes { chunk in
            try scanner.scan(chunk) { boundary, context in try note(boundary, at: start, context) }
        }
        start = end
    }
    if let last = try scanner.finish() {
        guard let unit = open else { throw ScanProblem("an end without a start") }
        try note(last, at: bytes.count, unit.context)
    }
    guard open == nil else { throw ScanProblem("a unit never ends") }
    if let refusal = scanner.refusal { throw refusal }
    return units
}

/// The records of every unit parsed alone, with its context, in order.
func unitRecords(
    units: [ScannedUnit], routes: [CompiledMapping.Route], kind: DocumentKind, multipleValues: Bool
) throws -> [String] {
    var records: [String] = []
    for unit in units {
        records += try boundaryRecords(unit.alone, routes: routes, kind: kind, multipleValues: multipleValues)
    }
    return records
}

/// The 1-based line and byte column of `offset` in `bytes`.
func lineAndColumn(_ bytes: [UInt8], _ offset: Int64, lineStartsAfter skip: Int = 0) -> (Int, Int) {
    var line = 1
    var lineStart = skip
    for index in 0..<Int(offset) where bytes[index] == 0x0A {
        line += 1
        lineStart = index + 1
    }
    return (line, Int(offset) - lineStart + 1)
}

/// A check in a helper that failed.
struct ScanProblem: Error, Equatable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension SplitMix {
    /// A random integer in `range`.
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    /// True with probability `chance`.
    mutating func chance(_ chance: Double) -> Bool { Double.random(in: 0..<1, using: &self) < chance }
}
