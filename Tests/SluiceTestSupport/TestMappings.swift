/// Mappings several test suites share.
public enum TestMappings {
    /// The nightly sync's: events with tag links and tag stubs.
    public static let sync = """
        entities:
          Event:
            records: $
            key: id
            attributes: {id: integer, kind: string, score: integer}
            relationships:
              tags: {entity: Tag, source: "tags[*]", many: true, missing: stub}
          Tag:
            key: name
            attributes: {name: string}
        """
}
