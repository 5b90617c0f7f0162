// zstd.h's stable API only (its experimental section is not guaranteed to keep its meaning between versions of the
// shared library); zstd_errors.h names libzstd's error codes.
#include <zstd.h>
#include <zstd_errors.h>
