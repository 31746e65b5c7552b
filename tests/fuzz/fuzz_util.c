/* fuzz_util.c — the temporary directory and the fixed vocabulary of fuzz.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

static char fuzz_dir[256];

/* Remove the directory and whatever the harness left in it (a database's
 * -wal and -shm files among them). */
static void fuzz_cleanup(void) {
    char cmd[300];
    if (!fuzz_dir[0]) return;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fuzz_dir);
    if (system(cmd) != 0) fprintf(stderr, "fuzz: could not remove %s\n", fuzz_dir);
}

const char *fuzz_path(const char *name) {
    static char path[512];
    if (!fuzz_dir[0]) {
        /* memory, not disk, by default: a write per input to /tmp on disk
         * made the file harnesses over ten times slower */
        const char *tmp = getenv("TMPDIR");
        if (!tmp || !*tmp) tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(fuzz_dir, sizeof fuzz_dir, "%s/ahascope-fuzz-XXXXXX", tmp);
        if (!mkdtemp(fuzz_dir)) { perror("fuzz: mkdtemp"); abort(); }
        atexit(fuzz_cleanup);
    }
    snprintf(path, sizeof path, "%s/%s", fuzz_dir, name);
    return path;
}

const char *fuzz_write(const char *name, const uint8_t *data, size_t n) {
    const char *path = fuzz_path(name);
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0) { perror(path); abort(); }
    return path;
}

/* Append one token record (score, length, bytes) at *at. */
static void put_token(uint8_t *buf, size_t *at, float score, const char *s) {
    int32_t len = (int32_t)strlen(s);
    memcpy(buf + *at, &score, 4);
    memcpy(buf + *at + 4, &len, 4);
    memcpy(buf + *at + 8, s, (size_t)len);
    *at += 8 + (size_t)len;
}

uint8_t *fuzz_tokenizer_bin(size_t *n) {
    /* merges chosen so greedy merging has ties, chains and multi-byte text */
    static const char *merges[] = {" ", "e", "t", "h", "th", "he", "the", " the", " t", "é", " é", "ab", "abab", "\xe2\x96\x81"};
    size_t n_merges = sizeof merges / sizeof *merges;
    uint8_t *buf = malloc(4 + 259 * 16 + n_merges * 24);
    if (!buf) abort();
    int32_t maxlen = 8;
    memcpy(buf, &maxlen, 4);
    size_t at = 4;
    put_token(buf, &at, 0, "<unk>");
    put_token(buf, &at, 0, "<s>");
    put_token(buf, &at, 0, "</s>");
    for (int b = 0; b < 256; b++) {
        char piece[8];
        snprintf(piece, sizeof piece, "<0x%02X>", b);
        put_token(buf, &at, 0, piece);
    }
    for (size_t i = 0; i < n_merges; i++) put_token(buf, &at, -(float)i, merges[i]);
    *n = at;
    return buf;
}
