import SluiceParsers
@_spi(Machinery) import SluiceRecords
import Testing

@Suite struct RecordTreeTests {
    @Test func whitespaceBetweenManyChildrenStaysLinear() throws {
        let children = String(repeating: "\n    <n id=\"1\"/>", count: 50_000)
        let yaml =
            "entities: {G: {records: /c/g, key: [], attributes: {ids: {type: json, source: \"n[*]/@id\", items: integer}, note: {source: \".\"}}}}"
        let rows = try assemble(yaml, xml: "<c><g> lead \(children)\n  tail </g></c>", chunk: 65_536)
        #expect(rows.arenas[0].rowCount == 1)
        // 50,000 ids of 1 plus commas and brackets, and the element's own text.
        #expect(rows.arenas[0].byteCount < 200_000)
        #expect(rows.row(0, 0)[1] == "' lead \n    \n  tail '")
    }
}
