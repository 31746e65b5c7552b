/* sha256.c — SHA-256 of bytes and files: run provenance, and `pull`'s check of each download.
 *
 * SHA-256 of files through OpenSSL's EVP interface: a run names
 * the exact model and router bytes it was produced with (store/), and a
 * download is checked against the Hub's checksum (app/hub.c). */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/files.h"
#include "engine/sha256.h"

/* Feed one file to ctx; 0, or -1 with e set. */
static int digest_file(EVP_MD_CTX *ctx, const char *path, unsigned char *buf, size_t cap, Err *e) {
    FILE *f = file_fopen_regular(path, "file", "a regular file", e);
    if (!f) return -1;
    size_t k;
    int ok = 1;
    while (ok && (k = fread(buf, 1, cap, f)) > 0) ok = EVP_DigestUpdate(ctx, buf, k) == 1;
    int bad = ferror(f);
    fclose(f);
    if (bad) return err_set(e, "%s: read error", path);
    return ok ? 0 : err_set(e, "%s: SHA-256 failed (libcrypto)", path);
}

int sha256_files(const char *const *paths, int n, char out[65], Err *e) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char *chunk = malloc(1 << 20), md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    int rc = ctx && chunk && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 ? 0
                                                                             : err_set(e, "SHA-256: out of memory");
    for (int i = 0; i < n && rc == 0; i++) rc = digest_file(ctx, paths[i], chunk, 1 << 20, e);
    if (rc == 0 && (EVP_DigestFinal_ex(ctx, md, &len) != 1 || len != 32)) rc = err_set(e, "SHA-256 failed (libcrypto)");
    for (unsigned i = 0; rc == 0 && i < len; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
    EVP_MD_CTX_free(ctx);
    free(chunk);
    return rc;
}

int sha256_file(const char *path, char out[65], Err *e) { return sha256_files(&path, 1, out, e); }
