import ReceiptModel
import ReceiptSink

/// A `BatchSink` that passes every batch on to the run's sink and counts its `receipts` rows in an aggregator
/// first, so that the report's aggregates are made while the run writes, without reading the tables back.
public final class ReportTap: BatchSink {
    public let sink: BatchSink
    public let aggregator: ReportAggregator

    public init(_ sink: BatchSink, aggregator: ReportAggregator) {
        self.sink = sink
        self.aggregator = aggregator
    }

    public func write(_ batch: ColumnBatch) throws(SinkError) {
        aggregator.add(receipts: batch.receipts)
        try sink.write(batch)
    }

    public func finish() throws(SinkError) { try sink.finish() }
    public func abort() { sink.abort() }
}
