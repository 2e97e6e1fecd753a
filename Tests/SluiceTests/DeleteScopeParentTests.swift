import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// Delete-missing limited to the children of the parents a run imported.
@Suite struct DeleteScopeParentTests {
    @Test func onlyChildrenOfImportedParentsAreDeletedJSONAndXML() throws {
        let json = """
            entities:
              Post: {records: "$.posts[*]", key: id, attributes: {id: integer}}
              Comment: {records: "$.comments[*]", key: id, delete-missing: true, delete-scope-parent: post,
                        attributes: {id: integer}, relationships: {post: {entity: Post, source: post}}}
            """
        let xml = """
            entities:
              Post: {records: /dump/posts/row, key: Id, attributes: {Id: integer}}
              Comment: {records: /dump/comments/row, key: Id, delete-missing: true, delete-scope-parent: post,
                        attributes: {Id: integer}, relationships: {post: {entity: Post, source: "@PostId"}}}
            """
        let firstJSON =
            #"{"posts": [{"id": 1}, {"id": 2}], "comments": [{"id": 10, "post": 1}, {"id": 11, "post": 1}, {"id": 20, "post": 2}, {"id": 30, "post": 3}]}"#
        let secondJSON = #"{"posts": [{"id": 1}], "comments": [{"id": 10, "post": 1}]}"#
        let firstXML =
            #"<dump><posts><row Id="1"/><row Id="2"/></posts><comments><row Id="10" PostId="1"/><row Id="11" PostId="1"/><row Id="20" PostId="2"/><row Id="30" PostId="3"/></comments></dump>"#
        let secondXML = #"<dump><posts><row Id="1"/></posts><comments><row Id="10" PostId="1"/></comments></dump>"#
        for (yaml, name, first, second) in [
            (json, "d.json", firstJSON, secondJSON), (xml, "d.xml", firstXML, secondXML),
        ] {
            let store = newStore()
            try importText(yaml, name, first, store: store)
            let report = try Importer(mapping: Mapping.parse(yaml: yaml), store: store)
                .runBlocking(inputs: [TestPaths.file(name, second)])
            #expect(report[entity: "Comment"]?.deleted == 1)
            #expect(report[entity: "Post"]?.deleted == 0)
            let reader = StoreReader(store)
            #expect(reader.rows("SELECT * FROM Comment ORDER BY 1").map { $0[0] } == ["10", "20", "30"])
            #expect(reader.count("Post") == 2)
            #expect(reader.rows("SELECT name FROM sqlite_master WHERE name LIKE '_sluice_seen%'").isEmpty)
        }
    }

    @Test func theScopeMustBeAToOneRelationship() {
        #expect(throws: MappingError.self) {
            try Mapping.parse(
                yaml:
                    "entities: {C: {records: $, key: id, delete-missing: true, delete-scope-parent: nope, attributes: {id: integer}}}"
            )
        }
    }
}
