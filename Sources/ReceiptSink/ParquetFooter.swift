import ReceiptModel

/// What the footer records about one row group.
struct RowGroupMeta {
    var columns: [ColumnChunkMeta]
    var numRows: Int64
}

/// Encodes `FileMetaData` (parquet-notes.md A.3) with the Thrift compact protocol.
enum ParquetFooter {
    static func encode(
        schema: TableSchema, rowGroups: [RowGroupMeta], numRows: Int64, keyValues: [(String, String)],
        createdBy: String, into w: inout ThriftCompactWriter
    ) {
        w.reset()
        w.i32(1, 1)  // version
        w.listBegin(2, .structure, count: schema.columns.count + 1)
        w.elementBegin()
        w.string(4, "schema")
        w.i32(5, Int32(schema.columns.count))  // the root needs num_children, or no reader opens the file
        w.structEnd()
        for c in schema.columns { schemaElement(c, into: &w) }
        w.i64(3, numRows)
        w.listBegin(4, .structure, count: rowGroups.count)
        for (ordinal, rg) in rowGroups.enumerated() {
            rowGroup(rg, ordinal: ordinal, schema: schema, into: &w)
        }
        if !keyValues.isEmpty {
            w.listBegin(5, .structure, count: keyValues.count)
            for (k, v) in keyValues {
                w.elementBegin()
                w.string(1, k)
                w.string(2, v)
                w.structEnd()
            }
        }
        w.string(6, createdBy)
        // TypeDefinedOrder for every leaf: without it, pyarrow ignores min_value/max_value.
        w.listBegin(7, .structure, count: schema.columns.count)
        for _ in schema.columns {
            w.elementBegin()
            w.structBegin(1)
            w.structEnd()
            w.structEnd()
        }
        w.stop()
    }

    static func schemaElement(_ c: ColumnSpec, into w: inout ThriftCompactWriter) {
        w.elementBegin()
        w.i32(1, Parquet.physicalType(c.kind).rawValue)
        w.i32(3, (c.nullable ? Parquet.Repetition.optional : .required).rawValue)
        w.string(4, c.name)
        switch c.kind {
        case .string:
            w.i32(6, Parquet.ConvertedType.utf8.rawValue)
            w.structBegin(10)  // LogicalType
            w.structBegin(1)  // STRING
            w.structEnd()
            w.structEnd()
        case .timestampMillis:
            // The legacy TIMESTAMP_MILLIS annotation is right only because isAdjustedToUTC is true.
            w.i32(6, Parquet.ConvertedType.timestampMillis.rawValue)
            w.structBegin(10)  // LogicalType
            w.structBegin(8)  // TIMESTAMP
            w.bool(1, true)  // isAdjustedToUTC
            w.structBegin(2)  // unit
            w.structBegin(1)  // MILLIS
            w.structEnd()
            w.structEnd()
            w.structEnd()
            w.structEnd()
        case .date:
            w.i32(6, Parquet.ConvertedType.date.rawValue)
            w.structBegin(10)  // LogicalType
            w.structBegin(6)  // DATE
            w.structEnd()
            w.structEnd()
        case .int64, .int32, .bool:
            break
        }
        w.structEnd()
    }

    static func rowGroup(_ rg: RowGroupMeta, ordinal: Int, schema: TableSchema, into w: inout ThriftCompactWriter) {
        w.elementBegin()
        w.listBegin(1, .structure, count: rg.columns.count)
        var uncompressed: Int64 = 0
        var compressed: Int64 = 0
        for (c, m) in zip(schema.columns, rg.columns) {
            uncompressed += m.totalUncompressed
            compressed += m.totalCompressed
            w.elementBegin()
            w.i64(2, 0)  // file_offset: required, deprecated
            w.structBegin(3)  // ColumnMetaData
            w.i32(1, Parquet.physicalType(c.kind).rawValue)
            w.listBegin(2, .i32, count: m.encodings.count)
            for e in m.encodings { w.elementI32(e) }
            w.listBegin(3, .binary, count: 1)
            w.elementString(c.name)
            w.i32(4, Parquet.codecZstd)
            w.i64(5, m.numValues)
            w.i64(6, m.totalUncompressed)
            w.i64(7, m.totalCompressed)
            w.i64(9, m.dataPageOffset)
            if let d = m.dictionaryPageOffset { w.i64(11, d) }
            w.structBegin(12)  // Statistics
            w.i64(3, m.nullCount)
            if let max = m.maxValue, let min = m.minValue {
                w.binary(5, max)
                w.binary(6, min)
            }
            w.structEnd()
            w.structEnd()
            w.structEnd()
        }
        w.i64(2, uncompressed)
        w.i64(3, rg.numRows)
        if let first = rg.columns.first { w.i64(5, first.dictionaryPageOffset ?? first.dataPageOffset) }
        w.i64(6, compressed)
        if ordinal <= Int(Int16.max) { w.i16(7, Int16(ordinal)) }
        w.structEnd()
    }
}
