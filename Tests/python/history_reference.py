"""A reference implementation of the `purchases` and `subscriptions` tables (docs: ../shared/docs/history.md and
the contract's history section), written apart from the Swift code so that each checks the other.

It reads what an export already holds for every receipt: `receipts.csv` (status, receipt_type,
receipt_creation_date, source, line, jws_index) and `transactions.csv` (each in-app entry's fields, in receipt
order), of one export over the inputs `inputs` (in command-line order: a receipt's position is (index of its source
in `inputs`, line)), and for JWS input `renewals.csv` (the renewal infos that refine the subscriptions). Values are
Python values: strings, ints, bools, None, timestamps as epoch milliseconds.

    python3 Tests/python/history_reference.py EXPORT_DIR INPUT... [--as-of 2024-01-01T00:00:00Z] [--user-field]

prints both tables as the project's CSV. `--user-field` says the export was run with `--user-field` (the user
columns then come from `receipts.user_id`, and `multiple_user_ids` is false rather than null when there is none).
"""

import csv
import datetime
import sys

PURCHASE_COLUMNS = [
    "environment", "bundle_id", "transaction_id", "original_transaction_id", "product_id", "quantity",
    "purchase_date", "original_purchase_date", "expires_date", "web_order_line_item_id", "is_trial_period",
    "is_in_intro_offer_period", "promotional_offer_id", "product_type", "cancellation_date", "cancellation_reason",
    "user_id", "multiple_user_ids", "app_account_token", "first_seen", "last_seen", "occurrences", "source", "line",
]
# The columns of the subscription's newest renewal info, the last six of SUBSCRIPTION_COLUMNS (null without one).
RENEWAL_COLUMNS = [
    "renewal_signed_date", "auto_renew_status", "auto_renew_product_id", "expiration_intent",
    "is_in_billing_retry_period", "grace_period_expires_date",
]
SUBSCRIPTION_COLUMNS = [
    "environment", "bundle_id", "original_transaction_id", "first_product_id", "latest_product_id",
    "first_purchase_date", "latest_purchase_date", "latest_expires_date", "periods", "trial_periods",
    "intro_periods", "cancelled_periods", "observed_through", "state",
] + RENEWAL_COLUMNS + ["user_id", "multiple_user_ids", "app_account_token"]
TIMESTAMPS = {
    "purchase_date", "original_purchase_date", "expires_date", "cancellation_date", "first_seen", "last_seen",
    "first_purchase_date", "latest_purchase_date", "latest_expires_date", "observed_through",
    "receipt_creation_date", "renewal_signed_date", "grace_period_expires_date", "signed_date",
}
INTEGERS = {
    "quantity", "web_order_line_item_id", "product_type", "cancellation_reason", "occurrences", "line", "periods",
    "trial_periods", "intro_periods", "cancelled_periods", "status", "jws_index", "auto_renew_status",
    "expiration_intent", "offer_type",
}
BOOLEANS = {"is_trial_period", "is_in_intro_offer_period", "is_in_billing_retry_period", "multiple_user_ids"}
# The entry fields a purchase takes from its newest occurrence.
NEWEST_FIELDS = [
    "original_transaction_id", "product_id", "quantity", "purchase_date", "original_purchase_date", "expires_date",
    "web_order_line_item_id", "is_trial_period", "is_in_intro_offer_period", "promotional_offer_id", "product_type",
]

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def parse_time(text):
    """`2019-08-08T05:43:20.000Z` (or any RFC 3339 time) to epoch milliseconds."""
    t = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if t.tzinfo is None:
        t = t.replace(tzinfo=datetime.timezone.utc)
    delta = t - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def format_time(ms):
    t = _EPOCH + datetime.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _value(name, text):
    """A CSV field as a value. The export writes null as an empty field and an empty string as `""`; Python's csv
    reader cannot tell them apart, so an empty field is read as null (the generated data has no empty strings)."""
    if text == "":
        return None
    if name in TIMESTAMPS:
        return parse_time(text)
    if name in INTEGERS:
        return int(text)
    if name in BOOLEANS:
        return {"true": True, "false": False}[text]
    return text


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        for row in reader:
            yield {name: _value(name, text) for name, text in zip(header, row)}


# StoreKit testing environments: their purchases never reached the App Store and never count (docs/history.md).
STOREKIT_TESTING = ("Xcode", "LocalTesting")


def occurrences_from_export(directory, inputs):
    """The occurrences of an export's contributing receipts: dicts of the entry's fields plus `environment`,
    `created`, `source`, `line` and `rank` (created, input index, line, entry index), in file order."""
    index = {source: i for i, source in enumerate(inputs)}
    receipts = {}
    for r in read_csv(f"{directory}/receipts.csv"):
        if r["status"] == 0 and r["receipt_type"] not in STOREKIT_TESTING:
            receipts[(r["source"], r["line"], r.get("jws_index"))] = r
    entry = {}
    for t in read_csv(f"{directory}/transactions.csv"):
        r = receipts.get((t["source"], t["line"], t.get("jws_index")))
        if r is None:
            continue
        k = (t["source"], t["line"])
        e = entry.get(k, 0)
        entry[k] = e + 1
        created = r["receipt_creation_date"]
        t["environment"] = "Sandbox" if (r["receipt_type"] or "").endswith("Sandbox") else "Production"
        t["bundle_id"] = r["bundle_id"]
        t["created"] = created
        t["user_id"] = r.get("user_id")
        if t.get("jws_index") is not None:
            jws_offer(t)
        # A null creation date sorts before every date.
        t["rank"] = (created is not None, created or 0, index[t["source"]], t["line"], e)
        yield t
    return


def jws_offer(t):
    """A JWS transaction's offer in a receipt's terms (docs/history.md): an introductory offer (offer_type 1) is a
    trial when its discount is FREE_TRIAL and an introductory price when it is PAY_AS_YOU_GO or PAY_UP_FRONT; with
    no discount named, an introductory price of unknown trial; a promotional offer (2) gives its identifier."""
    kind, discount = t.get("offer_type"), t.get("offer_discount_type")
    if kind == 1:
        t["is_trial_period"] = None if discount is None else discount == "FREE_TRIAL"
        t["is_in_intro_offer_period"] = discount in (None, "PAY_AS_YOU_GO", "PAY_UP_FRONT")
    else:
        t["is_trial_period"] = False
        t["is_in_intro_offer_period"] = False
    t["promotional_offer_id"] = t.get("offer_identifier") if kind == 2 else None


def horizon_of(directory):
    """The data horizon: the greatest receipt_creation_date of a contributing receipt (None when none)."""
    dates = [
        r["receipt_creation_date"]
        for r in read_csv(f"{directory}/receipts.csv")
        if r["status"] == 0 and r["receipt_type"] not in STOREKIT_TESTING and r["receipt_creation_date"] is not None
    ]
    return max(dates) if dates else None


def purchases(occurrences, user_field=False):
    """The purchases rows, in the contract's order. `user_field`: the export named a user field."""
    rows = {}
    for o in occurrences:
        key = (o["environment"], o["bundle_id"], o["transaction_id"])
        p = rows.get(key)
        if p is None:
            p = rows[key] = {
                "environment": key[0], "bundle_id": key[1], "transaction_id": key[2], "_newest": None,
                "_cancel": None, "first_seen": o["created"], "last_seen": o["created"], "occurrences": 0,
                "_user": None, "_token": None, "_users": set(),
            }
        p["occurrences"] += 1
        p["first_seen"] = _min(p["first_seen"], o["created"])
        p["last_seen"] = _max(p["last_seen"], o["created"])
        if p["_newest"] is None or o["rank"] >= p["_newest"]["rank"]:
            p["_newest"] = o
        if o["cancellation_date"] is not None and (p["_cancel"] is None or o["rank"] > p["_cancel"]["rank"]):
            p["_cancel"] = o
        if o.get("user_id") is not None:
            p["_users"].add(o["user_id"])
            if p["_user"] is None or o["rank"] > p["_user"]["rank"]:
                p["_user"] = o
        if o.get("app_account_token") is not None and (p["_token"] is None or o["rank"] > p["_token"]["rank"]):
            p["_token"] = o
    out = []
    for p in rows.values():
        n, c = p.pop("_newest"), p.pop("_cancel")
        u, k, users = p.pop("_user"), p.pop("_token"), p.pop("_users")
        row = {name: p.get(name) for name in PURCHASE_COLUMNS}
        for f in NEWEST_FIELDS:
            row[f] = n[f]
        row["cancellation_date"] = c["cancellation_date"] if c else None
        row["cancellation_reason"] = c["cancellation_reason"] if c else None
        row["source"], row["line"] = n["source"], n["line"]
        row["user_id"] = u["user_id"] if u else None
        row["multiple_user_ids"] = len(users) >= 2 if user_field else None
        row["app_account_token"] = k["app_account_token"] if k else None
        out.append(row)
    out.sort(
        key=lambda r: (
            r["environment"], r["bundle_id"], _nulls_first(r["original_transaction_id"]),
            _nulls_first(r["purchase_date"]), r["transaction_id"],
        )
    )
    return out


def renewals_from_export(directory, inputs):
    """The newest counting renewal info per (environment, original_transaction_id), by (signed_date, input index,
    line, jws_index); the renewals table holds only valid ones."""
    index = {source: i for i, source in enumerate(inputs)}
    newest = {}
    try:
        rows = list(read_csv(f"{directory}/renewals.csv"))
    except FileNotFoundError:
        return newest
    for n in rows:
        if n["environment"] in STOREKIT_TESTING or n["original_transaction_id"] is None:
            continue
        env = "Sandbox" if (n["environment"] or "").endswith("Sandbox") else "Production"
        signed = n["signed_date"]
        n["rank"] = (signed is not None, signed or 0, index[n["source"]], n["line"], n["jws_index"])
        key = (env, n["original_transaction_id"])
        if key not in newest or n["rank"] > newest[key]["rank"]:
            newest[key] = n
    return newest


def subscriptions(purchase_rows, as_of, renewals=None):
    """The subscriptions rows at as-of time `as_of` (epoch ms), in the contract's order. `renewals` (the newest
    renewal info per key; None or {} when there is none) refines them and fills RENEWAL_COLUMNS."""
    groups = {}
    for p in purchase_rows:
        if p["expires_date"] is None:
            continue
        otid = p["original_transaction_id"] if p["original_transaction_id"] is not None else p["transaction_id"]
        groups.setdefault((p["environment"], p["bundle_id"], otid), []).append(p)
    out = []
    for (env, bundle, otid), periods in groups.items():
        ordered = sorted(periods, key=lambda p: (_nulls_first(p["purchase_date"]), p["transaction_id"]))
        purchase_dates = [p["purchase_date"] for p in periods if p["purchase_date"] is not None]
        live_expiries = [p["expires_date"] for p in periods if p["cancellation_date"] is None]
        observed = max(p["last_seen"] for p in periods)
        out.append({
            "environment": env, "bundle_id": bundle, "original_transaction_id": otid,
            "first_product_id": ordered[0]["product_id"], "latest_product_id": ordered[-1]["product_id"],
            "first_purchase_date": min(purchase_dates) if purchase_dates else None,
            "latest_purchase_date": max(purchase_dates) if purchase_dates else None,
            "latest_expires_date": max(live_expiries) if live_expiries else None,
            "periods": len(periods),
            "trial_periods": sum(1 for p in periods if p["is_trial_period"] is True),
            "intro_periods": sum(1 for p in periods if p["is_in_intro_offer_period"] is True),
            "cancelled_periods": sum(1 for p in periods if p["cancellation_date"] is not None),
            "observed_through": observed,
            "state": state(ordered, observed, as_of),
        })
        n = (renewals or {}).get((env, otid))
        out[-1]["state"] = refined_state(out[-1]["state"], ordered, as_of, n)
        out[-1]["renewal_signed_date"] = n["signed_date"] if n else None
        for c in RENEWAL_COLUMNS[1:]:
            out[-1][c] = n[c] if n else None
        # The customer: of the latest period that has one; several users when a period has several or two
        # periods name different ones.
        with_user = [p for p in ordered if p["user_id"] is not None]
        with_token = [p for p in ordered if p["app_account_token"] is not None]
        out[-1]["user_id"] = with_user[-1]["user_id"] if with_user else None
        flags = [p["multiple_user_ids"] for p in periods if p["multiple_user_ids"] is not None]
        out[-1]["multiple_user_ids"] = (any(flags) or len({p["user_id"] for p in with_user}) >= 2) if flags else None
        out[-1]["app_account_token"] = with_token[-1]["app_account_token"] if with_token else None
    out.sort(key=lambda r: (r["environment"], r["bundle_id"], r["original_transaction_id"]))
    return out


def state(ordered, observed_through, as_of):
    """history.md's rules, first match wins."""
    counted = [p for p in ordered if p["purchase_date"] is not None and p["purchase_date"] <= as_of]
    if not counted:
        return "not_started"

    def cancelled(p):
        return p["cancellation_date"] is not None and p["cancellation_date"] <= as_of

    live = [p for p in counted if not cancelled(p)]
    if any(p["expires_date"] is not None and as_of < p["expires_date"] for p in live):
        return "active"
    if cancelled(counted[-1]):
        return "revoked"
    expiries = [p["expires_date"] for p in live if p["expires_date"] is not None]
    if expiries and observed_through >= max(expiries):
        return "expired"
    return "unknown"


def refined_state(receipts_state, ordered, as_of, n):
    """history.md's "Renewal infos (JWS)" rules: the state the receipts give, refined by `n`, the newest renewal
    info of the key (None when it has none)."""
    if n is None or receipts_state in ("not_started", "active", "revoked") or n["signed_date"] is None:
        return receipts_state
    counted = [p for p in ordered if p["purchase_date"] is not None and p["purchase_date"] <= as_of]
    signed = n["signed_date"]
    if not (signed <= as_of and signed >= counted[-1]["purchase_date"]):
        return receipts_state
    if n["is_in_billing_retry_period"] is True:
        grace = n["grace_period_expires_date"]
        return "grace_period" if grace is not None and as_of < grace else "billing_retry"
    if receipts_state == "expired":
        return "expired"
    live = [p["expires_date"] for p in counted
            if not (p["cancellation_date"] is not None and p["cancellation_date"] <= as_of)]
    if n["expiration_intent"] is not None and live and signed >= max(live):
        return "expired"
    return receipts_state


def tables(directory, inputs, as_of=None, user_field=False):
    """(purchases, subscriptions, as_of used) of an export directory written with `--format csv` (with
    `--user-field` when `user_field`)."""
    if as_of is None:
        as_of = horizon_of(directory)
    p = purchases(occurrences_from_export(directory, inputs), user_field)
    renewals = renewals_from_export(directory, inputs)
    return p, subscriptions(p, as_of if as_of is not None else 0, renewals), as_of


def csv_text(value):
    """A value as the project's CSV writes it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if value == "":
        return '""'
    if any(c in value for c in ',"\r\n'):
        return '"' + value.replace('"', '""') + '"'
    return value


def render(rows, columns, timestamps=TIMESTAMPS):
    """Rows as the lines of the project's CSV (header included), each without its `\\n`."""
    lines = [",".join(columns)]
    for r in rows:
        lines.append(",".join(
            format_time(r[c]) if c in timestamps and r[c] is not None else csv_text(r[c]) for c in columns
        ))
    return lines


def _nulls_first(v):
    return (v is not None, v if v is not None else 0)


def _min(a, b):
    return b if a is None else a if b is None else min(a, b)


def _max(a, b):
    return b if a is None else a if b is None else max(a, b)


def main(argv):
    as_of = None
    user_field = "--user-field" in argv
    argv = [a for a in argv if a != "--user-field"]
    if "--as-of" in argv:
        i = argv.index("--as-of")
        as_of = parse_time(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    directory, inputs = argv[0], argv[1:]
    p, s, _ = tables(directory, inputs, as_of, user_field)
    print("\n".join(render(p, PURCHASE_COLUMNS)))
    print()
    print("\n".join(render(s, SUBSCRIPTION_COLUMNS)))


if __name__ == "__main__":
    main(sys.argv[1:])
