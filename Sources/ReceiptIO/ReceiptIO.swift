// Inputs: files, stdin, zstd, NDJSON scanning, base64.
