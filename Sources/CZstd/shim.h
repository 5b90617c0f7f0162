// The buffer-less decompression API (ReceiptIO's in-place decoding) is in zstd.h's static-linking section; the
// shared libzstd exports it. zstd_errors.h names libzstd's error codes.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>
