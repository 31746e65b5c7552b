/* sniff.c — what a file is, from stat and its first bytes (sniff.h). */
#include "sniff.h"

#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "model.h"

#define SNIFF_BYTES 4096

int sniff_tokenizer_bin(const unsigned char *b, size_t n, uint64_t size) {
    int32_t maxlen, len;
    float score;
    if (n < 4) return 0;
    memcpy(&maxlen, b, 4);
    if (maxlen <= 0 || maxlen > SNIFF_TOK_MAX_LEN) return 0;
    size_t at = 4;
    int records = 0;
    while (records < 8 && at + 8 <= n) {
        memcpy(&score, b + at, 4);
        memcpy(&len, b + at + 4, 4);
        if (!isfinite(score) || len < 0 || len > maxlen || at + 8 + (size_t)len > n) break;
        if (memchr(b + at + 8, 0, (size_t)len)) return 0;
        at += 8 + (size_t)len;
        records++;
    }
    return records == 8 || (records > 0 && at == size);
}

/* No NUL and no control byte but the usual whitespace (and ESC, for
 * coloured logs): what an editor would show as text. */
static int looks_text(const unsigned char *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if ((b[i] < 0x20 && !strchr("\t\n\r\f\v\033", b[i])) || b[i] == 0x7f) return 0;
    return 1;
}

/* safetensors: a little-endian u64 header length that fits the file, then
 * the JSON header's '{'. */
static int looks_safetensors(const unsigned char *b, size_t n, uint64_t size) {
    if (n < 9 || b[8] != '{') return 0;
    uint64_t len = 0;
    for (int i = 7; i >= 0; i--) len = len << 8 | b[i];
    return len >= 2 && len <= size - 8;
}

FileKind sniff_kind_bytes(const unsigned char *b, size_t n, uint64_t size) {
    if (size == 0) return FILE_EMPTY;
    if (model_sniff(b, n, size)) return FILE_CHECKPOINT;
    if (n >= 16 && !memcmp(b, "SQLite format 3", 16)) return FILE_SQLITE;
    if (looks_safetensors(b, n, size))
        return memmem(b, n, ".router.weight\"", 15) ? FILE_ROUTERS : FILE_SAFETENSORS;
    if (sniff_tokenizer_bin(b, n, size)) return FILE_TOKENIZER;
    if (!looks_text(b, n)) return FILE_BINARY;
    size_t i = 0;
    while (i < n && strchr(" \t\r\n", b[i])) i++;
    return i < n && (b[i] == '{' || b[i] == '[') ? FILE_JSON : FILE_TEXT;
}

FileKind sniff_kind(const char *path) {
    FileKind k;
    uint64_t size = 0;
    if (!file_stat_kind(path, &k, &size)) return k;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return FILE_UNREADABLE;
    unsigned char b[SNIFF_BYTES];
    ssize_t n = read(fd, b, sizeof b);
    close(fd);
    if (n < 0) return FILE_UNREADABLE;
    return sniff_kind_bytes(b, (size_t)n, size);
}

