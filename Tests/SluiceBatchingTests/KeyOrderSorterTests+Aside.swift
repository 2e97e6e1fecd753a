import Foundation
@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

@testable import SluiceBatching

/// Runs written aside (`KeyOrderSorter(aside: true)`, the sorter of a run
/// with parse workers): each run sorted and written on a thread of its own.
extension KeyOrderSorterTests {
    /// A sorter of `memoryBytes` and fan-in 3 writing its runs `aside` or
    /// itself, fed 80 groups of 25 keys out of 300 (each key recurs across
    /// many runs, with its text absent in every third row and a third
    /// column from group 40 on), logging the keys whose occurrences
    /// disagree.
    func filled(aside: Bool, directory: String = TestPaths.temporaryDirectory().path) throws -> KeyOrderSorter {
        var options = SortOptions()
        options.memoryBytes = 3_000
        options.fanIn = 3
        let sorter = KeyOrderSorter(directory: directory, options: options, aside: aside)
        sorter.mixedKeys = MixedKeyLog()
        var generator = SplitMix(seed: 23)
        for number in 1...80 {
            try sorter.add(sparseGroup((0..<25).map { _ in Int64(generator.next() % 300) }, number: number))
        }
        return sorter
    }

    /// A group of one batch of `ids` whose every third row has no text, and
    /// from group 40 on a third column.
    func sparseGroup(_ ids: [Int64], number: Int) -> BatchGroup {
        var added = group(ids, number: number, columns: number >= 40 ? 3 : 2)
        var rows = RowArena(columnCount: added.batches[0].rows.columnCount)
        let full = added.batches[0].rows
        for row in 0..<full.rowCount {
            rows.beginRow(ordinal: full.ordinals[row])
            for column in 0..<full.columnCount where column != 1 {
                rows.set(column, full[row, column])
            }
            if row % 3 != 0 {
                let text = full.withText(full[row, 1]) { Array($0) }
                rows.set(1, rows.text(text))
            }
        }
        added.batches[0].rows = rows
        return added
    }

    /// Every key's row as the store would write it (each batch's rows of a
    /// key combined, the keys that disagree logged, as the store's merge
    /// does), as text with its ordinal, in key order.
    func applied(_ sorter: KeyOrderSorter) throws -> [String] {
        let chunks = try #require(try sorter.chunks(of: "A", rows: 9))
        var rows: [String] = []
        while var batch = try chunks.next() {
            let log = try #require(sorter.mixedKeys)
            let kept = KeyOrderSorter.sortedRows(
                &batch.rows, keys: [0], onePerKey: true, combining: true,
                disagreeing: { rows, row in log.add(table: 0, rows, row: row, keys: [0]) })
            for row in kept {
                let cells = (0..<batch.rows.columnCount).map { column -> String in
                    switch batch.rows[row, column] {
                    case .text: batch.rows.withText(batch.rows[row, column]) { String(decoding: $0, as: UTF8.self) }
                    case let cell: "\(cell)"
                    }
                }
                rows.append(cells.joined(separator: "|") + "#\(batch.rows.ordinals[row])")
            }
        }
        return rows
    }

    @Test func runsWrittenAsideGiveTheRowsOfRunsWrittenInPlace() throws {
        let inPlace = try filled(aside: false)
        let aside = try filled(aside: true)
        let expected = try applied(inPlace)
        #expect(expected.count > 290)
        #expect(try applied(aside) == expected)
        // Runs as large as those written in place, or larger: a run's fresh
        // arenas hold the table's columns, a widened arena spare slots.
        #expect(aside.spilledRows <= inPlace.spilledRows)
        #expect(aside.checkpoints == inPlace.checkpoints)
        let disagreeing = try #require(inPlace.mixedKeys?.identities)
        #expect(disagreeing.count > 200)
        #expect(aside.mixedKeys?.identities == disagreeing)
    }

    /// Runs written aside are as large as runs written in place: a run is
    /// handed over at the budget, and the rows filled meanwhile wait at half
    /// of it. With half the budget each they were twice as many (about 420
    /// a table at 2,000,000 events against 210), past the fan-in of 256, and
    /// a compaction of 256 runs ran while the input was read.
    @Test func runsWrittenAsideAreAsManyAsRunsWrittenInPlace() throws {
        func runs(aside: Bool) throws -> Int {
            var options = SortOptions()
            options.memoryBytes = 3_000
            options.fanIn = 1_000
            let sorter = KeyOrderSorter(
                directory: TestPaths.temporaryDirectory().path, options: options, aside: aside)
            for number in 1...80 { try sorter.add(group((0..<25).map { Int64(number * 25 + $0) }, number: number)) }
            try sorter.awaitRunAside()
            return sorter.tables["A"]?.file?.runs.count ?? 0
        }
        let inPlace = try runs(aside: false)
        #expect(inPlace > 20)
        #expect(try runs(aside: true) == inPlace)
    }

    /// A run written aside that cannot create its file: the error of a run
    /// written in place, at the next hand-over or when the rows are merged.
    @Test func aRunWrittenAsideThatFailsThrowsTheErrorOfOneWrittenInPlace() throws {
        var options = SortOptions()
        options.memoryBytes = 2
        for groups in [1, 3] {
            let sorter = KeyOrderSorter(directory: "/nonexistent/sluice-runs", options: options, aside: true)
            #expect {
                for number in 1...groups { try sorter.add(group([1, 2, 3], number: number)) }
                _ = try sorter.chunks(of: "A", rows: 10)
            } throws: { error in
                "\(error)".contains("/nonexistent/sluice-runs/sluice-run-")
                    && "\(error)".contains("creating a sort run file: No such file or directory")
            }
        }
    }
}
