import SluiceParsers
@_spi(Machinery) import SluiceRecords

/// Collects mapped rows of every entity.
final class Collector: RecordSink {
    let mappers: [RowMapper]
    var arenas: [RowArena]
    var routed: [[Int]] = []

    init(_ mapping: CompiledMapping) {
        mappers = mapping.mappers
        arenas = mapping.mappers.map { RowArena(columnCount: $0.schema.columns.count) }
    }

    func record(_ tree: RecordTree, entities: [Int], deleting: [Int], ordinal: Int) throws {
        routed.append(entities)
        for entity in entities {
            _ = try mappers[entity].appendRow(tree, root: 0, ordinal: ordinal, into: &arenas[entity])
        }
    }

    /// Row `row` of entity `entity` as display strings.
    func row(_ entity: Int, _ row: Int) -> [String] {
        let arena = arenas[entity]
        return (0..<arena.columnCount).map { column in
            let cell = arena[row, column]
            switch cell {
            case .absent: return "-"
            case .null: return "null"
            case .integer(let value): return "\(value)"
            case .real(let value): return "\(value)"
            case .text: return arena.withText(cell) { "'" + String(decoding: $0, as: UTF8.self) + "'" }
            case .blob: return arena.withText(cell) { "x'" + $0.map { String($0, radix: 16) }.joined() + "'" }
            case .spilledText: return "'" + String(decoding: arena.spilledBytes(cell) ?? [], as: UTF8.self) + "'"
            case .spilledBlob:
                return "x'" + (arena.spilledBytes(cell) ?? []).map { String($0, radix: 16) }.joined() + "'"
            }
        }
    }
}

func assemble(_ yaml: String, xml: String? = nil, json: String? = nil, chunk: Int = 4096) throws -> Collector {
    let compiled = try CompiledMapping(Mapping.parse(yaml: yaml))
    let collector = Collector(compiled)
    let assembler = RecordAssembler(routes: compiled.routes, sink: collector)
    let bytes = Array((xml ?? json ?? "").utf8)
    if xml != nil {
        let parser = XMLPushParser(handler: assembler, name: "t.xml")
        for start in stride(from: 0, to: bytes.count, by: chunk) {
            try bytes[start..<min(start + chunk, bytes.count)].withUnsafeBytes { try parser.feed($0) }
        }
        try parser.finish()
    } else {
        let parser = JSONPushParser(handler: assembler, name: "t.json", multipleValues: true)
        for start in stride(from: 0, to: bytes.count, by: chunk) {
            try bytes[start..<min(start + chunk, bytes.count)].withUnsafeBytes { try parser.feed($0) }
        }
        try parser.finish()
    }
    return collector
}
