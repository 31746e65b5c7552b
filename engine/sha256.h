/* sha256.h — SHA-256 of files, written once for the whole program: store/
 * names the model and router bytes of a run with it, app/hub.c checks a
 * download against the Hub's checksum. The digest is OpenSSL's libcrypto
 * (SHA-NI or AVX2 where the CPU has them): a 3 GB model hashes in about
 * 1.8 s there, against about 8 s for the portable C this replaced, and the
 * TUI and record wait for it before their first step. Nothing global. */
#ifndef AHASCOPE_SHA256_H
#define AHASCOPE_SHA256_H

#include "err.h"

/* Hex SHA-256 of a file's bytes into out[65]. Returns 0, or -1 if unreadable. */
int sha256_file(const char *path, char out[65], Err *e);

/* Hex SHA-256 of the bytes of several files read one after another (a
 * Hugging Face folder: config.json, then its safetensors files). */
int sha256_files(const char *const *paths, int n, char out[65], Err *e);

#endif
