/// The parse of an input whose selected units a run that skips reads from
/// their places (``UnitPositions``) rather than reading the whole input
/// again: each unit is fed as the recorder feeds a unit it found, at its own
/// offset, line and record number.
extension ParseSide {
    /// Parses a piece of selected unit `ordinal`, at `place` (its `first`
    /// and `last` pieces say so), after `context` (XML:
    /// ``UnitPositions/context(of:)``).
    func feedPlaced(
        _ ordinal: Int, _ place: UnitPositions.Place, _ piece: UnsafeRawBufferPointer, first: Bool, last: Bool,
        context: [UInt8]
    ) throws(ImportError) {
        guard let input, let recorder else { return }
        if exchange.cancelled.isSet { throw .cancelled }
        if first { inputBytes = place.start }
        try recorder.feedPlaced(ordinal, place, piece, first: first, last: last, context: context) {
            piece throws(ImportError) in
            do throws(ParseError) { try input.parser.feed(piece) } catch { throw translate(error) }
        } reposition: { ordinal, place throws(ImportError) in
            do throws(ParseError) {
                try input.parser.place(place, after: context)
            } catch {
                throw translate(error)
            }
            input.assembler.numberNext(ordinal)
        }
        inputBytes += Int64(piece.count)
        rawCurrent = inputBytes
    }

    /// Ends the reading of the current input's selected units: it had
    /// `units` units and `size` bytes, all of which the run has read.
    func endPlaced(units: Int, size: Int64) {
        recorder?.endPlaced(units: units)
        inputBytes = size
        rawCurrent = size
    }
}
