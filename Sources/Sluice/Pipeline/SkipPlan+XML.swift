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
/// On one thread the hash pass feeds it chunk by chunk; with the hash pass on
/// the parse workers, their forwarder has it read each item in input order
/// (``read(_:)``), off the thread that reads and cuts the input.
final class XMLDocumentCheck: RecordSink {
    private var parser: XMLPushParser?
    /// The first error ``read(_:)`` met; it reads nothing after it.
    private(set) var failure: ImportError?

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

    /// Reads a hash-only item of the hash pass on the workers
    /// (``SkipPlan/hashOnWorkers(_:index:workers:into:positions:units:refused:)``):
    /// the bytes between its units as they are, each unit as its marker.
    /// Items are cut at a unit's first byte, so no unit but an input's
    /// unended last one runs past its item. Keeps the first error in
    /// ``failure``, where the hash pass on one thread throws it.
    func read(_ item: ParseItem) {
        guard failure == nil, let spans = item.units?.spans else { return }
        item.bytes.withUnsafeBytes { bytes in
            do throws(ImportError) {
                var fed = 0
                for span in spans {
                    let start = span.start.offsetInChunk
                    try feed(UnsafeRawBufferPointer(rebasing: bytes[fed..<start]))
                    fed = span.end ?? bytes.count
                    try feed(
                        skipping: UnsafeRawBufferPointer(rebasing: bytes[start..<fed]), starts: true,
                        ends: span.end != nil)
                }
                try feed(UnsafeRawBufferPointer(rebasing: bytes[fed...]))
            } catch {
                failure = error
            }
        }
    }

    /// Ends the document: an incomplete one is an error.
    func finish() throws(ImportError) {
        do throws(ParseError) { try parser?.finish() } catch { throw .parse(error) }
    }

    /// The assembler's sink, which no record reaches: every unit is a marker.
    func record(_ tree: RecordTree, entities: [Int], deleting: [Int], ordinal: Int) throws {}
}
