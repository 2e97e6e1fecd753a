import SluiceParsers

/// Receives each complete record.
package protocol RecordSink: AnyObject {
    /// `tree` holds the record (valid during the call only); `entities` are
    /// the mapper indices its path routes to, `deleting` those of them for
    /// which records at this path delete their key; `ordinal` is its
    /// 1-based number in the input.
    func record(_ tree: RecordTree, entities: [Int], deleting: [Int], ordinal: Int) throws
}

/// Follows parser events, recognises the records the mapping's paths point
/// at, and assembles each into a ``RecordTree`` for the sink. Everything
/// outside records is skipped without being stored: memory holds one record.
/// Hot stored properties skip the dynamic exclusivity check (ARCHITECTURE.md,
/// "Hot path").
package final class RecordAssembler: XMLEventHandler, JSONStringPieceHandler {
    private let routes: [CompiledMapping.Route]
    /// Not retained: the sink usually owns the assembler (the import's parse
    /// side is the sink of the assembler it reads with).
    private unowned let sink: RecordSink
    private let limits: RecordLimits
    @exclusivity(unchecked) private var tree = RecordTree()

    /// Number of records started so far in this input.
    @exclusivity(unchecked) package private(set) var recordCount = 0
    /// Records up to this ordinal are parsed and checked but not handed to
    /// the sink: they were committed by an interrupted run being resumed.
    package var skipThrough = 0

    /// Numbers the next record `ordinal`: a parse fed only some of an
    /// input's records (those whose digests are new) keeps the numbers of the
    /// whole input. Between records only.
    package func numberNext(_ ordinal: Int) { recordCount = ordinal - 1 }
    /// Whether a record is being assembled.
    package var isInRecord: Bool { recordRoute >= 0 }

    /// Bit i set: route i's path matches the path so far. One entry per open
    /// element or container outside records.
    @exclusivity(unchecked) private var masks: [UInt64] = []
    /// For JSON containers outside records: whether it is an array, and the
    /// mask its next member's value matches.
    @exclusivity(unchecked) private var jsonFrames: [(isArray: Bool, childMask: UInt64)] = []
    /// Whether the record being assembled is a string that arrives in
    /// pieces (``stringStart(_:)``): it ends with the string.
    private var stringRecord = false
    /// The route of the record being assembled, or -1.
    @exclusivity(unchecked) private var recordRoute = -1
    /// Depth of nesting inside the current record.
    @exclusivity(unchecked) private var recordDepth = 0
    private let allRoutes: UInt64

    /// An assembler for `routes` that hands records to `sink`, which the
    /// caller keeps alive as long as the assembler; its records carry
    /// `spill` for the mappers' long values.
    package init(
        routes: [CompiledMapping.Route], sink: RecordSink, limits: RecordLimits = RecordLimits(),
        spill: ValueSpill? = nil
    ) {
        self.routes = routes
        self.sink = sink
        self.limits = limits
        tree.spill = spill
        allRoutes = routes.count >= 64 ? UInt64.max : (UInt64(1) << UInt64(routes.count)) - 1
    }

    // MARK: - XML

    package func startElement(name: ByteSpan, attributes: UnsafeBufferPointer<XMLAttribute>) throws {
        if isInRecord {
            recordDepth += 1
            try checkDepth(masks.count + recordDepth)
            tree.open(.element, name: name)
            for attribute in attributes { tree.open(.attribute, name: attribute.name, value: attribute.value) }
            try checkSize()
            return
        }
        let depth = masks.count
        try checkDepth(depth + 1)
        let parent = depth == 0 ? allRoutes : masks[depth - 1]
        var mask: UInt64 = 0
        var complete = -1
        if parent != 0 {
            for index in 0..<routes.count where parent & (1 << UInt64(index)) != 0 {
                let components = routes[index].path.components
                guard components.count > depth else { continue }
                let matches: Bool
                switch components[depth] {
                case .anyName: matches = true
                case .name(let wanted): matches = wanted.elementsEqual(name)
                case .anyIndex: matches = false
                }
                guard matches else { continue }
                mask |= 1 << UInt64(index)
                if components.count == depth + 1 && complete < 0 { complete = index }
            }
        }
        masks.append(mask)
        if complete >= 0 {
            beginRecord(route: complete)
            tree.open(.element, name: name)
            for attribute in attributes { tree.open(.attribute, name: attribute.name, value: attribute.value) }
            try checkSize()
        }
    }

    /// A record whose digest the store kept, not parsed: it takes its number.
    package func elementSkipped() throws { recordCount += 1 }

    /// A JSON record whose digest the store kept, not parsed: it takes its number.
    package func valueSkipped() throws { recordCount += 1 }

    package func endElement() throws {
        if isInRecord && recordDepth > 0 {
            recordDepth -= 1
            tree.close()
            return
        }
        if isInRecord {
            tree.close()
            try endRecord()
        }
        masks.removeLast()
    }

    package func characters(_ text: ByteSpan) throws {
        guard isInRecord else { return }
        tree.appendText(text)
        try checkSize()
    }

    // MARK: - JSON

    package func startObject() throws { try startContainer(isArray: false) }

    package func startArray() throws { try startContainer(isArray: true) }

    package func key(_ name: ByteSpan) throws {
        if isInRecord {
            tree.setName(name)
            return
        }
        let depth = jsonFrames.count
        let own = masks[depth - 1]
        var mask: UInt64 = 0
        if own != 0 {
            for index in 0..<routes.count where own & (1 << UInt64(index)) != 0 {
                let components = routes[index].path.components
                if components.count >= depth, case .name(let wanted) = components[depth - 1], wanted.elementsEqual(name)
                {
                    mask |= 1 << UInt64(index)
                }
            }
        }
        jsonFrames[depth - 1].childMask = mask
    }

    package func endObject() throws { try endContainer() }

    package func endArray() throws { try endContainer() }

    package func scalar(_ kind: JSONScalarKind, _ text: ByteSpan) throws {
        let nodeKind: RecordTree.Kind
        switch kind {
        case .string: nodeKind = .string
        case .number: nodeKind = .number
        case .true: nodeKind = .true
        case .false: nodeKind = .false
        case .null: nodeKind = .null
        }
        if isInRecord {
            tree.open(nodeKind, value: text)
            try checkSize()
            return
        }
        if let route = completeRoute(valueMask()) {
            beginRecord(route: route)
            tree.open(nodeKind, value: text)
            try endRecord()
        }
    }

    package func stringStart(_ text: ByteSpan) throws {
        if isInRecord {
            tree.open(.string, value: text)
            try checkSize()
            return
        }
        if let route = completeRoute(valueMask()) {
            beginRecord(route: route)
            tree.open(.string, value: text)
            stringRecord = true
        }
    }

    package func stringPiece(_ text: ByteSpan) throws {
        guard isInRecord else { return }
        tree.appendToLastValue(text)
        try checkSize()
    }

    package func stringEnd() throws {
        guard stringRecord else { return }
        stringRecord = false
        try endRecord()
    }

    private func startContainer(isArray: Bool) throws {
        if isInRecord {
            recordDepth += 1
            try checkDepth(jsonFrames.count + recordDepth)
            tree.open(isArray ? .array : .object)
            return
        }
        let mask = valueMask()
        if let route = completeRoute(mask) {
            beginRecord(route: route)
            tree.open(isArray ? .array : .object)
            return
        }
        let depth = jsonFrames.count
        try checkDepth(depth + 1)
        // Routes that go on below this container.
        var own: UInt64 = 0
        var childMask: UInt64 = 0
        for index in 0..<routes.count where mask & (1 << UInt64(index)) != 0 {
            let components = routes[index].path.components
            guard components.count > depth else { continue }
            own |= 1 << UInt64(index)
            if isArray, components[depth] == .anyIndex { childMask |= 1 << UInt64(index) }
        }
        masks.append(own)
        jsonFrames.append((isArray, childMask))
    }

    private func endContainer() throws {
        if isInRecord {
            tree.close()
            if recordDepth == 0 {
                try endRecord()
            } else {
                recordDepth -= 1
            }
            return
        }
        masks.removeLast()
        jsonFrames.removeLast()
    }

    /// The routes whose path leads to the value starting now.
    private func valueMask() -> UInt64 {
        jsonFrames.last?.childMask ?? allRoutes
    }

    /// The first route in `mask` whose path ends at the current depth.
    private func completeRoute(_ mask: UInt64) -> Int? {
        guard mask != 0 else { return nil }
        let depth = jsonFrames.count
        for index in 0..<routes.count where mask & (1 << UInt64(index)) != 0 {
            if routes[index].path.components.count == depth { return index }
        }
        return nil
    }

    // MARK: - Records

    private func beginRecord(route: Int) {
        recordCount += 1
        recordRoute = route
        recordDepth = 0
        tree.reset()
    }

    private func endRecord() throws {
        let route = recordRoute
        recordRoute = -1
        guard recordCount > skipThrough else { return }
        try sink.record(tree, entities: routes[route].entities, deleting: routes[route].deleting, ordinal: recordCount)
        if !tree.spilledStarts.isEmpty, let spill = tree.spill, let failure = spill.readFailure {
            throw ValueSpillError(path: spill.path, message: failure)
        }
    }

    private func checkDepth(_ depth: Int) throws {
        if depth > limits.maxDepth {
            throw LimitError(limit: "max-depth", value: limits.maxDepth, what: "nesting depth \(depth)")
        }
    }

    private func checkSize() throws {
        if tree.byteSize > limits.maxRecordBytes {
            throw LimitError(limit: "max-record-bytes", value: limits.maxRecordBytes, what: "record \(recordCount)")
        }
        if tree.nodes.count > limits.maxFields {
            throw LimitError(
                limit: "max-fields", value: limits.maxFields, what: "the number of fields of record \(recordCount)")
        }
        if tree.lastValueLength > limits.maxFieldBytes {
            throw LimitError(
                limit: "max-field-bytes", value: limits.maxFieldBytes, what: "a value of record \(recordCount)")
        }
    }
}
