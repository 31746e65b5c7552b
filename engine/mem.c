/* mem.c — large owned buffers on transparent huge pages. */
#include "mem.h"
#include "files.h"

#include <errno.h>
#include <sys/stat.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)
#define SMALL_PAGE ((size_t)4096)

/* Kept just below the block, in the small page the block's start rounds
 * down to, so freeing needs no size from the caller. */
typedef struct {
    void *base;
    size_t len;
} BigHeader;

void *mem_big_alloc(size_t bytes) {
    if (bytes == 0) bytes = 1;
    size_t body = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    if (body < bytes || body > SIZE_MAX - 2 * HUGE_PAGE) return NULL;
    size_t span = body + HUGE_PAGE;
    char *map = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) return NULL;
    /* the first 2 MiB boundary with room for the header below it */
    uintptr_t start = ((uintptr_t)map + sizeof(BigHeader) + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    char *p = (char *)start, *keep = (char *)((start - sizeof(BigHeader)) & ~(uintptr_t)(SMALL_PAGE - 1));
    if (keep > map) munmap(map, (size_t)(keep - map));
    if (map + span > p + body) munmap(p + body, (size_t)(map + span - (p + body)));
    madvise(p, body, MADV_HUGEPAGE); /* a hint: a kernel without THP keeps small pages */
    BigHeader *h = (BigHeader *)(p - sizeof(BigHeader));
    h->base = keep;
    h->len = (size_t)(p + body - keep);
    return p;
}

void mem_big_free(void *p) {
    if (!p) return;
    const BigHeader *h = (const BigHeader *)((char *)p - sizeof(BigHeader));
    munmap(h->base, h->len);
}

#define VIEW_COPY_MIN ((size_t)64 << 20)
#define VIEW_CHUNK ((size_t)64 << 20)

MemViewMode mem_view_mode(void) {
    const char *m = getenv("AHASCOPE_WEIGHTS");
    if (m && !strcmp(m, "map")) return MEM_VIEW_MAP;
    if (m && !strcmp(m, "copy")) return MEM_VIEW_COPY;
    return MEM_VIEW_AUTO;
}

/* MemAvailable from /proc/meminfo in bytes, or 0 when unknown. */
static size_t mem_available(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
    fclose(f);
    return kb > SIZE_MAX / 1024 ? SIZE_MAX : (size_t)kb * 1024;
}

/* Read size bytes of fd from offset 0 into p; -1 with errno on a failure
 * or a file shorter than size. */
static int read_whole(int fd, char *p, size_t size) {
    size_t done = 0;
    while (done < size) {
        size_t want = size - done < VIEW_CHUNK ? size - done : VIEW_CHUNK;
        ssize_t got = pread(fd, p + done, want, (off_t)done);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return -1;
        if (got == 0) {
            errno = EIO;
            return -1;
        }
        done += (size_t)got;
    }
    return 0;
}

static int view_copy(MemView *v, int fd, size_t size) {
    char *p = mem_big_alloc(size);
    if (!p) return -1;
    if (read_whole(fd, p, size)) {
        int err = errno;
        mem_big_free(p);
        errno = err;
        return -1;
    }
    *v = (MemView){p, size, 1};
    return 0;
}

int mem_view_file(MemView *v, int fd, size_t size, MemViewMode mode) {
    memset(v, 0, sizeof *v);
    if (mode == MEM_VIEW_AUTO) {
        size_t avail = mem_available();
        mode = size >= VIEW_COPY_MIN && avail / 2 >= size ? MEM_VIEW_COPY : MEM_VIEW_MAP;
    }
    if (mode == MEM_VIEW_COPY && view_copy(v, fd, size) == 0) return 0;
    if (mode == MEM_VIEW_COPY && errno != ENOMEM) return -1;
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) return -1;
    *v = (MemView){map, size, 0};
    return 0;
}

void mem_view_close(MemView *v) {
    if (!v || !v->base) return;
    if (v->copied) mem_big_free((void *)v->base);
    else munmap((void *)v->base, v->size);
    memset(v, 0, sizeof *v);
}

int mem_view_path(MemView *v, const char *path, const char *noun, const char *expected, size_t min,
                  const char *what, size_t *size, Err *e) {
    int fd = file_open_regular(path, noun, expected, e);
    if (fd < 0) return -1;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int err = errno;
        close(fd);
        return err_set(e, "%s: %s", path, strerror(err));
    }
    *size = (size_t)sb.st_size;
    if (*size < min) {
        close(fd);
        return err_set(e, "%s: file is %zu bytes, too short for %s", path, *size, what);
    }
    int rc = mem_view_file(v, fd, *size, mem_view_mode());
    int view_errno = errno;
    close(fd);
    return rc ? err_set(e, "%s: cannot read: %s", path, strerror(view_errno)) : 0;
}
