/// Runs on a base: the collector continues the chain of the run whose history state it is given, and every run
/// keeps its own state for the next.
extension HistoryCollector {
    /// Continues the chain of `base`: this run's inputs are numbered after the base's (so that on equal creation
    /// dates this run's records are newer), the data horizon starts at the base's, and `finish` merges the base's
    /// records with this run's. Call it before the first `add`; `inputs` must start with the base's inputs.
    public func continueChain(_ base: HistoryStateFile) {
        self.base = base
        inputOffset = base.header.inputs.count
        if let h = base.header.horizon { horizon = max(horizon ?? h, h) }
    }

    /// The header of the state this run writes.
    var stateHeader: HistoryStateHeader {
        HistoryStateHeader(run: (base?.header.run ?? 0) + 1, horizon: horizon, inputs: inputs)
    }

    /// Streams the base's records into the stores: its renewal infos into the renewals, its purchases (each key
    /// once, already merged) to the purchases' spill, where `reduce` merges them by key with this run's, in the
    /// same bounded memory as any spilled run.
    func absorbBase() throws(HistoryError) {
        guard let base else { return }
        let renewals = self.renewals
        let purchases = self.purchases
        try base.stream(
            renewal: { r throws(HistoryError) in try renewals.add(r) },
            purchases: { chunk throws(HistoryError) in try purchases.spill(chunk) })
    }
}
