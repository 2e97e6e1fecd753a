@_spi(Machinery) import SluiceRecords

/// An input that the parse side cuts into items for ``ParseWorkers``
/// instead of parsing it: the record-boundary scanner finds where each
/// top-level value starts, and the bytes since the last item's start are
/// handed over as the next item once they reach ``ParseWorkers/itemBytes``.
/// In a run that keeps record digests the items carry their units too
/// (``ParseItem/Units``), and a skipping run's items hold only the bytes of
/// the units it selected.
final class InputSplit {
    /// The input's place among the run's, name, format and compression, and
    /// the records a resume skips in it.
    let index: Int
    let name: String
    let format: InputFormat
    let compressed: Bool
    let skipThrough: Int
    var scanner: RecordBoundaryScanner
    /// The bytes of the next item so far, and where its first value starts
    /// (`nil`: the input's start).
    var pending: [UInt8] = []
    var start: UnitBoundary?
    /// XML: what places a parser at `start` (``ParseItem/XMLStart``), and
    /// whether the document's declared encoding lets items be cut
    /// (``xmlStart(at:_:in:)``; `nil` until it is known).
    var startXML: ParseItem.XMLStart?
    var encodingCuttable: Bool?
    /// One JSON document: what places a parser at `start`
    /// (``ParseItem/documentContext``, empty at the input's start); `nil`
    /// for JSON Lines and XML.
    var documentContext: [UInt8]?
    /// Top-level values started so far (each one record), and whether the
    /// bytes so far end inside one.
    var units = 0
    var inUnit = false
    /// In a run that keeps record digests: the units of the next item, and
    /// whether the unit being read goes into it (a skipping run's selected
    /// units only).
    var unitSpans: ParseItem.Units?
    var inSelected = false

    init(
        index: Int, name: String, format: InputFormat, compressed: Bool, skipThrough: Int,
        scanner: RecordBoundaryScanner
    ) {
        self.index = index
        self.name = name
        self.format = format
        self.compressed = compressed
        self.skipThrough = skipThrough
        self.scanner = scanner
    }
}

/// The parse side of a run that parses on several cores: it cuts each
/// input it can into items for the workers, keeps the input's identity and
/// counts, and reports what a single parse thread would report.
extension ParseSide {
    /// Starts input `name` as items for the workers when the run has them
    /// and the input can be cut (the scanner accepts its record paths; not
    /// standard input a resume must verify; its units records,
    /// ``unitsAreRecords(_:)``; not XML or one JSON document in a run that
    /// skips, which feeds the parser the whole document); `false` when it is
    /// parsed here.
    func beginSplit(name: String, format: InputFormat, compressed: Bool) throws(ImportError) -> Bool {
        let multiple = multipleValues(format)
        guard workers != nil, fileIdentity(name) != nil || resumedStreams[name] == nil, unitsAreRecords(format),
            (format != .xml && multiple) || recorder?.selection == nil,
            let scanner = try? RecordBoundaryScanner(
                paths: compiled.routes.map(\.path), kind: compiled.documentKind, multipleValues: multiple, name: name)
        else { return false }
        split = InputSplit(
            index: inputsBegun, name: name, format: format, compressed: compressed,
            skipThrough: resumePoints[name] ?? 0, scanner: scanner)
        if format != .xml && !multiple { split?.documentContext = [] }
        if let recorder { split?.unitSpans = ParseItem.Units(selective: recorder.selection != nil) }
        inputsBegun += 1
        inputBytes = 0
        rawCurrent = 0
        streamChecksum = 0
        streamIdentity = nil
        streamToVerify = nil
        return true
    }

    /// Scans the next bytes of the current input and hands each full item
    /// to the workers (waiting while the next worker's queue is full).
    /// O(bytes): the scan and one copy.
    func feedWorkers(_ bytes: UnsafeRawBufferPointer, raw: Int64) throws(ImportError) {
        if try parsesRefusedHere(bytes) { return try feed(bytes, raw: raw) }
        if split?.unitSpans != nil { return try feedUnits(bytes, raw: raw) }
        guard let split, let itemBytes = workers?.itemBytes else { return }
        if exchange.cancelled.isSet { throw .cancelled }
        rawCurrent = raw
        if fileIdentity(split.name) == nil { try followStream(bytes) }
        var from = 0
        try split.scanner.scan(bytes) { boundary, context throws(ImportError) in
            guard boundary.kind == .start else {
                split.inUnit = false
                return
            }
            split.units = boundary.ordinal
            split.inUnit = true
            let at = boundary.offsetInChunk
            guard split.pending.count + at - from >= itemBytes else { return }
            let xml = split.xmlStart(at: boundary, context, in: bytes)
            let document = split.documentStart(at: boundary, context, in: bytes)
            guard split.format != .xml || xml != nil, split.documentContext == nil || document != nil else { return }
            split.pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[from..<at]))
            from = at
            try dispatch(last: false, next: boundary, xml: xml, document: document)
        }
        split.pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[from...]))
        inputBytes += Int64(bytes.count)
    }

    /// Ends the current input: its last item goes to the workers, whose
    /// parser must find the input complete; returns once its groups are
    /// queued for the store.
    func endSplit() throws(ImportError) {
        guard let split, let workers else { return }
        // A run that keeps digests ends the scan as its recorder would: the
        // end may end the last unit, and the scanner's error comes after the parser's.
        var scanFailure: ParseError?
        if split.unitSpans != nil {
            do throws(ParseError) {
                if try split.scanner.finish() != nil && split.inSelected { split.unitSpans?.endEndsUnit = true }
            } catch {
                scanFailure = error
            }
            split.unitSpans?.inputUnits = split.units
            split.unitSpans?.inputBytes = inputBytes
        }
        try dispatch(last: true, next: nil)
        try workers.endInput()
        if let scanFailure { throw .parse(scanFailure) }
        if split.units == 0 && resumePoints[split.name] == nil {
            let paths = compiled.routes.map { "\($0.path)" }
            inputWarnings.append(
                "\(split.name): no record matched the mapping (record paths: \(paths.joined(separator: ", ")))")
        }
        recordsBefore += split.units
        rawBefore += rawCurrent
        rawCurrent = 0
        self.split = nil
    }

    /// An error reading the current input: once the workers have parsed
    /// every byte before it (a parse error there comes first, as it would
    /// on one thread), the error with the record being read.
    func damagedSplit(_ error: InputError) -> ImportError {
        guard let split else { return .input(error) }
        do throws(ImportError) { try handOverSplit() } catch { return error }
        let record = split.inUnit ? max(split.units, 1) : split.units + 1
        return .damagedInput(error, decompressedBytes: inputBytes, record: record)
    }

    /// Before a run ends on a failure of its input's source: the bytes read
    /// so far go to the workers as an item, and their groups onto the store
    /// side's queue, so that the run commits what it parsed, as one thread
    /// does. Nothing when the input is not cut into items.
    func handOverSplit() throws(ImportError) {
        guard split != nil, let workers else { return }
        try dispatch(last: false, next: nil)
        try workers.endInput()
    }

    /// Hands the pending bytes to the workers as an item (the input's
    /// `last`), the next one starting at `next`.
    private func dispatch(
        last: Bool, next: UnitBoundary?, xml: ParseItem.XMLStart? = nil, document: [UInt8]? = nil
    ) throws(ImportError) {
        guard let split, let workers else { return }
        let item = ParseItem(
            input: split.index, name: split.name, format: split.format, compressed: split.compressed,
            skipThrough: split.skipThrough, bytes: split.pending, start: split.start, xml: split.startXML,
            documentContext: split.documentContext, endsAtUnit: next != nil, last: last,
            bytesBefore: split.start?.byteOffset ?? 0, identity: fileIdentity(split.name) ?? streamIdentity,
            rawBytes: rawBefore + rawCurrent, recordsBefore: recordsBefore, units: split.unitSpans)
        split.pending = []
        split.pending.reserveCapacity(workers.itemBytes + ParseWorkers.itemSlack)
        split.unitSpans?.spans = []
        split.start = next
        split.startXML = xml
        if split.documentContext != nil { split.documentContext = document }
        try workers.dispatch(item)
    }

    /// A run that keeps record digests: scans the next bytes of the current
    /// input, adding each unit to the next item (a skipping run: the bytes
    /// of its selected units only, end to end), and hands each full item to
    /// the workers at the start of a unit it takes. O(bytes): the scan, one
    /// copy, a bit test per unit.
    private func feedUnits(_ bytes: UnsafeRawBufferPointer, raw: Int64) throws(ImportError) {
        guard let split, let itemBytes = workers?.itemBytes else { return }
        if exchange.cancelled.isSet { throw .cancelled }
        rawCurrent = raw
        if fileIdentity(split.name) == nil { try followStream(bytes) }
        let selection = recorder?.selection
        // The chunk's bytes from here on are not yet in the pending item.
        var from = 0
        try split.scanner.scan(bytes) { boundary, context throws(ImportError) in
            let at = boundary.offsetInChunk
            guard boundary.kind == .start else {
                split.inUnit = false
                guard split.inSelected, let last = split.unitSpans?.spans.indices.last else { return }
                split.inSelected = false
                split.unitSpans?.spans[last].end = split.pending.count + at - from
                guard selection != nil else { return }
                split.pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[from..<at]))
                from = at
                return
            }
            split.units = boundary.ordinal
            split.inUnit = true
            split.inSelected = selection?.contains(input: split.index, ordinal: boundary.ordinal) ?? true
            guard split.inSelected else { return }
            if selection != nil {
                from = at
                if split.pending.count >= itemBytes { try dispatch(last: false, next: boundary) }
            } else if split.pending.count + at - from >= itemBytes,
                case let xml = split.xmlStart(at: boundary, context, in: bytes), split.format != .xml || xml != nil,
                case let document = split.documentStart(at: boundary, context, in: bytes),
                split.documentContext == nil || document != nil
            {
                split.pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[from..<at]))
                from = at
                try dispatch(last: false, next: boundary, xml: xml, document: document)
            }
            // An XML start tag's first bytes that an earlier chunk carried are the pending ones.
            var start = boundary
            start.offsetInChunk = split.pending.count + at - from - context.carried.count
            split.unitSpans?.spans.append(ParseItem.UnitSpan(start: start, open: context.open))
        }
        if selection == nil || split.inSelected {
            split.pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[from...]))
        }
        inputBytes += Int64(bytes.count)
    }

    /// Records of each entity skipped (filtered out, or missing their key),
    /// on this thread and the workers together; once the parse ended.
    var skippedRows: [Int] { summed(\.skipped) }
    /// Rows each entity received as records of their own, and as objects
    /// nested in other records, on this thread and the workers together.
    var recordRows: [Int] { summed(\.recordRows) }
    var nestedRows: [Int] { summed(\.nestedRows) }

    private func summed(_ count: KeyPath<Batcher, [Int]>) -> [Int] {
        var total = batcher[keyPath: count]
        for worker in workers?.workers ?? [] {
            for (entity, rows) in worker.batcher[keyPath: count].enumerated() { total[entity] += rows }
        }
        return total
    }
}
