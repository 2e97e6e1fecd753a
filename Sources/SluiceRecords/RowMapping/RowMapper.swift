/// Turns one assembled record into one row of an entity's table.
package protocol RowMapper: AnyObject {
    /// The table rows are written for; may gain columns as records arrive
    /// (schemaless import), never lose any.
    var schema: TableSchema { get }

    /// Appends the row for `tree` to `arena`, widening the arena when the
    /// schema grew, or skips the record (filtered out, or key missing under
    /// `missing-key: skip`). O(attributes + tree nodes visited).
    ///
    /// - Throws: ``RecordError`` when a value cannot be converted or the key
    ///   is missing; the arena is left as it was.
    func appendRow(_ tree: RecordTree, root: Int32, ordinal: Int, into arena: inout RowArena) throws(RecordError)
        -> RowOutcome

    /// Whether ``schema`` is settled enough to create the table before any
    /// record is read (a schemaless table waits for its first record, which
    /// decides the key column's type).
    var tableIsReady: Bool { get }

    /// Whether Swift hooks run for the entity's records or values: a run
    /// that calls them does something even when its rows are unchanged.
    var runsHooks: Bool { get }

    /// Takes the columns of the table already in the store, so that a
    /// repeated import reads its records into the same columns and types.
    func adopt(stored: [ColumnSchema])

    /// Whether the record at `root` deletes its key (the entity's
    /// `delete-when` conditions all hold).
    func deletes(_ tree: RecordTree, root: Int32) -> Bool

    /// Appends a deletion of the key of the record at `root`: a row with
    /// its key cells only, marked ``RowArena/markDeletion()``. Filters and
    /// hooks do not apply; a missing key is an error or a skip as for
    /// other records. O(key sources).
    func appendDeletion(_ tree: RecordTree, root: Int32, ordinal: Int, into arena: inout RowArena) throws(RecordError)
        -> RowOutcome
}

extension RowMapper {
    package var tableIsReady: Bool { true }
    package func adopt(stored: [ColumnSchema]) {}
    package func deletes(_ tree: RecordTree, root: Int32) -> Bool { false }
}

/// One relationship as the batcher follows it.
package struct Relation: Sendable {
    /// The relationship's name, part of derived keys.
    package var name: String
    /// Where the nested object, key, or list is, relative to the record.
    package var source: FieldPath
    /// The target mapper's index.
    package var target: Int
    /// The link table's index for to-many relationships, `nil` for to-one.
    package var link: Int?
    /// How a scalar key is converted to the target key's type.
    var keyRule: ValueRule
    /// For a target without a key: how its rows' derived keys are made.
    package var keyless: KeylessRule?
    /// To-one: the source's column holding the target's key.
    package var referenceColumn: Int? = nil
    /// To-many over objects: where each item holds the target key.
    var itemKey: FieldPath? = nil
    /// Where each item names its target entity, and the choices: the
    /// value and how the key converts for that entity.
    var choosing: FieldPath? = nil
    var choices: [(value: [UInt8], keyRule: ValueRule)] = []
    /// The link attributes: failover sources inside each item, and the
    /// conversion.
    var linkAttributes: [(sources: [FieldPath], rule: ValueRule)] = []

    /// Whether each listed item is an object holding the target's key
    /// (and link attributes) rather than a nested object to import.
    package var readsItemKeys: Bool { itemKey != nil }

    /// An item's target key, converted for its entity, and the entity's
    /// value (when items name their entity); `.absent` when the item has no
    /// key. O(item size).
    package func itemTarget(_ tree: RecordTree, _ item: Int32, into arena: inout RowArena) -> Result<
        (key: Cell, entity: [UInt8]?), ConversionProblem
    > {
        var rule = keyRule
        var entity: [UInt8]?
        if let choosing {
            let named = tree.resolve(choosing, from: item).map { tree.scalarText($0) } ?? []
            guard let choice = choices.first(where: { $0.value.elementsEqual(named) }) else {
                let known = choices.map { String(decoding: $0.value, as: UTF8.self) }.joined(separator: ", ")
                return .failure(
                    ConversionProblem(
                        description:
                            "the item names the entity \"\(String(decoding: named, as: UTF8.self))\", which is none of \(known)"
                    ))
            }
            rule = choice.keyRule
            entity = choice.value
        }
        guard let itemKey, let node = tree.resolve(itemKey, from: item) else { return .success((.absent, entity)) }
        return ValueConversion.cell(tree, node, rule, into: &arena).map { ($0, entity) }
    }

    /// The link attributes of an item, in column order (`.absent` where the
    /// item lacks one). O(item size).
    package func itemAttributes(_ tree: RecordTree, _ item: Int32, into arena: inout RowArena) -> Result<
        [Cell], ConversionProblem
    > {
        var cells: [Cell] = []
        for attribute in linkAttributes {
            guard let node = attribute.sources.lazy.compactMap({ tree.resolve($0, from: item) }).first else {
                cells.append(.absent)
                continue
            }
            switch ValueConversion.cell(tree, node, attribute.rule, into: &arena) {
            case .success(let cell): cells.append(cell)
            case .failure(let problem): return .failure(problem)
            }
        }
        return .success(cells)
    }

    /// Converts a scalar key node to the target key's type, into `arena`.
    package func keyCell(_ tree: RecordTree, _ node: Int32, into arena: inout RowArena) -> Result<
        Cell, ConversionProblem
    > {
        ValueConversion.cell(tree, node, keyRule, into: &arena)
    }
}

/// What became of one record for one entity.
package enum RowOutcome: Sendable, Equatable {
    /// A row was appended.
    case appended
    /// The entity's filter rejected the record.
    case filtered
    /// The key was missing and the entity skips such records.
    case missingKey
}

/// Maps records through an ``EntityMapping``: the sources of each attribute
/// are tried in order and the value converted to the attribute type.
package final class EntityMapper: RowMapper {
    struct Attribute {
        var name: String
        var rule: ValueRule
        var sources: [FieldPath]
        var onInvalid: InvalidValuePolicy
        /// For gathering sources: element type, and the object's key and value paths.
        var items: AttributeType?
        var object: (key: FieldPath, value: FieldPath)?
    }

    struct Filter {
        var path: FieldPath
        var test: FilterCondition.Test
    }

    package let schema: TableSchema
    let attributes: [Attribute]
    let filters: [Filter]
    /// The `delete-when` conditions; empty when records never delete.
    let deleteWhen: [Filter]
    let missingKey: MissingKeyPolicy
    let kind: DocumentKind
    let hooks: EntityHooks
    /// The derived key column of an entity without a key reached through
    /// `keyless` relationships; the batcher fills it
    /// (``CompiledMapping/derivedKeys``).
    package let derivedKey: Int?
    /// Whether Swift hooks run for the entity's records or values: a run
    /// that calls them does something even when its rows are unchanged.
    package var runsHooks: Bool { hasRecordHooks || hasHandlers || hooks.didImport != nil }
    /// Value handlers by column, resolved once.
    private let handlers: [(@Sendable (RawValue) throws -> StoredValue?)?]
    /// Whether any attribute has a value handler, or the entity a record
    /// hook: checked once per record instead of per column.
    private let hasHandlers: Bool
    private let hasRecordHooks: Bool
    /// The one-step sources, found in one pass over each record.
    private let direct: DirectFields
    /// Each attribute's sources in order, flattened: the direct field, or -1
    /// for a path resolved step by step. Attribute `i`'s run from
    /// `sourceStarts[i]` to `sourceStarts[i + 1]`.
    private let sourceFields: [Int32]
    private let sourceStarts: [Int]
    /// For a source of several steps whose first is a direct field (a
    /// to-one reference's `actor.id`), the steps after it, resolved from
    /// that field's node: walking the root's children again for the first
    /// step cost 630 instructions a record, now 230 (callgrind, the events).
    /// Nil for the other sources; indexed like `sourceFields`.
    private let sourceRests: [FieldPath?]
    /// Whether an attribute's long values may be spilled (``ValueSpill``):
    /// not a key or a reference (sorts, lookups and links read their
    /// bytes), nor any column of an entity whose derived key or `didImport`
    /// hook reads its cells.
    private let spills: [Bool]
    /// Each column's type when its values may take the plain conversion
    /// (``ValueConversion/plainCell(_:_:_:into:)``: no date patterns, no
    /// value handler), else nil. Trivial, so reading it per cell retains
    /// nothing; going through the attribute's rule and a `Result` cost 130
    /// instructions a cell more (callgrind, the events mapping).
    private let plainTypes: [AttributeType?]

    init(
        schema: TableSchema, attributes: [Attribute], filters: [Filter], deleteWhen: [Filter] = [],
        missingKey: MissingKeyPolicy,
        kind: DocumentKind, hooks: EntityHooks, derivedKey: Int? = nil
    ) {
        self.derivedKey = derivedKey
        self.schema = schema
        self.attributes = attributes
        self.filters = filters
        self.deleteWhen = deleteWhen
        self.missingKey = missingKey
        self.kind = kind
        self.hooks = hooks
        handlers = attributes.map { hooks.valueHandlers[$0.name] }
        hasHandlers = handlers.contains { $0 != nil }
        hasRecordHooks = hooks.shouldImport != nil || hooks.willImport != nil
        var direct = DirectFields()
        var sourceFields: [Int32] = []
        var sourceStarts: [Int] = []
        var sourceRests: [FieldPath?] = []
        for attribute in attributes {
            sourceStarts.append(sourceFields.count)
            for source in attribute.sources {
                if let field = direct.index(of: source) {
                    sourceFields.append(field)
                    sourceRests.append(nil)
                } else if !source.gathers, source.steps.count > 1,
                    let field = direct.index(of: FieldPath(steps: [source.steps[0]], description: source.description))
                {
                    sourceFields.append(field)
                    sourceRests.append(
                        FieldPath(steps: Array(source.steps.dropFirst()), description: source.description))
                } else {
                    sourceFields.append(-1)
                    sourceRests.append(nil)
                }
            }
        }
        sourceStarts.append(sourceFields.count)
        self.direct = direct
        self.sourceFields = sourceFields
        self.sourceStarts = sourceStarts
        self.sourceRests = sourceRests
        plainTypes = attributes.indices.map { column in
            attributes[column].rule.patterns.isEmpty && hooks.valueHandlers[attributes[column].name] == nil
                ? attributes[column].rule.type : nil
        }
        spills = attributes.indices.map { column in
            derivedKey == nil && hooks.didImport == nil && !schema.keyColumns.contains(column)
                && !schema.references.contains { $0.column == column }
        }
    }

    package func deletes(_ tree: RecordTree, root: Int32) -> Bool {
        !deleteWhen.isEmpty && deleteWhen.allSatisfy { Self.passes(tree, root, $0) }
    }

    package func appendDeletion(_ tree: RecordTree, root: Int32, ordinal: Int, into arena: inout RowArena)
        throws(RecordError) -> RowOutcome
    {
        arena.beginRow(ordinal: ordinal)
        try withUnsafeTemporaryAllocation(of: Int32.self, capacity: direct.count) { found throws(RecordError) in
            direct.find(in: tree, root: root, into: found)
            for column in schema.keyColumns { try appendCell(column, tree, root: root, found: found, into: &arena) }
        }
        for column in schema.keyColumns {
            let key = arena[arena.rowCount - 1, column]
            guard key == .absent || key == .null else { continue }
            arena.abandonRow()
            if missingKey == .skip { return .missingKey }
            throw RecordError(
                entity: schema.name, attribute: schema.columns[column].name, message: "the deletion has no key value")
        }
        arena.markDeletion()
        return .appended
    }

    package func appendRow(_ tree: RecordTree, root: Int32, ordinal: Int, into arena: inout RowArena)
        throws(RecordError) -> RowOutcome
    {
        for filter in filters where !Self.passes(tree, root, filter) { return .filtered }
        if hasRecordHooks {
            let view = RecordView(tree: tree, kind: kind, ordinal: ordinal)
            do {
                if let shouldImport = hooks.shouldImport, try !shouldImport(view) { return .filtered }
                try hooks.willImport?(view)
            } catch {
                throw RecordError(entity: schema.name, attribute: nil, message: "a hook failed: \(error)")
            }
        }
        arena.beginRow(ordinal: ordinal)
        try withUnsafeTemporaryAllocation(of: Int32.self, capacity: direct.count) { found throws(RecordError) in
            direct.find(in: tree, root: root, into: found)
            for column in attributes.indices {
                try appendCell(column, tree, root: root, found: found, into: &arena)
            }
        }
        for column in schema.keyColumns where column != derivedKey {
            let key = arena[arena.rowCount - 1, column]
            guard key == .absent || key == .null else { continue }
            arena.abandonRow()
            if missingKey == .skip { return .missingKey }
            throw RecordError(
                entity: schema.name, attribute: schema.columns[column].name, message: "the record has no key value")
        }
        if let didImport = hooks.didImport {
            do {
                try didImport(RowView(schema: schema, arena: arena, row: arena.rowCount - 1, ordinal: ordinal))
            } catch {
                arena.abandonRow()
                throw RecordError(entity: schema.name, attribute: nil, message: "a hook failed: \(error)")
            }
        }
        return .appended
    }

    /// Sets `column` of the row being built from the first of its sources
    /// the record has (`found` holds the direct fields' nodes); leaves it
    /// absent when none is there.
    private func appendCell(
        _ column: Int, _ tree: RecordTree, root: Int32, found: UnsafeMutableBufferPointer<Int32>,
        into arena: inout RowArena
    ) throws(RecordError) {
        var node: Int32?
        var gathered: [Int32]?
        let first = sourceStarts[column]
        for position in first..<sourceStarts[column + 1] {
            let field = sourceFields[position]
            if field >= 0 {
                guard found[Int(field)] >= 0 else { continue }
                if let rest = sourceRests[position] {
                    node = tree.resolve(rest, from: found[Int(field)])
                    if node == nil { continue }
                } else {
                    node = found[Int(field)]
                }
                break
            }
            let source = attributes[column].sources[position - first]
            if source.gathers {
                gathered = tree.resolveAll(source, from: root)
            } else {
                node = tree.resolve(source, from: root)
            }
            if node != nil || gathered != nil { break }
        }
        if let gathered {
            let attribute = attributes[column]
            let json = Gathering.json(tree, gathered, items: attribute.items, object: attribute.object)
            try set(column, attribute, json.map { arena.text($0) }, &arena)
            return
        }
        guard let node else { return }
        if let type = plainTypes[column], tree.nodes[Int(node)].valueLength <= ValueSpill.threshold,
            let cell = ValueConversion.plainCell(tree, node, type, into: &arena)
        {
            arena.set(column, cell)
            return
        }
        if hasHandlers, let handler = handlers[column] {
            let attribute = attributes[column]
            do {
                if let value = try handler(RawValue(tree, node)) {
                    arena.set(column, Self.cell(value, &arena))
                    return
                }
            } catch {
                arena.abandonRow()
                throw RecordError(
                    entity: schema.name, attribute: attribute.name, message: "the value handler failed: \(error)")
            }
        }
        let spill = spills[column] ? tree.spill : nil
        switch ValueConversion.cell(tree, node, attributes[column].rule, spill: spill, into: &arena) {
        case .success(let cell): arena.set(column, cell)
        case let failure: try set(column, attributes[column], failure, &arena)
        }
    }

    /// Stores a converted value, or applies the attribute's invalid-value
    /// policy: NULL, or an error that drops the row being built.
    private func set(
        _ column: Int, _ attribute: Attribute, _ result: Result<Cell, ConversionProblem>, _ arena: inout RowArena
    ) throws(RecordError) {
        switch result {
        case .success(let cell):
            arena.set(column, cell)
        case .failure where attribute.onInvalid == .null:
            arena.set(column, .null)
        case .failure(let problem):
            arena.abandonRow()
            throw RecordError(entity: schema.name, attribute: attribute.name, message: problem.description)
        }
    }

    private static func cell(_ value: StoredValue, _ arena: inout RowArena) -> Cell {
        switch value {
        case .null: return .null
        case .integer(let number): return .integer(number)
        case .real(let number): return .real(number)
        case .text(let text): return arena.text(Array(text.utf8))
        case .blob(let bytes): return arena.blob(bytes)
        }
    }

    /// Whether the record's field at the filter's path passes its test,
    /// compared as source text.
    static func passes(_ tree: RecordTree, _ root: Int32, _ filter: Filter) -> Bool {
        let node = tree.resolve(filter.path, from: root)
        switch filter.test {
        case .exists(let wanted):
            return (node != nil) == wanted
        case .oneOf(let values):
            guard let node, tree.nodes[Int(node)].kind != .null else { return false }
            let text = tree.scalarText(node)
            return values.contains { $0.utf8.elementsEqual(text) }
        case .noneOf(let values):
            guard let node, tree.nodes[Int(node)].kind != .null else { return true }
            let text = tree.scalarText(node)
            return !values.contains { $0.utf8.elementsEqual(text) }
        }
    }
}
