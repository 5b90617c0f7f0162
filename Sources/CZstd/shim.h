// zstd_errors.h names libzstd's error codes. Only zstd.h's stable API is used: no ZSTD_STATIC_LINKING_ONLY, whose
// declarations are not guaranteed to keep their meaning between versions of the shared library.
#include <zstd.h>
#include <zstd_errors.h>
