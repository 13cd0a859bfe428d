/*-*** fuzz_joblog.c: libFuzzer target for the job-log scanner ***/
/*
 * The input is a log, fed to the scanner (src/scan/joblog_scan.c) twice:
 * whole, and in pieces whose sizes the input's first bytes choose. Both
 * runs must find the same errors and boxes (the scanner's window hides
 * how the log arrives); every error must be sane: its lines numbered from
 * 1 and in order, its context before it, its message bounded, its figures
 * and processes non-negative; a profiler table's rows are read by
 * proftable.c, their names within the box; a line for the memory print
 * matcher comes numbered, with the lines just above it. Crashes, sanitizer reports and leaks fail.
 *
 * Built by `make fuzz` (clang) with joblog_scan.c and its utilities.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scan/joblog_scan.h"
#include "scan/proftable.h"
#include "util/hash.h"

typedef struct {
    vr_hash h;
    uint64_t ooms, blocks, texts;
} seen;

static int on_oom(void *ud, const vr_oom *o, const vr_log_line *lines, size_t n, vr_error *err)
{
    seen *s = ud;
    (void)err;
    if (o->line == 0 || o->last_line < o->line || o->message_len > VR_OOM_MESSAGE_MAX ||
        o->nprocess > VR_OOM_MAX_PROCESSES || n == 0)
        abort();
    for (size_t k = 0; k < n; k++) {
        if (k > 0 && lines[k].number <= lines[k - 1].number)
            abort(); /* in order, each once */
        if (lines[k].number > o->last_line || lines[k].len > 4096 * 2)
            abort();
    }
    for (int f = 0; f < VR_OOM_FIGURES; f++)
        if (((o->has >> f) & 1u) && o->figure[f] < 0)
            abort();
    for (size_t k = 0; k < o->nprocess; k++)
        if (o->process[k].used_bytes < 0)
            abort();
    vr_hash_update(&s->h, &o->line, sizeof o->line);
    vr_hash_update(&s->h, o->message, o->message_len);
    vr_hash_update(&s->h, o->figure, sizeof o->figure);
    s->ooms++;
    return 0;
}

/* A profiler table's ops: names inside the box's text, hashed. */
static const vr_log_line *table_text;

static int on_table_op(void *ud, const vr_proftable_op *op, vr_error *err)
{
    seen *s = ud;
    (void)err;
    if (op->name < table_text->text ||
        op->name + op->name_len > table_text->text + table_text->len)
        abort();
    vr_hash_update(&s->h, op->name, op->name_len);
    vr_hash_update(&s->h, op->mem, sizeof op->mem);
    return 0;
}

static int read_table(seen *s, const vr_log_line *first, int cut, vr_error *err)
{
    static const vr_proftable_sink sink = {NULL, on_table_op, NULL, vr_joblog_rank_prefix_length};
    vr_proftable_stats st = {0};
    table_text = first;
    return vr_proftable_read(first->text, first->len, cut, &sink, s, &st, err);
}

static int on_block(void *ud, const vr_log_box *box, vr_error *err)
{
    seen *s = ud;
    const vr_log_line *first = box->first, *last = box->last;
    (void)err;
    if (box->above && memchr(box->above, '\n', box->above_len))
        abort();
    if (first->number == 0 || last->number < first->number)
        abort();
    vr_hash_update(&s->h, &first->number, sizeof first->number);
    vr_hash_update(&s->h, &last->number, sizeof last->number);
    s->blocks++;
    return strcmp(first->role, "profiler_table") == 0 ? read_table(s, first, box->cut, err) : 0;
}

/* A line for the memory print matcher: numbered, the lines before it
 * the ones just above it, nearest first. */
static int on_text(void *ud, const vr_log_line *line, int64_t rank, const vr_log_line *before,
                   size_t nbefore, vr_error *err)
{
    seen *s = ud;
    (void)err;
    (void)rank;
    if (line->number == 0 || nbefore > VR_JOBLOG_AROUND || memchr(line->text, '\n', line->len))
        abort();
    for (size_t k = 0; k < nbefore; k++)
        if (before[k].number + 1 + k != line->number)
            abort();
    vr_hash_update(&s->h, &line->number, sizeof line->number);
    vr_hash_update(&s->h, line->text, line->len);
    s->texts++;
    return 0;
}

static uint64_t scan(const uint8_t *data, size_t size, const uint8_t *cuts, size_t ncuts, seen *s)
{
    static const vr_joblog_sink sink = {on_oom, on_block, on_text};
    vr_error err;
    memset(s, 0, sizeof *s);
    vr_hash_init(&s->h, 0);
    vr_joblog_scan *sc = vr_joblog_scan_new(&sink, s);
    size_t at = 0, k = 0;
    while (at < size) {
        size_t n = ncuts ? (size_t)cuts[k++ % ncuts] * 37 + 1 : size;
        if (n > size - at)
            n = size - at;
        if (vr_joblog_scan_feed(sc, (const char *)data + at, n, &err) < 0)
            abort(); /* the sink never fails here */
        at += n;
    }
    if (vr_joblog_scan_finish(sc, &err) < 0)
        abort();
    const vr_joblog_stats *st = vr_joblog_scan_stats(sc);
    if (st->ooms != s->ooms || st->blocks != s->blocks || st->texts != s->texts)
        abort();
    uint64_t lines = st->lines;
    vr_joblog_scan_free(sc);
    vr_hash_update(&s->h, &lines, sizeof lines);
    return vr_hash_digest(&s->h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    seen a, b;
    size_t ncuts = size > 4 ? 4 : 0;
    uint64_t whole = scan(data, size, NULL, 0, &a);
    uint64_t pieces = scan(data, size, data, ncuts, &b);
    if (whole != pieces)
        abort();
    return 0;
}
