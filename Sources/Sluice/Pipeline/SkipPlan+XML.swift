import SluiceBatching
import SluiceParsers
@_spi(Machinery) import SluiceRecords

/// The hash pass of an XML file whose selected units the probe and the
/// parse read from their places (``UnitPositions+XML``): they parse only
/// those units, so the hash pass checks the rest of the document once.
extension SkipPlan {
    /// A check of the document around the units of `input`, when its units'
    /// places are kept (an XML file: ``placeable(_:)``); nil otherwise.
    func documentCheck(_ input: PlannedInput) -> XMLDocumentCheck? {
        guard compiled.documentKind == .xml, placeable(input) else { return nil }
        return XMLDocumentCheck(compiled, options, name: input.name, spill: ValueSpill(directory: directory))
    }
}

/// libxml2 reading an XML document with each of its units replaced by the
/// empty marker element (``XMLPushParser/feed(skipping:starts:ends:)``), as
/// a run that skips every unit reads it: everything between the units (text,
/// comments, end tags and the names they close, what follows the root, the
/// end of the input) is checked once, in the hash pass, so that a run that
/// then reads only its selected units at their places fails wherever a full
/// run fails: an error here makes the run parse every unit the whole way
/// (``SkipPlan/refusal``), which reports it where a full run does, so the
/// markers do not move libxml2's location past the units' bytes
/// (``XMLPushParser/feed(skipping:starts:ends:located:)``). Costs what
/// libxml2 spends on the bytes between the units and on one marker a unit.
final class XMLDocumentCheck: RecordSink {
    private var parser: XMLPushParser?

    /// A check of the input called `name`, as `compiled` reads it.
    init(_ compiled: CompiledMapping, _ options: ImportOptions, name: String, spill: ValueSpill) {
        let assembler = RecordAssembler(routes: compiled.routes, sink: self, limits: options.limits, spill: spill)
        parser = XMLPushParser(handler: assembler, name: name)
    }

    /// Reads the next bytes between units.
    func feed(_ bytes: UnsafeRawBufferPointer) throws(ImportError) {
        do throws(ParseError) { try parser?.feed(bytes) } catch { throw .parse(error) }
    }

    /// Reads bytes of a unit, as the marker in its place.
    func feed(skipping bytes: UnsafeRawBufferPointer, starts: Bool, ends: Bool) throws(ImportError) {
        do throws(ParseError) { try parser?.feed(skipping: bytes, starts: starts, ends: ends, located: false) } catch {
            throw .parse(error)
        }
    }

    /// Ends the document: an incomplete one is an error.
    func finish() throws(ImportError) {
        do throws(ParseError) { try parser?.finish() } catch { throw .parse(error) }
    }

    /// The assembler's sink, which no record reaches: every unit is a marker.
    func record(_ tree: RecordTree, entities: [Int], deleting: [Int], ordinal: Int) throws {}
}
