// zlib's inflate, for gzip-compressed input (ReceiptIO's GzipByteSource).
#include <zlib.h>
