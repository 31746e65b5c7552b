/* files.c — the file layer: regular files opened and read whole, outputs written atomically. */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

/* The kind of a file that is not regular, from its mode. */
static FileKind special_kind(mode_t mode) {
    if (S_ISDIR(mode)) return FILE_DIR;
    if (S_ISFIFO(mode)) return FILE_FIFO;
    if (S_ISSOCK(mode)) return FILE_SOCKET;
    return FILE_DEVICE;
}

int file_stat_kind(const char *path, FileKind *k, uint64_t *size) {
    struct stat st;
    if (stat(path, &st) != 0) *k = errno == EACCES ? FILE_UNREADABLE : FILE_MISSING;
    else if (!S_ISREG(st.st_mode)) *k = special_kind(st.st_mode);
    else {
        if (size) *size = (uint64_t)st.st_size;
        return 1;
    }
    return 0;
}

const char *file_kind_name(FileKind k) {
    static const char *const names[] = {
        [FILE_MISSING] = "no such file",          [FILE_UNREADABLE] = "an unreadable file",
        [FILE_DIR] = "a directory",               [FILE_FIFO] = "a FIFO",
        [FILE_DEVICE] = "a device",               [FILE_SOCKET] = "a socket",
        [FILE_EMPTY] = "an empty file",           [FILE_TEXT] = "a text file",
        [FILE_JSON] = "a JSON file",              [FILE_SAFETENSORS] = "a safetensors file of weights",
        [FILE_ROUTERS] = "a router file",         [FILE_SQLITE] = "an SQLite database",
        [FILE_CHECKPOINT] = "a llama2.c checkpoint", [FILE_TOKENIZER] = "a llama2.c tokenizer",
        [FILE_BINARY] = "a binary file",
    };
    return k >= 0 && k <= FILE_BINARY ? names[k] : "?";
}

/* Where a file of this kind does belong, if anywhere. */
static const char *kind_hint(FileKind k) {
    switch (k) {
    case FILE_CHECKPOINT: return "it goes with --model";
    case FILE_TOKENIZER: return "it goes with --tokenizer";
    case FILE_ROUTERS: return "it goes with --routers";
    case FILE_SQLITE: return "it goes with --db";
    case FILE_SAFETENSORS: return "--model takes the folder that holds it and config.json";
    default: return NULL;
    }
}

int file_not(Err *e, const char *path, const char *expected, FileKind k, const char *detail) {
    if (!e) return -1;
    char d[sizeof e->msg];
    size_t plen = strlen(path);
    if (detail && !strncmp(detail, path, plen) && !strncmp(detail + plen, ": ", 2)) detail += plen + 2;
    const char *hint = kind_hint(k);
    if (k == FILE_BINARY && detail && *detail) snprintf(d, sizeof d, "%s", detail);
    else if (hint) snprintf(d, sizeof d, "%s: %s", file_kind_name(k), hint);
    else snprintf(d, sizeof d, "%s", file_kind_name(k));
    return err_set(e, "%s: not %s (%s)", path, expected, d);
}

int file_open_regular(const char *path, const char *noun, const char *expected, Err *e) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        err_set(e, "%s: cannot open %s: %s", path, noun, strerror(errno));
        return -1;
    }
    struct stat st;
    int known = fstat(fd, &st) == 0;
    if (!known || !S_ISREG(st.st_mode)) {
        close(fd);
        FileKind k = FILE_UNREADABLE;
        if (known) k = special_kind(st.st_mode); /* what was opened, not what the path holds now */
        else if (file_stat_kind(path, &k, NULL)) k = FILE_UNREADABLE;
        file_not(e, path, expected, k, NULL);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL); /* a regular file ignores O_NONBLOCK; clear it all the same */
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

void file_parent(const char *path, char *out, size_t cap) {
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(out, cap, ".");
    else if (slash == path) snprintf(out, cap, "/");
    else snprintf(out, cap, "%.*s", (int)(slash - path), path);
}

/* Why a directory cannot take a new file ("PATH: ACTION: ..."); 0 if it can. */
static int dir_refuses(const char *path, const char *action, const char *dir, Err *e) {
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) return err_set(e, "%s: %s: no such directory %s", path, action, dir);
        if (errno == EACCES) return err_set(e, "%s: %s: permission denied (cannot search %s)", path, action, dir);
        return err_set(e, "%s: %s: %s (%s)", path, action, strerror(errno), dir);
    }
    if (!S_ISDIR(st.st_mode)) return err_set(e, "%s: %s: %s is not a directory", path, action, dir);
    if (access(dir, W_OK | X_OK) == 0) return 0;
    if (errno == EACCES) return err_set(e, "%s: %s: permission denied (cannot write in %s)", path, action, dir);
    return err_set(e, "%s: %s: %s (%s)", path, action, strerror(errno), dir);
}

int file_check_output(const char *path, const char *action, Err *e) {
    if (!action) action = "cannot create";
    if (!path || !*path) return err_set(e, "no output file given");
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return err_set(e, "%s: %s: it is %s, not a regular file", path, action, file_kind_name(special_kind(st.st_mode)));
    char dir[1024];
    file_parent(path, dir, sizeof dir);
    return dir_refuses(path, action, dir, e);
}

FILE *file_fopen_regular(const char *path, const char *noun, const char *expected, Err *e) {
    int fd = file_open_regular(path, noun, expected, e);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "rb");
    if (fd >= 0 && !f) {
        err_set(e, "%s: cannot open %s: %s", path, noun, strerror(errno));
        close(fd);
    }
    return f;
}

/* Read exactly n bytes from fd, retrying short reads. */
static int read_exact(int fd, char *buf, size_t n) {
    while (n > 0) {
        ssize_t k = read(fd, buf, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        buf += k, n -= (size_t)k;
    }
    return 0;
}

char *file_read_all(const char *path, const char *noun, const char *expected, size_t max, size_t *len, Err *e) {
    int fd = file_open_regular(path, noun, expected, e);
    if (fd < 0) return NULL;
    struct stat st;
    char *buf = NULL;
    if (fstat(fd, &st) != 0) err_set(e, "%s: cannot read %s: %s", path, noun, strerror(errno));
    else if (st.st_size == 0) err_set(e, "%s: empty %s", path, noun);
    else if ((uint64_t)st.st_size > max)
        err_set(e, "%s: %s of %lld bytes is over the %zu-byte limit", path, noun, (long long)st.st_size, max);
    else if (!(buf = malloc((size_t)st.st_size + 1))) err_set(e, "%s: out of memory reading %s", path, noun);
    else if (read_exact(fd, buf, (size_t)st.st_size) != 0) {
        err_set(e, "%s: read error in %s", path, noun);
        free(buf);
        buf = NULL;
    }
    close(fd);
    if (buf) buf[st.st_size] = 0, *len = (size_t)st.st_size;
    return buf;
}

/* A fresh temporary name beside path; attempt varies it when one exists.
 * Unpredictable enough that nobody plants a file there in advance, and
 * O_EXCL refuses it if they do. */
static void atomic_name(char *out, size_t cap, const char *path, unsigned attempt) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid() << 40;
    x += (attempt + 1) * 0x9E3779B97F4A7C15ull;
    x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ull, x ^= x >> 29;
    snprintf(out, cap, "%s.%06llx.tmp", path, (unsigned long long)(x & 0xffffff));
}

FILE *file_atomic_open(FileAtomic *a, const char *path, Err *e) {
    memset(a, 0, sizeof *a);
    if (file_check_output(path, NULL, e) != 0) return NULL;
    if (strlen(path) + 12 >= sizeof a->path) {
        err_set(e, "%s: path too long", path);
        return NULL;
    }
    snprintf(a->path, sizeof a->path, "%s", path);
    int fd = -1;
    for (unsigned i = 0; fd < 0 && i < 100; i++) {
        atomic_name(a->tmp, sizeof a->tmp, path, i);
        fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd >= 0 && !(a->f = fdopen(fd, "wb"))) {
        close(fd);
        unlink(a->tmp);
    }
    if (!a->f) err_set(e, "%s: cannot create: %s", path, strerror(errno));
    return a->f;
}

int file_atomic_commit(FileAtomic *a, Err *e) {
    if (!a->f) return err_set(e, "%s: not open for writing", a->path);
    int ok = fflush(a->f) == 0 && !ferror(a->f) && fsync(fileno(a->f)) == 0;
    int err = ok ? 0 : errno;
    if (fclose(a->f) != 0 && ok) ok = 0, err = errno;
    a->f = NULL;
    if (ok && rename(a->tmp, a->path) == 0) return 0;
    if (ok) err = errno;
    unlink(a->tmp);
    return err_set(e, "%s: write failed: %s", a->path, strerror(err ? err : EIO));
}

void file_atomic_abort(FileAtomic *a) {
    if (!a->f) return;
    fclose(a->f);
    a->f = NULL;
    unlink(a->tmp);
}
