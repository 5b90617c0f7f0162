"""Apple's App Store Server Library (Python) verifying signed transactions offline, one JWS per call, as its users
do: the peer receiptflow's JWS verifier is compared with.

    python3 scripts/peers/jws_apple.py JWS_FILE ROOT_DER BUNDLE_ID [--processes N] [--limit N]

JWS_FILE holds one compact JWS per line (`receiptflow-bench jws --write DIR` makes one). Online checks are off, so
certificates are judged at each payload's signedDate, as receiptflow does. Prints one JSON object: JWS verified
per second (wall clock, all processes) and CPU seconds per JWS. Needs `pip install app-store-server-library`.
"""
import json
import multiprocessing
import os
import sys
import time


def verify_slice(args):
    path, root_path, bundle_id, start, step, limit = args
    from appstoreserverlibrary.models.Environment import Environment
    from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier

    root = open(root_path, "rb").read()
    # Production needs an app id; signed transactions are not checked against it (notifications are).
    verifier = SignedDataVerifier([root], False, Environment.PRODUCTION, bundle_id, 1234567890)
    lines = [l.strip() for l in open(path) if l.strip()][:limit]
    ok = 0
    cpu0 = time.process_time()
    for jws in lines[start::step]:
        verifier.verify_and_decode_signed_transaction(jws)
        ok += 1
    return ok, time.process_time() - cpu0


def main():
    argv = sys.argv[1:]
    if len(argv) < 3:
        sys.exit(__doc__)
    path, root, bundle_id = argv[:3]
    processes = int(argv[argv.index("--processes") + 1]) if "--processes" in argv else os.cpu_count()
    limit = int(argv[argv.index("--limit") + 1]) if "--limit" in argv else 2000
    start = time.monotonic()
    with multiprocessing.Pool(processes) as pool:
        results = pool.map(verify_slice, [(path, root, bundle_id, k, processes, limit) for k in range(processes)])
    wall = time.monotonic() - start
    n = sum(r[0] for r in results)
    cpu = sum(r[1] for r in results)
    print(json.dumps({"jws": n, "processes": processes, "per_second": n / wall, "cpu_us_per_jws": cpu * 1e6 / n}))


if __name__ == "__main__":
    main()
