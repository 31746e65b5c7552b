/* files.h — the file layer: how files are opened, read whole and written.
 *
 * Loaders call these so that a file of the wrong kind is refused by saying
 * what it is not and what it looks like ("README.md: not a llama2.c
 * checkpoint or Hugging Face folder (a text file)", the kind from sniff.h)
 * instead of a complaint about a header field, and so that a FIFO or a
 * device is never opened for reading (that would block or never end):
 * every file the program reads is opened through file_open_regular (or its
 * wrappers here). This layer calls only libc and the error helper. Commands that
 * write call file_check_output before any work, so hours of training are
 * not lost to a missing directory, and write through FileAtomic, so an
 * output appears whole or not at all. Nothing here keeps state.
 */
#ifndef AHASCOPE_FILES_H
#define AHASCOPE_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"

typedef enum {
    FILE_MISSING,
    FILE_UNREADABLE,
    FILE_DIR,
    FILE_FIFO,
    FILE_DEVICE,
    FILE_SOCKET,
    FILE_EMPTY,
    FILE_TEXT,
    FILE_JSON,
    FILE_SAFETENSORS, /* safetensors that is not a router file (a model's weights) */
    FILE_ROUTERS,     /* safetensors holding AHA router tensors */
    FILE_SQLITE,
    FILE_CHECKPOINT,  /* llama2.c checkpoint whose header matches its size */
    FILE_TOKENIZER,   /* llama2.c tokenizer.bin */
    FILE_BINARY       /* none of the above */
} FileKind;

/* What stat alone tells of path: 0 with *k set to FILE_MISSING,
 * FILE_UNREADABLE, FILE_DIR, FILE_FIFO, FILE_SOCKET or FILE_DEVICE; or 1
 * for a regular file (its size in *size if size is not NULL), whose kind
 * only its contents tell (sniff.h). Nothing is opened. */
int file_stat_kind(const char *path, FileKind *k, uint64_t *size);

/* "a text file", "a FIFO", "a llama2.c checkpoint", ... */
const char *file_kind_name(FileKind k);

/* Refuse path as not being `expected`, saying what it is: "PATH: not
 * EXPECTED (KIND: pass it as --FLAG)", or with `detail` in the parentheses
 * when the kind says nothing more (FILE_BINARY). Returns -1. */
int file_not(Err *e, const char *path, const char *expected, FileKind k, const char *detail);

/* Open a regular file read-only without blocking on a FIFO. Returns the
 * descriptor, or -1 with e set: "PATH: cannot open NOUN: reason" when it
 * cannot be opened, file_not(expected) when it is not a regular file. */
int file_open_regular(const char *path, const char *noun, const char *expected, Err *e);

/* The directory a path is in ("." for a bare name). */
void file_parent(const char *path, char *out, size_t cap);

/* Open a regular file for reading as a stdio stream, through
 * file_open_regular (so a FIFO is refused, never waited on). */
FILE *file_fopen_regular(const char *path, const char *noun, const char *expected, Err *e);

/* The whole regular file at path in a malloc'd NUL-terminated buffer (its
 * length in *len), refusing a file over max bytes before allocating. An
 * empty file is refused as "PATH: empty NOUN". */
char *file_read_all(const char *path, const char *noun, const char *expected, size_t max, size_t *len, Err *e);

/* Whether path can be written (created or atomically replaced through a
 * temporary beside it): its directory exists and is writable, and path is
 * not a directory or a special file. Errors read "PATH: ACTION: reason",
 * ACTION defaulting to "cannot create". Returns 0 if it can. */
int file_check_output(const char *path, const char *action, Err *e);

/* A file being written: a fresh temporary beside path, renamed onto path
 * only when whole, so a crash or a full disk never leaves half a file and
 * a planted PATH.tmp symlink is never followed. */
typedef struct {
    FILE *f;          /* write here; NULL once committed or aborted */
    char path[1100];  /* the destination */
    char tmp[1200];   /* PATH.XXXXXX.tmp, created with O_EXCL|O_NOFOLLOW */
} FileAtomic;

/* Check path with file_check_output, then create the temporary exclusively
 * (a new name, never an existing file or symlink). Returns a->f, or NULL
 * with e naming path (never the temporary). */
FILE *file_atomic_open(FileAtomic *a, const char *path, Err *e);

/* Flush, fsync and close the temporary, then rename it onto path; on any
 * failure the temporary is removed and e says why. Returns 0 on success. */
int file_atomic_commit(FileAtomic *a, Err *e);

/* Close and remove the temporary (path is left as it was). Safe after a
 * commit or a failed open. */
void file_atomic_abort(FileAtomic *a);

#endif
