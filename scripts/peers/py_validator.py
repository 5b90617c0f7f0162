#!/usr/bin/env python3
"""The usual hand-rolled Python receipt validator, as a peer for receiptflow's benchmark.

Built the way Python services commonly validate App Store receipts locally: asn1crypto parses the PKCS #7
SignedData and the receipt payload, cryptography checks the RSA signature and the certificate chain up to the
given root, with validity judged at the receipt creation date. Per record: JSON, base64, parse, signature over
the content (or over the signed attributes, whose messageDigest must match), chain signatures, validity, and
decoding of the payload attributes (app fields and every in-app purchase).

    py_validator.py --root root.pem [--processes P] [--limit N] FILE.ndjson[.zst]

Prints one JSON object: records, valid, rejected, seconds (validation only, after reading the input),
receipts_per_second.
"""

import argparse
import base64
import binascii
import datetime as dt
import hashlib
import json
import multiprocessing as mp
import subprocess
import sys
import time
import warnings

from asn1crypto import cms, core
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding


class ReceiptAttribute(core.Sequence):
    _fields = [("type", core.Integer), ("version", core.Integer), ("value", core.OctetString)]


class ReceiptPayload(core.SetOf):
    _child_spec = ReceiptAttribute


FIELDS = ("receipt-data", "receipt_data", "receipt")
HASHES = {"sha1": hashes.SHA1, "sha256": hashes.SHA256}
STRING_ATTRS = {0: "receipt_type", 2: "bundle_id", 3: "application_version", 19: "original_application_version"}
DATE_ATTRS = {12: "receipt_creation_date", 18: "original_purchase_date", 21: "expiration_date"}
INT_ATTRS = {1: "app_item_id", 15: "download_id", 16: "version_external_identifier"}
IAP_STRINGS = {1702: "product_id", 1703: "transaction_id", 1705: "original_transaction_id", 1721: "promotional_offer_id"}
IAP_DATES = {1704: "purchase_date", 1706: "original_purchase_date", 1708: "expires_date", 1712: "cancellation_date"}
IAP_INTS = {1701: "quantity", 1707: "product_type", 1711: "web_order_line_item_id", 1713: "is_trial_period",
            1719: "is_in_intro_offer_period", 1720: "cancellation_reason"}


class Rejected(Exception):
    def __init__(self, status, code):
        super().__init__(code)
        self.status = status
        self.code = code


def parse_date(raw):
    text = core.IA5String.load(raw).native
    if not text:
        return None
    text = text.replace("Z", "+00:00")
    if len(text) > 6 and text[-5] in "+-" and text[-3] != ":":
        text = text[:-2] + ":" + text[-2:]
    return dt.datetime.fromisoformat(text)


def decode_attributes(content, strings, dates, ints):
    out = {}
    in_app = []
    for attr in ReceiptPayload.load(content):
        t = attr["type"].native
        raw = attr["value"].native
        if t in strings:
            out[strings[t]] = core.UTF8String.load(raw).native
        elif t in dates:
            d = parse_date(raw)
            out[dates[t]] = int(d.timestamp() * 1000) if d else None
        elif t in ints:
            out[ints[t]] = core.Integer.load(raw).native
        elif t == 17:
            in_app.append(decode_attributes(raw, IAP_STRINGS, IAP_DATES, IAP_INTS)[0])
    return out, in_app


class Validator:
    def __init__(self, root_pem):
        with open(root_pem, "rb") as f:
            self.root = x509.load_pem_x509_certificate(f.read())

    def check_signed_by(self, cert, issuer):
        try:
            issuer.public_key().verify(
                cert.signature, cert.tbs_certificate_bytes, padding.PKCS1v15(), cert.signature_hash_algorithm)
        except InvalidSignature:
            raise Rejected(21003, "untrusted_chain")

    def validate(self, line):
        try:
            obj = json.loads(line)
        except ValueError:
            raise Rejected(21002, "invalid_json")
        if not isinstance(obj, dict):
            raise Rejected(21002, "invalid_json")
        text = next((obj[k] for k in FIELDS if k in obj), None)
        if not isinstance(text, str):
            raise Rejected(21002, "missing_field")
        try:
            der = base64.b64decode("".join(text.split()), validate=True)
        except (binascii.Error, ValueError):
            raise Rejected(21002, "invalid_base64")
        if not der:
            raise Rejected(21002, "empty_receipt")
        try:
            info = cms.ContentInfo.load(der)
            if info["content_type"].native != "signed_data":
                raise Rejected(21002, "malformed_der")
            signed = info["content"]
            content = signed["encap_content_info"]["content"].native
            signer = signed["signer_infos"][0]
            sid = signer["sid"].chosen
            certs = [c.chosen for c in signed["certificates"]]
            digest_name = signer["digest_algorithm"]["algorithm"].native
            signature = signer["signature"].native
            signed_attrs = signer["signed_attrs"]
            has_attrs = bool(signed_attrs.native) if signed_attrs is not None else False
            leaf_der = None
            for c in certs:
                if c.issuer == sid["issuer"] and c.serial_number == sid["serial_number"].native:
                    leaf_der = c.dump()
            payload, in_app = decode_attributes(content, STRING_ATTRS, DATE_ATTRS, INT_ATTRS)
        except Rejected:
            raise
        except Exception:
            raise Rejected(21002, "malformed_der")
        if leaf_der is None:
            raise Rejected(21002, "signer_not_found")
        if digest_name not in HASHES:
            raise Rejected(21003, "unsupported_algorithm")
        algorithm = HASHES[digest_name]()

        # The signature covers the content, or the DER SET of the signed attributes ([0] re-tagged as SET).
        signed_bytes = content
        if has_attrs:
            md = next((a["values"][0].native for a in signed_attrs if a["type"].native == "message_digest"), None)
            if md != hashlib.new(digest_name, content).digest():
                raise Rejected(21003, "bad_signature")
            signed_bytes = b"\x31" + signed_attrs.dump()[1:]
        leaf = x509.load_der_x509_certificate(leaf_der)
        try:
            leaf.public_key().verify(signature, signed_bytes, padding.PKCS1v15(), algorithm)
        except InvalidSignature:
            raise Rejected(21003, "bad_signature")

        # Chain: leaf -> embedded intermediates -> the root, each signature checked, validity at creation date.
        created = payload.get("receipt_creation_date")
        if created is None:
            raise Rejected(21002, "malformed_attribute")
        at = dt.datetime.fromtimestamp(created / 1000, tz=dt.timezone.utc)
        others = [x509.load_der_x509_certificate(c.dump()) for c in certs if c.dump() != leaf_der]
        chain = [leaf]
        current = leaf
        while current.issuer != self.root.subject:
            nxt = next((c for c in others if c.subject == current.issuer and c not in chain), None)
            if nxt is None:
                raise Rejected(21003, "untrusted_chain")
            self.check_signed_by(current, nxt)
            chain.append(nxt)
            current = nxt
        self.check_signed_by(current, self.root)
        for c in chain + [self.root]:
            if at < c.not_valid_before_utc:
                raise Rejected(21003, "certificate_not_yet_valid")
            if at > c.not_valid_after_utc:
                raise Rejected(21003, "certificate_expired")
        return payload, in_app


def run_chunk(args):
    root_pem, lines = args
    # cryptography warns about over-long name attributes in the test CA; the check itself is unaffected.
    warnings.simplefilter("ignore")
    cpu = time.process_time()
    v = Validator(root_pem)
    valid = 0
    for line in lines:
        try:
            v.validate(line)
            valid += 1
        except Rejected:
            pass
    return len(lines), valid, time.process_time() - cpu


def read_lines(path, limit):
    if path.endswith(".zst"):
        data = subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout
    else:
        with open(path, "rb") as f:
            data = f.read()
    lines = [ln for ln in data.split(b"\n") if ln.strip()]
    return lines[:limit] if limit else lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("--root", required=True)
    ap.add_argument("--processes", type=int, default=1)
    ap.add_argument("--limit", type=int, default=0, help="validate only the first N records")
    a = ap.parse_args()
    lines = read_lines(a.input, a.limit)
    start = time.perf_counter()
    if a.processes <= 1:
        records, valid, cpu = run_chunk((a.root, lines))
    else:
        size = max(1, len(lines) // (a.processes * 8))
        chunks = [(a.root, lines[i:i + size]) for i in range(0, len(lines), size)]
        with mp.Pool(a.processes) as pool:
            results = pool.map(run_chunk, chunks)
        records = sum(r[0] for r in results)
        valid = sum(r[1] for r in results)
        cpu = sum(r[2] for r in results)
    seconds = time.perf_counter() - start
    # Wall-clock rate, and the rate the same work would reach with every process on its own core (from CPU
    # time), which does not depend on what else the machine runs.
    print(json.dumps({
        "records": records, "valid": valid, "rejected": records - valid, "processes": a.processes,
        "seconds": seconds, "cpu_seconds": cpu, "receipts_per_second": records / seconds if seconds > 0 else 0,
        "receipts_per_cpu_second": records / cpu if cpu > 0 else 0,
    }))


if __name__ == "__main__":
    sys.exit(main())
