/// Keeps the ledger bounded over years of runs (``StoreOptions/ledgerRuns``).
extension PostgresStore {
    /// Forgets the runs older than the newest ``StoreOptions/ledgerRuns``
    /// and the checkpoints of inputs that no run left in the ledger names;
    /// runs of importers still running are among the newest, so their
    /// checkpoints stay.
    func forgetOldRuns() throws(StoreError) {
        try connection.execute(
            "DELETE FROM _sluice_runs WHERE id <= (SELECT max(id) FROM _sluice_runs) - \(max(options.ledgerRuns, 1)); "
                + "DELETE FROM _sluice_checkpoints c WHERE NOT EXISTS (SELECT 1 FROM _sluice_runs r "
                + "WHERE strpos(E'\\n' || r.inputs || E'\\n', E'\\n' || c.input || E'\\n') > 0)",
            "forgetting old runs")
    }
}
