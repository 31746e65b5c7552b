/* sha256.h — SHA-256 of bytes and of files, written once for the whole
 * program: store/ names the model and router bytes of a run with it, app/hub.c
 * checks a download against the Hub's checksum while it arrives. Pure
 * computation over the caller's state; nothing global. */
#ifndef AHASCOPE_SHA256_H
#define AHASCOPE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

typedef struct {
    uint32_t h[8];
    uint64_t bytes;
    unsigned char block[64];
    size_t fill;
} Sha256;

/* Start a digest. */
void sha256_init(Sha256 *c);

/* Feed n more bytes; may be called any number of times. */
void sha256_update(Sha256 *c, const void *data, size_t n);

/* Finish the digest and write it as 64 lowercase hex digits plus NUL. */
void sha256_final(Sha256 *c, char out[65]);

/* Hex SHA-256 of a file's bytes into out[65]. Returns 0, or -1 if unreadable. */
int sha256_file(const char *path, char out[65], Err *e);

/* Hex SHA-256 of the bytes of several files read one after another (a
 * Hugging Face folder: config.json, then its safetensors files). */
int sha256_files(const char *const *paths, int n, char out[65], Err *e);

#endif
