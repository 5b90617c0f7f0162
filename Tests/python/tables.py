"""Ground truth for the reader checks: the table schemas of contract.md and a deterministic row generator.

Rows are plain dicts; timestamps are epoch milliseconds (int). Nothing here comes from the code under test.
"""

import json
import random

# (name, kind, nullable) in contract order; kind is one of string, int64, int32, bool, timestamp.
RECEIPTS = [
    ("source", "string", False), ("line", "int64", False), ("record_id", "string", True),
    ("status", "int32", False), ("error_code", "string", True), ("error_detail", "string", True),
    ("verified", "bool", False), ("receipt_type", "string", True), ("bundle_id", "string", True),
    ("application_version", "string", True), ("original_application_version", "string", True),
    ("app_item_id", "int64", True), ("download_id", "int64", True), ("version_external_identifier", "int64", True),
    ("receipt_creation_date", "timestamp", True), ("original_purchase_date", "timestamp", True),
    ("expiration_date", "timestamp", True), ("in_app_count", "int32", True), ("digest_algorithm", "string", True),
    ("signer_sha256", "string", True), ("receipt_sha256", "string", True), ("device_hash_matches", "bool", True),
    ("record_kind", "string", False), ("jws_index", "int32", True), ("user_id", "string", True),
]
TRANSACTIONS = [
    ("source", "string", False), ("line", "int64", False), ("record_id", "string", True),
    ("bundle_id", "string", False), ("receipt_type", "string", False), ("quantity", "int32", True),
    ("product_id", "string", False), ("transaction_id", "string", False),
    ("original_transaction_id", "string", True), ("purchase_date", "timestamp", True),
    ("original_purchase_date", "timestamp", True), ("expires_date", "timestamp", True),
    ("cancellation_date", "timestamp", True), ("web_order_line_item_id", "int64", True),
    ("is_trial_period", "bool", True), ("is_in_intro_offer_period", "bool", True),
    ("promotional_offer_id", "string", True), ("product_type", "int32", True), ("cancellation_reason", "int32", True),
    ("type", "string", True), ("in_app_ownership_type", "string", True), ("revocation_date", "timestamp", True),
    ("revocation_reason", "int32", True), ("is_upgraded", "bool", True), ("offer_type", "int32", True),
    ("offer_identifier", "string", True), ("storefront", "string", True), ("transaction_reason", "string", True),
    ("price", "int64", True), ("currency", "string", True), ("app_account_token", "string", True),
    ("subscription_group_identifier", "string", True), ("signed_date", "timestamp", True),
    ("environment", "string", True), ("jws_index", "int32", True), ("offer_discount_type", "string", True),
]
RECORD_KINDS = ["receipt", "jws_transaction", "jws_renewal", "jws_notification", "jws"]

I64_MIN, I64_MAX = -(2**63), 2**63 - 1
TS_2008, TS_2031 = 1199145600000, 1924992000000
# Awkward strings: CSV metacharacters, Unicode (accents, CJK, emoji, RTL), spaces, the empty string, formulas.
TRICKY = [
    "plain", "comma,inside", 'quote"inside', '"fully quoted"', "new\nline", "carriage\rreturn", "crlf\r\nend",
    "  leading and trailing  ", "", "ünïcødé", "日本語のテキスト", "emoji 🧾💳", "עברית", "tab\tinside", ",", '"',
    "\n", "a,b\n\"c\"", "back\\slash", "null", "NULL", "NA", "-", "=1+2",
    # Cells a spreadsheet runs as formulas.
    '=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "=1,2",
]
SOURCES = ["a.ndjson", "b,comma.ndjson.zst", "-", "dossier/reçus été.jsonl", 'quote"name.b64']
BUNDLES = ["com.example.app", "com.whitepaek.apps", "jp.co.例え.アプリ", "com.x"]
RECEIPT_TYPES = ["Production", "ProductionSandbox", "Xcode", "ProductionVPP"]
ERRORS = [(21002, "invalid_json"), (21002, "invalid_base64"), (21002, "malformed_der"), (21003, "bad_signature"),
          (21003, "untrusted_chain"), (21007, "wrong_environment")]
SIGNERS = ["%064x" % (i * 0x9E3779B97F4A7C15) for i in range(1, 4)]


def _ts(rnd):
    r = rnd.random()
    if r < 0.02:
        return rnd.choice([0, -1, -86_400_000 * 365 * 10 - 1, 64_060_588_800_000, 1375340400000, 999])
    return rnd.randrange(TS_2008, TS_2031)


def _i64(rnd):
    r = rnd.random()
    if r < 0.05:
        return rnd.choice([I64_MIN, I64_MAX, 2**53 + 1, -1, 0])
    return rnd.randrange(0, 2**62)


def _maybe(rnd, p_null, f):
    return None if rnd.random() < p_null else f()


def generate(n_receipts, n_transactions, seed):
    rnd = random.Random(seed)
    receipts = []
    for i in range(n_receipts):
        ok = rnd.random() < 0.7
        status, code = (0, None) if ok else rnd.choice(ERRORS)
        decoded = ok or rnd.random() < 0.5
        row = {
            "source": rnd.choice(SOURCES),
            "line": i + 1 if rnd.random() < 0.95 else rnd.choice([I64_MAX, 2**40]),
            "record_id": _maybe(rnd, 0.15, lambda: rnd.choice(TRICKY) if rnd.random() < 0.3 else f"id-{i}"),
            "status": status,
            "error_code": code,
            "error_detail": None if ok else rnd.choice(TRICKY + [f"bad thing at byte {rnd.randrange(1000)}"]),
            "verified": ok and rnd.random() < 0.9,
            "receipt_type": rnd.choice(RECEIPT_TYPES) if decoded else None,
            "bundle_id": rnd.choice(BUNDLES) if decoded else None,
            "application_version": _maybe(rnd, 0.1, lambda: rnd.choice(["1", "1.0", "2.3.4", "10"])) if decoded else None,
            "original_application_version": _maybe(rnd, 0.1, lambda: rnd.choice(["1.0", "1"])) if decoded else None,
            "app_item_id": _maybe(rnd, 0.1, lambda: _i64(rnd)) if decoded else None,
            "download_id": _maybe(rnd, 0.2, lambda: _i64(rnd)) if decoded else None,
            "version_external_identifier": _maybe(rnd, 0.2, lambda: _i64(rnd)) if decoded else None,
            "receipt_creation_date": _maybe(rnd, 0.05, lambda: _ts(rnd)) if decoded else None,
            "original_purchase_date": _maybe(rnd, 0.1, lambda: _ts(rnd)) if decoded else None,
            "expiration_date": _maybe(rnd, 0.9, lambda: _ts(rnd)) if decoded else None,
            "in_app_count": _maybe(rnd, 0.05, lambda: rnd.choice([0, 1, 2, 120, 2**31 - 1])) if decoded else None,
            "digest_algorithm": rnd.choice(["sha1", "sha256"]) if decoded else None,
            "signer_sha256": rnd.choice(SIGNERS) if decoded else None,
            "receipt_sha256": "%064x" % rnd.getrandbits(256) if decoded else None,
            "device_hash_matches": _maybe(rnd, 0.5, lambda: rnd.random() < 0.8) if decoded else None,
            "record_kind": rnd.choice(RECORD_KINDS),
            "jws_index": _maybe(rnd, 0.6, lambda: rnd.choice([0, 1, 2, 2**31 - 1])),
            "user_id": _maybe(rnd, 0.5, lambda: rnd.choice(TRICKY + ["48213", "true"])),
        }
        receipts.append(row)
    # One very long string: statistics must then be omitted or exact, never truncated.
    if receipts:
        receipts[min(17, len(receipts) - 1)]["error_detail"] = "x" * 5000 + "é"
    transactions = []
    for i in range(n_transactions):
        transactions.append({
            "source": rnd.choice(SOURCES),
            "line": rnd.randrange(1, max(2, n_receipts)),
            "record_id": _maybe(rnd, 0.2, lambda: f"id-{i}"),
            "bundle_id": rnd.choice(BUNDLES),
            "receipt_type": rnd.choice(RECEIPT_TYPES),
            "quantity": _maybe(rnd, 0.05, lambda: rnd.choice([1, 1, 1, 2, 0, -1, 2**31 - 1, -(2**31)])),
            "product_id": rnd.choice(["products.consumable", "pro.monthly", "pro.yearly", "コイン100"] + TRICKY[:3]),
            "transaction_id": str(1000000000000000 + rnd.randrange(10**12)) if rnd.random() < 0.97 else rnd.choice(TRICKY),
            "original_transaction_id": _maybe(rnd, 0.1, lambda: str(1000000000000000 + rnd.randrange(10**12))),
            "purchase_date": _maybe(rnd, 0.02, lambda: _ts(rnd)),
            "original_purchase_date": _maybe(rnd, 0.05, lambda: _ts(rnd)),
            "expires_date": _maybe(rnd, 0.6, lambda: _ts(rnd)),
            "cancellation_date": _maybe(rnd, 0.95, lambda: _ts(rnd)),
            "web_order_line_item_id": _maybe(rnd, 0.5, lambda: _i64(rnd)),
            "is_trial_period": _maybe(rnd, 0.1, lambda: rnd.random() < 0.3),
            "is_in_intro_offer_period": _maybe(rnd, 0.5, lambda: rnd.random() < 0.2),
            "promotional_offer_id": _maybe(rnd, 0.9, lambda: rnd.choice(["promo1", "promo,2", "プロモ"])),
            "product_type": _maybe(rnd, 0.1, lambda: rnd.randrange(4)),
            "cancellation_reason": _maybe(rnd, 0.95, lambda: rnd.randrange(2)),
            "type": _maybe(rnd, 0.7, lambda: rnd.choice(["Auto-Renewable Subscription", "Consumable"] + TRICKY[:3])),
            "in_app_ownership_type": _maybe(rnd, 0.7, lambda: rnd.choice(["PURCHASED", "FAMILY_SHARED"])),
            "revocation_date": _maybe(rnd, 0.95, lambda: _ts(rnd)),
            "revocation_reason": _maybe(rnd, 0.95, lambda: rnd.randrange(2)),
            "is_upgraded": _maybe(rnd, 0.9, lambda: rnd.random() < 0.5),
            "offer_type": _maybe(rnd, 0.9, lambda: rnd.randrange(1, 4)),
            "offer_identifier": _maybe(rnd, 0.9, lambda: rnd.choice(["offer1", "ofr,2"])),
            "storefront": _maybe(rnd, 0.7, lambda: rnd.choice(["USA", "JPN", "DEU"])),
            "transaction_reason": _maybe(rnd, 0.7, lambda: rnd.choice(["PURCHASE", "RENEWAL"])),
            "price": _maybe(rnd, 0.7, lambda: _i64(rnd)),
            "currency": _maybe(rnd, 0.7, lambda: rnd.choice(["USD", "JPY", "EUR"])),
            "app_account_token": _maybe(rnd, 0.9, lambda: "%032x" % rnd.getrandbits(128)),
            "subscription_group_identifier": _maybe(rnd, 0.8, lambda: str(rnd.randrange(10**8))),
            "signed_date": _maybe(rnd, 0.7, lambda: _ts(rnd)),
            "environment": _maybe(rnd, 0.7, lambda: rnd.choice(["Production", "Sandbox"])),
            "jws_index": _maybe(rnd, 0.7, lambda: rnd.choice([0, 1, 2])),
            "offer_discount_type": _maybe(rnd, 0.8, lambda: rnd.choice(["FREE_TRIAL", "PAY_AS_YOU_GO", "PAY_UP_FRONT"])),
        })
    return receipts, transactions


def dump_rows(path, rows, schema):
    """The hook's input: one JSON object per line; int64 and timestamps as decimal strings (exact)."""
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            out = {}
            for name, kind, _ in schema:
                v = row[name]
                out[name] = str(v) if v is not None and kind in ("int64", "timestamp") else v
            f.write(json.dumps(out, ensure_ascii=False) + "\n")
