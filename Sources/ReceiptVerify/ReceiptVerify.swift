// The verifier: OpenSSL glue, chain cache and policies.
