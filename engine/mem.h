/* mem.h — large buffers a decode step streams and the program owns (the
 * weights of a random model, a model's bf16/f16 copy, bench's bandwidth
 * probe), placed on transparent huge pages.
 *
 * A decode step reads ~60 matrices in ~500 slices, asking for lines 4 KiB
 * ahead: on 4 KiB pages nearly every such request needs a page walk. On
 * 2 MiB pages `bench --shape 110M --dtype bf16` decoded 4% faster in bf16
 * and 8% in f32 (alternated runs), and the 2-thread streaming probe rose
 * too. Linux gives anonymous memory huge pages only when asked
 * (transparent_hugepage=madvise is Debian's default), so these buffers ask.
 * The KV cache stays on small pages: it is touched sparsely at first — on
 * 2 MiB pages a bf16 110M model at context 4096 made 36 MB more resident
 * after a 576-token run.
 *
 * A model file's weights are read into such a block too (mem_view_file):
 * a mapping of the file gets whatever pages the page cache happens to hold
 * (recent kernels keep files in folios of mixed sizes and map the 2 MiB
 * ones whole), so the same file decoded at different speeds from one
 * invocation to the next (engine/PERFORMANCE.md, "Slow invocations").
 */
#ifndef AHASCOPE_MEM_H
#define AHASCOPE_MEM_H

#include "err.h"
#include <stddef.h>

/* `bytes` of zeroed memory starting on a 2 MiB boundary, huge pages
 * requested (pages are still made on first touch); NULL when out of memory.
 * Release with mem_big_free only. */
void *mem_big_alloc(size_t bytes);

/* Release a mem_big_alloc block; NULL is ignored. */
void mem_big_free(void *p);

/* A whole file's bytes, read-only, as the weights loaders hold them. */
typedef struct {
    const void *base;
    size_t size;
    int copied; /* 1: a mem_big_alloc block; 0: a mapping of the file */
} MemView;

/* How mem_view_file places a file: by size (MEM_VIEW_AUTO), or as
 * $AHASCOPE_WEIGHTS=map|copy asks. */
typedef enum { MEM_VIEW_AUTO, MEM_VIEW_MAP, MEM_VIEW_COPY } MemViewMode;

/* The mode $AHASCOPE_WEIGHTS names (auto when unset or unknown). */
MemViewMode mem_view_mode(void);

/* Hold fd's first `size` bytes in *v: files of 64 MiB or more are read into
 * huge pages when memory allows (half the available memory at most), the
 * rest mapped. Returns 0, or -1 with errno set. fd may be closed after. */
int mem_view_file(MemView *v, int fd, size_t size, MemViewMode mode);

/* Open path as a regular file (file_open_regular's noun and expected: a
 * FIFO is refused, never waited on) of at least `min` bytes and view it
 * whole; *size is its length. 0, or -1 with e "PATH: file is N bytes, too
 * short for WHAT" and the like. What every parser of a mapped file starts
 * with. */
int mem_view_path(MemView *v, const char *path, const char *noun, const char *expected, size_t min,
                  const char *what, size_t *size, Err *e);

/* Release what mem_view_file made (safe on a zeroed view). */
void mem_view_close(MemView *v);

#endif
