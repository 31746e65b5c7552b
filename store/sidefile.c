/* sidefile.c — whether a `-wal` or hot `-journal` beside a file was written for it, before SQLite replays it.
 *
 * Whether a -wal or hot -journal lying beside a database was
 * written for it. SQLite replays either file on the next open without
 * asking, so one copied from another database would replace our rows; the
 * rules checked here, and what they cannot see, are in store/SCHEMA.md
 * ("What ahascope checks before it writes"). Calls nothing else in store/. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/internal.h"

#define WAL_HDR 32
#define WAL_FRAME_HDR 24
#define JOURNAL_MAGIC "\xd9\xd5\x05\xf9\x20\xa1\x63\xd7"

static uint32_t be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* What the database's own header says: page size and page count (0 when
 * the in-header count is not valid), its change counter, whether it is in
 * WAL mode, and the pages the file holds (the header's count, else its size). */
typedef struct {
    uint32_t page_size, n_pages, counter, pages;
    int wal;
} DbHead;

/* 0 with h filled, 1 when there is no database yet (nothing to protect). */
static int db_head(const char *path, DbHead *h) {
    unsigned char b[100];
    struct stat st;
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(b, 1, sizeof b, f) : 0;
    if (f) fclose(f);
    if (n < sizeof b || memcmp(b, "SQLite format 3", 16) != 0 || stat(path, &st) != 0) return 1;
    h->page_size = b[16] << 8 | b[17];
    if (h->page_size == 1) h->page_size = 65536;
    h->counter = be32(b + 24);
    h->n_pages = memcmp(b + 24, b + 92, 4) == 0 ? be32(b + 28) : 0;
    h->pages = h->n_pages ? h->n_pages : h->page_size ? (uint32_t)(st.st_size / h->page_size) : 0;
    h->wal = b[18] == 2 || b[19] == 2;
    return 0;
}

/* The file's page 1 as it is on disk (page_size bytes), or NULL. */
static unsigned char *db_page1(const char *path, uint32_t page_size) {
    unsigned char *p = malloc(page_size);
    FILE *f = p ? fopen(path, "rb") : NULL;
    int ok = f && fread(p, 1, page_size, f) == page_size;
    if (f) fclose(f);
    if (!ok) free(p), p = NULL;
    return p;
}

/* SQLite's WAL checksum over n bytes (n a multiple of 8), continuing s;
 * big-endian words when the header's magic says so. */
static void wal_sum(const unsigned char *p, size_t n, int big, uint32_t s[2]) {
    for (size_t i = 0; i < n; i += 8) {
        uint32_t x0, x1;
        if (big) x0 = be32(p + i), x1 = be32(p + i + 4);
        else x0 = le32(p + i), x1 = le32(p + i + 4);
        s[0] += x0 + s[1];
        s[1] += x1 + s[0];
    }
}

/* The commits SQLite would replay from a WAL: the size after each commit
 * and the pages of the first transaction. */
typedef struct {
    uint32_t *first_pages; /* page numbers written by the first transaction */
    size_t n_first, cap_first;
    uint32_t first_size, max_size;
    int n_commits;
    int saw_size;          /* the database's own page count is one of the commit sizes */
} WalCommits;

/* Walk the frames whose salts and checksums hold, as SQLite's recovery
 * does, stopping at the first that does not. Returns 0, or -1 on a read or
 * memory failure (then the caller cannot tell and refuses). */
static int wal_walk(FILE *f, const unsigned char *hdr, uint32_t db_pages, WalCommits *w) {
    uint32_t page = be32(hdr + 8), s[2] = {0, 0};
    int big = be32(hdr) & 1;
    wal_sum(hdr, 24, big, s);
    if (s[0] != be32(hdr + 24) || s[1] != be32(hdr + 28)) return 0; /* SQLite ignores the file */
    unsigned char *frame = malloc(WAL_FRAME_HDR + (size_t)page);
    if (!frame) return -1;
    size_t n_txn = 0;
    uint32_t *txn = NULL;
    int rc = 0;
    while (fread(frame, 1, WAL_FRAME_HDR + page, f) == WAL_FRAME_HDR + page) {
        if (memcmp(frame + 8, hdr + 16, 8) != 0) break;
        wal_sum(frame, 8, big, s);
        wal_sum(frame + WAL_FRAME_HDR, page, big, s);
        if (s[0] != be32(frame + 16) || s[1] != be32(frame + 20)) break;
        if (w->n_commits == 0) { /* the first transaction's pages, kept for the caller */
            uint32_t *grown = n_txn % 256 ? txn : realloc(txn, (n_txn + 256) * sizeof *txn);
            if (!grown) { rc = -1; break; }
            txn = grown, txn[n_txn++] = be32(frame);
        }
        uint32_t size = be32(frame + 4);
        if (!size) continue;
        if (w->n_commits++ == 0) w->first_size = size, w->first_pages = txn, w->n_first = n_txn, txn = NULL;
        if (size > w->max_size) w->max_size = size;
        if (size == db_pages) w->saw_size = 1;
    }
    free(txn);
    free(frame);
    return rc;
}

/* Whether the first transaction wrote every page from db_pages+1 to its
 * commit size: a database only grows by pages the transaction writes
 * (bar the page holding the lock byte at 1 GiB, which SQLite never uses). */
static int first_txn_grows(const WalCommits *w, uint32_t db_pages, uint32_t page_size) {
    uint32_t lock_page = (uint32_t)(0x40000000u / page_size) + 1, want = w->first_size - db_pages;
    if (w->first_size <= db_pages) return 1;
    if (want > w->n_first) return 0;
    unsigned char *seen = calloc(want, 1);
    if (!seen) return 0;
    for (size_t i = 0; i < w->n_first; i++)
        if (w->first_pages[i] > db_pages && w->first_pages[i] <= w->first_size) seen[w->first_pages[i] - db_pages - 1] = 1;
    int ok = 1;
    for (uint32_t i = 0; i < want && ok; i++) ok = seen[i] || db_pages + 1 + i == lock_page;
    free(seen);
    return ok;
}

/* The WAL rules: its page size is the database's, and the database is a
 * state the WAL could have started from or been checkpointed to. */
static int check_wal(const char *path, const char *wal, const DbHead *db, const char *verb, Err *e) {
    unsigned char hdr[WAL_HDR];
    FILE *f = fopen(wal, "rb");
    if (!f) return err_set(e, "%s: cannot read %s beside it, so cannot tell whether it belongs to it", path, wal);
    int whole = fread(hdr, 1, sizeof hdr, f) == sizeof hdr;
    uint32_t magic = be32(hdr), page = be32(hdr + 8);
    if (!whole || (magic & ~1u) != 0x377f0682u || be32(hdr + 4) != 3007000 || page < 512 || page > 65536 ||
        (page & (page - 1))) {
        fclose(f);
        return 0; /* not a WAL SQLite would replay */
    }
    if (page != db->page_size) {
        fclose(f);
        return err_set(e, "%s: refusing to %s: %s was written for another database (page size %u, not %u)", path,
                       verb, wal, page, db->page_size);
    }
    WalCommits w = {0};
    int rc = wal_walk(f, hdr, db->n_pages, &w);
    fclose(f);
    int foreign = rc == 0 && w.n_commits > 0 && db->n_pages > 0 && !w.saw_size &&
                  (db->n_pages > w.max_size || !first_txn_grows(&w, db->n_pages, page));
    free(w.first_pages);
    if (rc) return err_set(e, "%s: cannot read %s beside it, so cannot tell whether it belongs to it", path, wal);
    if (foreign)
        return err_set(e, "%s: refusing to %s: %s was written for another database (its pages do not continue "
                          "this file's %u)", path, verb, wal, db->n_pages);
    return 0;
}

/* What SQLite would do with a hot journal, walked as its playback walks
 * it: segments of records, each record kept only while its checksum holds
 * and its page is within the size the first header restores. */
typedef struct {
    uint32_t page_size, restores; /* the journal's page size and the page count it cuts the file to */
    unsigned char *page1;         /* the saved page 1 it would write back, or NULL */
    int n_page1, others;          /* copies of page 1 it replays; pages other than 1 it replays */
} JournalReplay;

/* One record at off: 1 if SQLite replays it (its page number and checksum
 * hold; *page filled), 0 where playback stops, -1 on a memory failure. */
static int journal_record(FILE *f, long off, uint32_t nonce, uint32_t lock_page, JournalReplay *j,
                          unsigned char *rec, uint32_t *page) {
    size_t n = 8 + (size_t)j->page_size;
    if (fseek(f, off, SEEK_SET) || fread(rec, 1, n, f) != n) return 0;
    uint32_t sum = nonce;
    for (long i = (long)j->page_size - 200; i > 0; i -= 200) sum += rec[4 + i];
    *page = be32(rec);
    if (*page == 0 || *page == lock_page || sum != be32(rec + 4 + j->page_size)) return 0;
    return 1;
}

/* Walk the records SQLite's rollback would write into the file (pager.c's
 * playback: a header per segment on a sector boundary, nRec records after
 * it, all the rest when nRec is 0xffffffff). Returns 0, or -1 when memory
 * runs out (the caller cannot tell, and refuses). */
static int journal_walk(FILE *f, long size, const unsigned char *h, JournalReplay *j) {
    uint32_t sector = be32(h + 20), nonce = be32(h + 12), n_rec = be32(h + 8);
    uint32_t lock_page = (uint32_t)(0x40000000u / j->page_size) + 1;
    unsigned char *rec = malloc(8 + (size_t)j->page_size);
    if (!rec) return -1;
    long off = (long)sector, step = 8 + (long)j->page_size;
    for (int more = 1; more;) {
        uint32_t n = n_rec == 0xffffffffu ? (uint32_t)((size - (long)sector) / step) : n_rec, page;
        for (uint32_t u = 0; more && u < n; u++, off += step) {
            if (!(more = journal_record(f, off, nonce, lock_page, j, rec, &page))) break;
            if (page > j->restores) continue; /* SQLite skips pages past the size it restores */
            if (page != 1) { j->others = 1; continue; }
            if (!j->page1 && !(j->page1 = malloc(j->page_size))) { free(rec); return -1; }
            memcpy(j->page1, rec + 4, j->page_size), j->n_page1++;
        }
        off = (off + (long)sector - 1) / (long)sector * (long)sector; /* the next header */
        unsigned char next[16];
        more = more && off + (long)sector <= size && !fseek(f, off, SEEK_SET) && fread(next, 1, 16, f) == 16 &&
               !memcmp(next, JOURNAL_MAGIC, 8);
        if (more) n_rec = be32(next + 8), nonce = be32(next + 12), off += (long)sector;
    }
    free(rec);
    return 0;
}

/* Whether two copies of page 1 differ only where switching the journal
 * mode writes: the format versions (bytes 18-19), the change counter
 * (24-27) and the two fields that follow it on every commit (92-99). */
static int only_mode_switch(const unsigned char *a, const unsigned char *b, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (a[i] != b[i] && i != 18 && i != 19 && !(i >= 24 && i < 28) && !(i >= 92 && i < 100)) return 0;
    return 1;
}

/* Why the replay j would not be this file's own rollback, or NULL. The
 * rules and why they prove it are in store/SCHEMA.md ("What ahascope
 * checks before it writes"). */
static const char *journal_foreign(const JournalReplay *j, const DbHead *db, const unsigned char *page1, char *why,
                                   size_t cap) {
    if (j->page_size != db->page_size)
        return snprintf(why, cap, "page size %u, not %u", j->page_size, db->page_size), why;
    if (j->restores == 0 && db->pages <= 1) return NULL; /* a file cut off while created: it holds no table */
    if (j->restores != db->pages)
        return snprintf(why, cap, "it would %s the file from %u pages to %u", j->restores < db->pages ? "cut" : "grow",
                        db->pages, j->restores), why;
    int wal = db->wal || (j->page1 && (j->page1[18] == 2 || j->page1[19] == 2));
    if (wal && (j->others || j->n_page1 != 1 || !page1 || !only_mode_switch(j->page1, page1, j->page_size)))
        return snprintf(why, cap, "it would rewrite a WAL-mode file, whose own journal only switches its mode"), why;
    if (j->page1 && !wal) {
        uint32_t c = be32(j->page1 + 24);
        if (c != db->counter && c + 1 != db->counter) return snprintf(why, cap, "its change counter does not match"), why;
    }
    return NULL;
}

/* Whether another process holds the database's RESERVED lock (the byte
 * after SQLite's pending byte): its journal is then a live transaction's,
 * which SQLite never replays (a writer creating the file has one). */
static int journal_live(const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0x40000001, .l_len = 1};
    int live = fcntl(fd, F_GETLK, &lk) == 0 && lk.l_type != F_UNLCK;
    close(fd);
    return live;
}

/* The hot journal rules (journal_foreign); verb says what was refused. */
static int check_journal(const char *path, const char *jrnl, const DbHead *db, const char *verb, Err *e) {
    unsigned char h[28];
    FILE *f = fopen(jrnl, "rb");
    if (!f) return err_set(e, "%s: cannot read %s beside it, so cannot tell whether it belongs to it", path, jrnl);
    int whole = fread(h, 1, sizeof h, f) == sizeof h;
    if (!whole || memcmp(h, JOURNAL_MAGIC, 8) != 0 || journal_live(path)) { fclose(f); return 0; } /* not hot */
    uint32_t sector = be32(h + 20), page = be32(h + 24);
    JournalReplay j = {.page_size = page, .restores = be32(h + 16)};
    int sane = sector >= 32 && sector <= 65536 && !(sector & (sector - 1)) && page >= 512 && page <= 65536 &&
               !(page & (page - 1));
    long size = sane && !fseek(f, 0, SEEK_END) ? ftell(f) : -1;
    int rc = size > 0 && page == db->page_size ? journal_walk(f, size, h, &j) : 0;
    fclose(f);
    unsigned char *page1 = rc == 0 && (db->wal || j.page1) ? db_page1(path, db->page_size) : NULL;
    char why[160];
    const char *foreign = rc ? "it could not be read whole" : !sane ? "its header is not one SQLite replays"
                                                                  : journal_foreign(&j, db, page1, why, sizeof why);
    free(page1);
    free(j.page1);
    if (!foreign) return 0;
    return err_set(e, "%s: refusing to %s: %s was written for another database (%s): sqlite3 would replay it and "
                      "damage the file; move it aside unless another program was writing the file", path, verb, jrnl,
                   foreign);
}

int store_sidefiles_check(const char *path, const char *verb, Err *e) {
    char side[1100];
    struct stat st;
    DbHead db;
    if (db_head(path, &db)) return 0;
    snprintf(side, sizeof side, "%s-wal", path);
    if (stat(side, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && check_wal(path, side, &db, verb, e)) return -1;
    snprintf(side, sizeof side, "%s-journal", path);
    if (stat(side, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && check_journal(path, side, &db, verb, e)) return -1;
    return 0;
}
