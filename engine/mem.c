#include "mem.h"

#include <stdint.h>
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
