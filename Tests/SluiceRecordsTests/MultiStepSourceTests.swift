import Testing

@_spi(Machinery) @testable import SluiceRecords

/// A source of several steps whose first step is a member of the record
/// (`actor.id`) starts from the node the mapper's one pass over the root
/// found for that member instead of walking the root again: it must read
/// what `RecordTree.resolve` reads, the first member of that name, when the
/// member repeats, is not an object, is absent, or lacks the rest of the path.
@Suite struct MultiStepSourceTests {
    static let yaml = """
        entities:
          Event:
            records: $
            key: id
            attributes:
              id: integer
              actor_id: {type: integer, source: [actor.id, fallback.id, fallback]}
              login: {source: actor.login}
              actor: json
              deep: {type: integer, source: a.b.c}
        """

    @Test func readsWhatResolveReadsFromTheFirstMember() throws {
        let json = """
            {"id":1,"actor":{"id":5,"login":"ann"},"a":{"b":{"c":7}}}
            {"id":2,"actor":{"login":"bob"},"actor":{"id":6},"fallback":{"id":9}}
            {"id":3,"actor":4,"fallback":8,"a":{"b":3}}
            {"id":4,"a":{"x":1,"b":{"d":1,"c":"12"}},"actor":null}
            {"actor":{"id":7},"id":5,"fallback":{"id":10},"actor":{"login":"cy"}}
            """
        let rows = try assemble(Self.yaml, json: json)
        #expect(rows.arenas[0].rowCount == 5)
        #expect(rows.row(0, 0) == ["1", "5", "'ann'", #"'{"id":5,"login":"ann"}'"#, "7"])
        #expect(rows.row(0, 1) == ["2", "9", "'bob'", #"'{"login":"bob"}'"#, "-"])
        #expect(rows.row(0, 2) == ["3", "8", "-", "'4'", "-"])
        #expect(rows.row(0, 3) == ["4", "-", "-", "null", "12"])
        #expect(rows.row(0, 4) == ["5", "7", "-", #"'{"id":7}'"#, "-"])
    }

    @Test func xmlChildThenAttribute() throws {
        let yaml = """
            entities:
              Page:
                records: /wiki/page
                key: id
                attributes:
                  id: integer
                  rev: {type: integer, source: [revision/@id, revision/id]}
                  user: {source: revision/contributor/name}
            """
        let xml = """
            <wiki><page><id>1</id><revision><id>4</id></revision><revision id="5"/></page>
            <page><id>2</id><revision id="6"><contributor><name>ann</name></contributor></revision></page></wiki>
            """
        for chunk in [1, 4096] {
            let rows = try assemble(yaml, xml: xml, chunk: chunk)
            #expect(rows.arenas[0].rowCount == 2)
            #expect(rows.row(0, 0) == ["1", "4", "-"])
            #expect(rows.row(0, 1) == ["2", "6", "'ann'"])
        }
    }
}
