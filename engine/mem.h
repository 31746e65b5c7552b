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
 * Left on small pages: files (the page cache maps 4 KiB pages) and the KV
 * cache, which is touched sparsely at first — on 2 MiB pages a bf16 110M
 * model at context 4096 made 36 MB more resident after a 576-token run.
 */
#ifndef AHASCOPE_MEM_H
#define AHASCOPE_MEM_H

#include <stddef.h>

/* `bytes` of zeroed memory starting on a 2 MiB boundary, huge pages
 * requested (pages are still made on first touch); NULL when out of memory.
 * Release with mem_big_free only. */
void *mem_big_alloc(size_t bytes);

/* Release a mem_big_alloc block; NULL is ignored. */
void mem_big_free(void *p);

#endif
