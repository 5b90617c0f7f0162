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
                t.strings[c.slot].append("in.ndjson")
            } else if c.name == "bundle_id" {
                t.strings[c.slot].append(bundle)
            } else {
                t.strings[c.slot].appendNull()
            }
        case .int64, .timestampMillis: t.int64s[c.slot].append(c.name == "line" ? line : nil)
        case .int32: t.int32s[c.slot].append(c.nullable ? nil : 0)
        case .bool: t.bools[c.slot].append(c.nullable ? nil : false)
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
