import SluiceParsers
@_spi(Machinery) import SluiceRecords

extension ParseItem {
    /// One unit of an item (a top-level JSON value, an XML record element):
    /// where it starts, with `offsetInChunk` its offset in the item's bytes
    /// (XML: of its first byte, which an earlier chunk may have carried),
    /// the offset just past its last byte (`nil`: it runs to the item's
    /// end, unended), and its context's ``UnitContext/open``, hashed before
    /// it (XML; the scanner's bytes, shared, not copied).
    struct UnitSpan: Sendable {
        var start: UnitBoundary
        var end: Int? = nil
        var open: [UInt8] = []
    }

    /// The units of an item of a run that keeps record digests, as the
    /// parse side's scanner cut them (``ParseSide/feedUnits(_:raw:)``).
    struct Units: Sendable {
        /// The units, in input order.
        var spans: [UnitSpan] = []
        /// Whether the item holds only the units a skipping run selected
        /// (their bytes end to end, each parsed at its own place), not every
        /// byte of its stretch of the input.
        var selective: Bool
        /// On the input's last item: its units and its bytes (the input's
        /// final checkpoint), and whether the input's end ends its last unit
        /// (a top-level number, which the parser ends only when it finishes).
        var inputUnits = 0
        var inputBytes: Int64?
        var endEndsUnit = false
        /// Whether the units are only hashed, not parsed: the hash pass of
        /// a run that skips (``SkipPlan/hashOnWorkers(_:index:workers:into:positions:units:refused:)``).
        var hashOnly = false
    }
}

/// A worker's part in a run that keeps record digests: it hashes each unit
/// of an item and gathers its records' keys (``PendingUnit``) as a single
/// parse thread does (``UnitRecorder``), and hands them on with the item.
extension ParseWorker {
    /// Parses the units of `item` with `parser`, numbering records with
    /// `assembler`: each unit is hashed and fed, then ended into ``units``.
    /// A selective item's units are each placed at their own offset, line
    /// and record number first. O(the item's bytes).
    func parse(
        _ itemUnits: ParseItem.Units, of item: ParseItem, parser: DocumentParser, assembler: RecordAssembler
    ) throws(ParseError) {
        let fed = item.bytes.withUnsafeBytes { bytes in
            Result { () throws(ParseError) in
                try feed(itemUnits, bytes, parser: parser, assembler: assembler)
            }
        }
        let open = try fed.get()
        guard item.last else { return try Self.parseThrough(item, with: parser, numbering: assembler) }
        if !itemUnits.selective || !itemUnits.spans.isEmpty { try parser.finish() }
        if open && itemUnits.endEndsUnit, let digest = unit?.end(), let unit { units.append(digest, of: unit) }
        // A selective parse numbers the input's records as a whole parse does.
        if itemUnits.selective { assembler.numberNext(itemUnits.inputUnits + 1) }
    }

    /// Feeds the units of `bytes`; returns whether the last one is left
    /// open (it runs to the item's end).
    private func feed(
        _ itemUnits: ParseItem.Units, _ bytes: UnsafeRawBufferPointer, parser: DocumentParser,
        assembler: RecordAssembler
    ) throws(ParseError) -> Bool {
        var parsed = 0
        var open = false
        for span in itemUnits.spans {
            let from = span.start.offsetInChunk
            if itemUnits.selective {
                // A top-level value needs no context.
                try parser.skip(to: span.start)
                assembler.numberNext(span.start.ordinal)
                parsed = from
            }
            unit?.begin(span.open.isEmpty ? nil : UnitContext(open: span.open))
            let to = span.end ?? bytes.count
            unit?.add(UnsafeRawBufferPointer(rebasing: bytes[from..<to]))
            try parser.feed(UnsafeRawBufferPointer(rebasing: bytes[parsed..<to]))
            parsed = to
            open = span.end == nil
            if !open, let digest = unit?.end(), let unit { units.append(digest, of: unit) }
        }
        if !itemUnits.selective { try parser.feed(UnsafeRawBufferPointer(rebasing: bytes[parsed...])) }
        return open
    }
}

/// A worker's part in the hash pass of a run that skips
/// (``SkipPlan/hashOnWorkers(_:index:workers:into:positions:units:refused:)``).
extension ParseWorker {
    /// The digests of the units of a hash-only `item` (``ParseItem/Units/hashOnly``)
    /// under the run's secret, each with its input and ordinal
    /// (``SkipPlan/payload(input:ordinal:)``), in input order; a unit the
    /// scanner did not end is not one. O(the item's bytes): SHA-256, no
    /// parse.
    func hash(_ itemUnits: ParseItem.Units, of item: ParseItem) -> [DigestEntry] {
        var entries: [DigestEntry] = []
        entries.reserveCapacity(itemUnits.spans.count)
        item.bytes.withUnsafeBytes { bytes in
            for span in itemUnits.spans {
                guard let end = span.end else { continue }
                unit?.begin(span.open.isEmpty ? nil : UnitContext(open: span.open))
                unit?.add(UnsafeRawBufferPointer(rebasing: bytes[span.start.offsetInChunk..<end]))
                guard let digest = unit?.end() else { continue }
                entries.append(
                    DigestEntry(
                        digest: digest, payload: SkipPlan.payload(input: item.input, ordinal: span.start.ordinal)))
            }
        }
        return entries
    }
}
