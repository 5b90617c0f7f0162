import ReceiptModel

#if canImport(Glibc)
    import Glibc
#endif

/// Appends one receipts row with the given line and bundle id and defaults elsewhere.
func appendReceiptRow(_ t: inout ColumnTable, line: Int64, bundle: String?) {
    for c in t.schema.columns {
        switch c.kind {
        case .string:
            if c.name == "source" {
                t.append(string: c.slot, "in.ndjson")
            } else if c.name == "bundle_id" {
                t.append(string: c.slot, bundle)
            } else if c.name == "record_kind" {
                t.append(string: c.slot, "receipt")
            } else {
                t.append(string: c.slot, nil as String?)
            }
        case .int64, .timestampMillis: t.append(int64: c.slot, c.name == "line" ? line : nil)
        case .int32, .date: t.append(int32: c.slot, c.nullable ? nil : 0)
        case .bool: t.append(bool: c.slot, c.nullable ? nil : false)
        }
    }
    t.rowCount += 1
}

func getpidValue() -> Int32 { getpid() }

struct ReadError: Error {}

func readFile(_ path: String) throws -> [UInt8] {
    guard let f = fopen(path, "rb") else { throw ReadError() }
    defer { fclose(f) }
    var out: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buf, 1, buf.count, f)
        if n == 0 { break }
        out.append(contentsOf: buf[0..<n])
    }
    return out
}
