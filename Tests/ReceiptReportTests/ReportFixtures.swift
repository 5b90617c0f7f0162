import ReceiptModel

/// Builds small tables for the report's tests, one row at a time, nulls in every column not named.
enum ReportFixtures {
    /// `ms` of a UTC date.
    static func date(_ y: Int64, _ m: Int, _ d: Int) -> Int64 {
        CivilTime.daysFromCivil(year: y, month: m, day: d) * 86_400_000
    }

    /// Appends a row to `t` with `strings`, `int64s` and `int32s` given by column name.
    static func append(
        _ t: inout ColumnTable, strings: [String: String] = [:], int64s: [String: Int64] = [:],
        int32s: [String: Int32] = [:]
    ) {
        for c in t.schema.columns {
            switch c.kind {
            case .string: t.append(string: c.slot, strings[c.name])
            case .int64, .timestampMillis: t.append(int64: c.slot, int64s[c.name])
            case .int32, .date: t.append(int32: c.slot, int32s[c.name])
            case .bool: t.append(bool: c.slot, nil)
            }
        }
        t.rowCount += 1
    }

    /// A receipts row.
    static func receipt(
        _ t: inout ColumnTable, bundle: String?, type: String?, kind: String = "receipt", status: Int32 = 0,
        created: Int64?
    ) {
        var strings = ["record_kind": kind]
        strings["bundle_id"] = bundle
        strings["receipt_type"] = type
        var int64s: [String: Int64] = [:]
        int64s["receipt_creation_date"] = created
        append(&t, strings: strings, int64s: int64s, int32s: ["status": status])
    }

    /// A subscriptions row.
    static func subscription(_ t: inout ColumnTable, environment: String, product: String, state: String, first: Int64)
    {
        append(
            &t,
            strings: [
                "environment": environment, "latest_product_id": product, "first_product_id": product, "state": state,
            ],
            int64s: ["first_purchase_date": first])
    }
}
