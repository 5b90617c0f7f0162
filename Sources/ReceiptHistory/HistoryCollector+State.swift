/// Runs on a base: the collector continues the chain of the run whose history state it is given, and every run
/// keeps its own state for the next.
extension HistoryCollector {
    /// Continues the chain of `base`: this run's inputs are numbered after the base's (so that on equal creation
    /// dates this run's records are newer), the data horizon starts at the base's, and `finish` merges the base's
    /// records with this run's. Call it before the first `add`; `inputs` must start with the base's inputs.
    public func continueChain(_ base: HistoryStateFile) {
        bases = [(base, 0)]
        runsBefore = base.header.run
        inputOffset = base.header.inputs.count
        if let h = base.header.horizon { horizon = max(horizon ?? h, h) }
    }

    /// Merges the states of several chains in order, as if each had continued the one before: each chain's inputs
    /// are numbered after those of the chains before it. The collector reads no inputs of its own; `inputs` must be
    /// the chains' inputs in order.
    public func mergeChains(_ states: [HistoryStateFile]) {
        var offset = 0
        bases = []
        runsBefore = 0
        for s in states {
            bases.append((s, offset))
            offset += s.header.inputs.count
            runsBefore += s.header.run
            if let h = s.header.horizon { horizon = max(horizon ?? h, h) }
        }
        inputOffset = offset
        ownRun = false
    }

    /// Whether the history holds records nobody verified: this run's (`ownRecordsUnverified`) or a base's.
    public var historyFromUnverifiedRecords: Bool {
        ownRecordsUnverified || bases.contains { $0.state.header.unverified }
    }

    /// The header of the state this run writes.
    var stateHeader: HistoryStateHeader {
        HistoryStateHeader(
            run: runsBefore + (ownRun ? 1 : 0), horizon: horizon, inputs: inputs,
            unverified: historyFromUnverifiedRecords)
    }

    /// Streams the bases' records into the stores: their renewal infos into the renewals, their purchases (each
    /// key once per base, already merged) to the purchases' spill, where `reduce` merges them by key with this
    /// run's, in the same bounded memory as any spilled run. A base's input indexes move by its offset.
    func absorbBase() throws(HistoryError) {
        let renewals = self.renewals
        let purchases = self.purchases
        for (state, offset) in bases {
            let shift = Int64(offset)
            try state.stream(
                renewal: { r throws(HistoryError) in
                    var r = r
                    r.newest.input += shift
                    try renewals.add(r)
                },
                purchases: { chunk throws(HistoryError) in
                    guard shift != 0 else { return try purchases.spill(chunk) }
                    try purchases.spill(
                        chunk.map { p in
                            var p = p
                            p.shiftInputs(by: shift)
                            return p
                        })
                })
        }
    }
}
