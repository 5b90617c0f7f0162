"""Apple's App Store Server Library (Python) verifying JWS offline, one JWS per call, as its users do: the peer
receiptflow's JWS export is compared with.

    python3 scripts/peers/jws_apple.py JWS_FILE ROOT_DER BUNDLE_ID [--app-apple-id N] [--processes N] [--limit N]

JWS_FILE holds one compact JWS per line: signed transactions, renewal infos and notifications, each verified with
the library's call for its kind (told from its payload's keys); `receiptflow-bench jws` makes one beside its corpus
and runs this script with `--peer`. Online checks are off, so certificates are judged at each payload's signedDate,
as receiptflow does. Prints one JSON object: JWS verified (and rejected), verified JWS per second (wall clock, all
processes) and CPU microseconds per verified JWS (every JWS's time, rejected ones included). Needs
`pip install app-store-server-library`.
"""
import base64
import json
import multiprocessing
import os
import sys
import time


def kind(jws):
    """notification, renewal or transaction, by the keys of the payload (transaction when it cannot be read)."""
    try:
        part = jws.split(".")[1]
        payload = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    except Exception:
        return "transaction"
    if "notificationType" in payload:
        return "notification"
    if "autoRenewStatus" in payload or "autoRenewProductId" in payload:
        return "renewal"
    return "transaction"


def verify_slice(args):
    path, root_path, bundle_id, app_apple_id, start, step, limit = args
    from appstoreserverlibrary.models.Environment import Environment
    from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier

    root = open(root_path, "rb").read()
    verifier = SignedDataVerifier([root], False, Environment.PRODUCTION, bundle_id, app_apple_id)
    calls = {
        "notification": verifier.verify_and_decode_notification,
        "renewal": verifier.verify_and_decode_renewal_info,
        "transaction": verifier.verify_and_decode_signed_transaction,
    }
    lines = [l.strip() for l in open(path) if l.strip()][:limit]
    mine = [(kind(jws), jws) for jws in lines[start::step]]
    ok = 0
    bad = 0
    cpu0 = time.process_time()
    for k, jws in mine:
        try:
            calls[k](jws)
            ok += 1
        except Exception:
            bad += 1
    return ok, bad, time.process_time() - cpu0


def main():
    argv = sys.argv[1:]
    if len(argv) < 3:
        sys.exit(__doc__)
    path, root, bundle_id = argv[:3]

    def option(name, default):
        return int(argv[argv.index(name) + 1]) if name in argv else default

    processes = option("--processes", os.cpu_count())
    limit = option("--limit", 2000)
    app_apple_id = option("--app-apple-id", 1234567890)
    args = [(path, root, bundle_id, app_apple_id, k, processes, limit) for k in range(processes)]
    with multiprocessing.Pool(processes) as pool:
        # Import the library in every worker before the clock starts.
        pool.map(verify_slice, [(a[0], a[1], a[2], a[3], 0, 1, 0) for a in args])
        start = time.monotonic()
        results = pool.map(verify_slice, args)
        wall = time.monotonic() - start
    ok = sum(r[0] for r in results)
    bad = sum(r[1] for r in results)
    cpu = sum(r[2] for r in results)
    print(json.dumps({
        "jws": ok + bad, "verified": ok, "rejected": bad, "processes": processes,
        "verified_per_second": ok / wall, "cpu_us_per_verified": cpu * 1e6 / max(ok, 1),
    }))


if __name__ == "__main__":
    main()
