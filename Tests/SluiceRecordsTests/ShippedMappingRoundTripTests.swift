import SluiceRecords
import SluiceTestSupport
import Testing

/// Every mapping the repository ships, written by `Mapping.yaml` and read
/// back, is the same mapping (issue 26): the mapping files, the documented
/// mappings and the mappings in the tests' and benchmarks' sources.
@Suite struct ShippedMappingRoundTripTests {
    @Test(arguments: ShippedMappings.files())
    func mappingFileRoundTrips(file: ShippedMappings.Text) throws {
        let mapping = try Mapping.parse(yaml: file.yaml, file: file.place)
        #expect(MappingRoundTrip.problem(mapping) == nil, "\(file.place)")
    }

    @Test func everyMappingFileIsTested() {
        let places = Set(ShippedMappings.files().map(\.place))
        for example in ["gharchive", "jenkins", "mediawiki", "osm", "osmchange", "overpass", "stackexchange"] {
            #expect(places.contains("Examples/\(example)/mapping.yml"), "\(example)")
        }
        for benchmark in ["events", "events-array", "events-changes", "events-scalars", "events-xml"] {
            #expect(places.contains("Benchmarks/\(benchmark).yml"), "\(benchmark)")
        }
    }

    @Test func documentedMappingsRoundTrip() {
        let loaded = Self.loadable(ShippedMappings.markdownBlocks())
        for (place, mapping) in loaded { #expect(MappingRoundTrip.problem(mapping) == nil, "\(place)") }
        // docs/mapping.md's first example (also the DocC reference); the others are parts of mappings.
        #expect(loaded.count >= 2, "\(loaded.map(\.place))")
    }

    @Test func mappingsInTheSourcesRoundTrip() {
        let literals = ShippedMappings.swiftLiterals()
        let loaded = Self.loadable(literals)
        for (place, mapping) in loaded { #expect(MappingRoundTrip.problem(mapping) == nil, "\(place)") }
        // Some literals are wrong on purpose (the tests of mapping errors); most load.
        #expect(literals.count >= 120 && loaded.count >= 100, "\(literals.count) literals, \(loaded.count) loaded")
    }

    /// The texts of `texts` that load, with their places.
    static func loadable(_ texts: [ShippedMappings.Text]) -> [(place: String, mapping: Mapping)] {
        texts.compactMap { text in (try? Mapping.parse(yaml: text.yaml, file: text.place)).map { (text.place, $0) } }
    }
}
