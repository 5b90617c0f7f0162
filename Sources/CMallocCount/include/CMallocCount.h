#ifndef RECEIPTFLOW_CMALLOCCOUNT_H
#define RECEIPTFLOW_CMALLOCCOUNT_H
#include <stdint.h>
/// Number of malloc/calloc/realloc/posix_memalign calls since process start (all threads).
uint64_t rf_malloc_count(void);
/// Returns freed heap memory to the system (glibc malloc_trim(0)).
void rf_malloc_trim(void);
#endif
