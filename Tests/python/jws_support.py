"""Signed JWS (StoreKit 2 / App Store Server) for the Python tests, from a test PKI shaped like Apple's: a P-384
root, a P-384 intermediate carrying 1.2.840.113635.100.6.2.1 and a P-256 leaf carrying 1.2.840.113635.100.6.11.1,
each marker a non-critical extension with a NULL value and a certificate policy, as Apple's certificates have them.
`receiptflow export --trust-anchor ROOT.pem` verifies what it signs.

Written apart from the Swift generator (ReceiptSynth's JWSFactory) so that a Python test needs no Swift helper.
"""

import base64
import datetime
import json

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

WWDR_INTERMEDIATE = "1.2.840.113635.100.6.2.1"
RECEIPT_SIGNING = "1.2.840.113635.100.6.11.1"
_NULL = b"\x05\x00"


def _name(common_name):
    return x509.Name([
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Receiptflow Python Test"),
        x509.NameAttribute(NameOID.COMMON_NAME, common_name),
    ])


def _certificate(subject, key, issuer, issuer_key, serial, ca, marker=None):
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(serial)
        .not_valid_before(datetime.datetime(2015, 1, 1, tzinfo=datetime.timezone.utc))
        .not_valid_after(datetime.datetime(2035, 1, 1, tzinfo=datetime.timezone.utc))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=not ca, content_commitment=False, key_encipherment=False, data_encipherment=False,
                key_agreement=False, key_cert_sign=ca, crl_sign=ca, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False
        )
    )
    if marker is not None:
        oid = x509.ObjectIdentifier(marker)
        builder = builder.add_extension(
            x509.CertificatePolicies([x509.PolicyInformation(oid, None)]), critical=False
        ).add_extension(x509.UnrecognizedExtension(oid, _NULL), critical=False)
    return builder.sign(issuer_key, hashes.SHA384() if isinstance(issuer_key.curve, ec.SECP384R1) else hashes.SHA256())


class TestPKI:
    """Fresh keys and certificates; `root_pem` is the trust anchor, `sign(payload)` a compact JWS."""

    def __init__(self):
        root_key = ec.generate_private_key(ec.SECP384R1())
        inter_key = ec.generate_private_key(ec.SECP384R1())
        self.leaf_key = ec.generate_private_key(ec.SECP256R1())
        root_name, inter_name = _name("Python Test Root CA - G3"), _name("Python Test WWDR Intermediate")
        self.root = _certificate(root_name, root_key, root_name, root_key, 1, True)
        inter = _certificate(inter_name, inter_key, root_name, root_key, 2, True, WWDR_INTERMEDIATE)
        leaf = _certificate(_name("Python Test Receipt Signing"), self.leaf_key, inter_name, inter_key, 3, False,
                            RECEIPT_SIGNING)
        self.x5c = [base64.b64encode(c.public_bytes(serialization.Encoding.DER)).decode()
                    for c in (leaf, inter, self.root)]

    @property
    def root_pem(self):
        return self.root.public_bytes(serialization.Encoding.PEM)

    def sign(self, payload):
        """`header.payload.signature`, ES256 with the raw r||s signature JWS uses."""
        header = _b64url(json.dumps({"alg": "ES256", "x5c": self.x5c}, separators=(",", ":")).encode())
        body = _b64url(json.dumps(payload, separators=(",", ":"), sort_keys=True).encode())
        signing_input = (header + "." + body).encode()
        r, s = decode_dss_signature(self.leaf_key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        return header + "." + body + "." + _b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def _b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


DAY = 86_400_000
# 2024-03-01T00:00:00Z.
T0 = 1_709_251_200_000


def subscription_lines(pki, customers, bundle="com.example.app"):
    """NDJSON lines of JWS for `customers` monthly subscriptions, in every form `export` reads (a JWS in the record
    field, a notification body with a nested transaction and renewal info, a Get All Subscription Statuses page with
    several of each, a `signedTransactions` page), with renewal infos that give each refined state (billing retry,
    grace period, expired by intent, auto-renew off), older and newer renewal infos of the same subscription, some
    in Sandbox, and a few receipts-free bad JWS. The payloads depend only on the arguments; the ECDSA signatures are randomized."""

    def transaction(tid, otid, start, env):
        return pki.sign({
            "transactionId": tid, "originalTransactionId": otid, "bundleId": bundle,
            "productId": f"{bundle}.monthly", "type": "Auto-Renewable Subscription", "quantity": 1,
            "purchaseDate": T0 + start * DAY, "originalPurchaseDate": T0, "expiresDate": T0 + (start + 30) * DAY,
            "signedDate": T0 + start * DAY + 60_000, "environment": env,
            "inAppOwnershipType": "PURCHASED", "storefront": "USA", "price": 4990, "currency": "USD",
        })

    def renewal(otid, signed, env, **fields):
        payload = {
            "originalTransactionId": otid, "productId": f"{bundle}.monthly",
            "autoRenewProductId": f"{bundle}.monthly", "autoRenewStatus": 1,
            "signedDate": T0 + signed * DAY, "environment": env,
        }
        payload.update(fields)
        return pki.sign(payload)

    lines = []
    page = []
    for c in range(customers):
        otid = str(100_000 + c)
        env = "Sandbox" if c % 5 == 4 else "Production"
        periods = 1 + (c // 6) % 3
        tids = [otid] + [str(200_000 + c * 10 + k) for k in range(1, periods)]
        kind = c % 6
        for k, tid in enumerate(tids):
            jws = transaction(tid, otid, 30 * k, env)
            if k == 1 and kind in (1, 2):
                page.append(jws)
            else:
                lines.append(json.dumps({"id": f"t{tid}", "receipt": jws}))
        end = 30 * periods
        # An old renewal info that says nothing, listed after the newer one below.
        old = renewal(otid, 5, env)
        if kind == 0:
            # Billing retry in the grace period, from a notification.
            n = renewal(otid, end + 1, env, isInBillingRetryPeriod=True, gracePeriodExpiresDate=T0 + (end + 16) * DAY)
            body = pki.sign({
                "notificationType": "DID_FAIL_TO_RENEW", "subtype": "GRACE_PERIOD", "signedDate": T0 + (end + 1) * DAY,
                "data": {"bundleId": bundle, "environment": env, "signedRenewalInfo": n,
                         "signedTransactionInfo": transaction(tids[-1], otid, 30 * (periods - 1), env)},
            })
            lines.append(json.dumps({"signedPayload": body}))
        elif kind == 1:
            # Billing retry without grace, in a statuses page.
            n = renewal(otid, end + 2, env, isInBillingRetryPeriod=True)
            lines.append(json.dumps({"bundleId": bundle, "environment": env, "data": [{"lastTransactions": [
                {"signedTransactionInfo": transaction(tids[0], otid, 0, env), "signedRenewalInfo": n}]}]}))
        elif kind == 2:
            # Expired, as a renewal info signed after the last expiry says.
            lines.append(json.dumps({"id": f"r{otid}", "receipt": renewal(
                otid, end + 3, env, autoRenewStatus=0, expirationIntent=1)}))
        elif kind == 3:
            # Auto-renew off while the last period runs.
            lines.append(json.dumps({"id": f"r{otid}", "receipt": renewal(otid, end - 10, env, autoRenewStatus=0)}))
        elif kind == 4:
            # Signed before the newest period began: it describes an earlier renewal.
            lines.append(json.dumps({"id": f"r{otid}", "receipt": renewal(
                otid, end - 40, env, isInBillingRetryPeriod=True)}))
        lines.append(json.dumps({"id": f"old{otid}", "receipt": old}))
        if c % 7 == 6:
            # Bad JWS: a broken signature, and text that is not a JWS.
            bad = renewal(otid, end, env)
            head, body, sig = bad.split(".")
            lines.append(json.dumps({"id": f"bad{otid}", "receipt": head + "." + body + "." + sig[::-1]}))
        if len(page) >= 4:
            lines.append(json.dumps({"signedTransactions": page, "bundleId": bundle}))
            page = []
    if page:
        lines.append(json.dumps({"signedTransactions": page, "bundleId": bundle}))
    return lines
