import SluiceRecords
import Testing

/// A word the mapping language does not know is refused with every word of
/// its table, read from the table the loader accepts (issue 26): the
/// messages had their own lists, and the one for `items` left out `float`.
@Suite struct MappingKeywordMessageTests {
    /// An entity `E` with `settings` added, an attribute `id` with
    /// `attribute` added and a relationship `r` with `relationship` added.
    static func mapping(settings: String = "", attribute: String = "", relationship: String = "") -> String {
        """
        entities:
          E: {records: $, key: id, \(settings)
              attributes: {id: {type: integer\(attribute)}, t: {type: json, source: "t[*]"}},
              relationships: {r: {entity: E, source: r\(relationship)}}}
        """
    }

    static let cases: [(yaml: String, list: String)] = [
        (mapping().replacingOccurrences(of: "entities:", with: "entitys:"), MappingSetting.choices),
        (mapping(settings: "modes: upsert,"), EntitySetting.choices),
        (mapping(attribute: ", sorce: x"), AttributeSetting.choices),
        (mapping(relationship: ", many_: true"), RelationshipSetting.choices),
        (mapping(settings: "filter: {x: {like: y}},"), ConditionTest.choices),
        (mapping(settings: "missing-key: maybe,"), MissingKeyPolicy.choices),
        (mapping(settings: "mode: sometimes,"), WriteMode.choices),
        (mapping(attribute: ", invalid: ignore"), InvalidValuePolicy.choices),
        (mapping(attribute: ", epoch: hours"), EpochUnit.choices),
        (mapping().replacingOccurrences(of: "type: integer", with: "type: int"), AttributeType.choices),
        (mapping(relationship: ", rule: merge"), LinkRule.choices),
        (mapping(relationship: ", missing: ignore"), MissingTargetPolicy.choices),
        (mapping(relationship: ", keyless: sometimes"), KeylessRule.choices),
        (
            mapping().replacingOccurrences(of: "source: \"t[*]\"", with: "source: \"t[*]\", items: json"),
            MappingKeywords.list(AttributeType.itemTypes.map(\.rawValue))
        ),
    ]

    @Test(arguments: cases.indices) func unknownWordsAreRefusedWithTheirTable(index: Int) {
        let (yaml, list) = Self.cases[index]
        let error = #expect(throws: MappingError.self) { try Mapping.parse(yaml: yaml) }
        #expect(error?.description.contains(list) == true, "\(String(describing: error))")
    }

    @Test func listsReadAsASentence() {
        #expect(MappingKeywords.list(["a"]) == "a")
        #expect(MappingKeywords.list(["a", "b"]) == "a or b")
        #expect(LinkRule.choices == "union, replace or replace-and-delete")
        #expect(AttributeType.choices.hasSuffix(", binary or json"))
    }
}
