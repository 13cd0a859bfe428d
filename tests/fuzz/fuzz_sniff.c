/*-*** fuzz_sniff.c: libFuzzer target for the folder walk's sniffing ***/
/*
 * What a folder walk does with each file before any reader runs: the
 * input is written as the one file of a temporary folder, which vr_walk
 * walks; each entry is opened as vr_input (gzip, zstd with its skippable
 * frames, UTF-16 text as UTF-8), its head peeked, offered to
 * vr_reader_is_own_report, vr_reader_pick and vr_reader_looks_like, and
 * the rest read in reads of a size the input's first byte chooses.
 *
 * Invariants checked (abort on failure): the walk passes the file once,
 * as a file to read; a peek and the reads after it hand out the same
 * bytes; the offset counts every byte handed out; a picked reader comes
 * with a level above VR_SNIFF_NO, none with VR_SNIFF_NO; looks_like is
 * never NULL or empty; a plain input that starts with a UTF-16 byte order
 * mark comes out as valid UTF-8. At most 16 MiB is read (a compressed
 * input may expand far). Built by `make fuzz` with the library.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import/reader.h"
#include "input/input.h"
#include "input/walk.h"
#include "util/utf8.h"

#define HEAD 65536
#define MAX_READ (16u << 20)

typedef struct {
    const uint8_t *data;
    size_t size;
    int files;
} fuzz_ctx;

static int valid_utf8(const char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = vr_utf8_decode(s + i, len - i, &cp);
        if (n == 0)
            return 0;
        i += n;
    }
    return 1;
}

static void sniff_head(const char *head, size_t n)
{
    vr_sniff_level level = VR_SNIFF_SIGNATURE;
    const vr_reader *r = vr_reader_pick(head, n, &level);
    if ((r != NULL) != (level != VR_SNIFF_NO))
        abort();
    const char *what = vr_reader_looks_like(head, n);
    if (!what || !what[0])
        abort();
    (void)vr_reader_is_own_report(head, n);
}

/* Reads the rest after the peek; the start must be the peeked bytes. */
static void read_rest(vr_input *in, const char *head, size_t n, size_t chunk, int utf16)
{
    vr_error err = VR_ERROR_INIT;
    vr_buf all = VR_BUF_INIT;
    char *buf = malloc(chunk);
    if (!buf)
        return;
    ptrdiff_t got;
    while (all.len < MAX_READ && (got = vr_input_read(in, buf, chunk, &err)) > 0)
        vr_buf_append(&all, buf, (size_t)got);
    free(buf);
    if (all.len < n || (n > 0 && memcmp(all.data, head, n) != 0))
        abort(); /* the reads gave back other bytes than the peek */
    if (vr_input_offset(in) != all.len)
        abort();
    if (utf16 && all.len < MAX_READ && !valid_utf8(all.data, all.len))
        abort();
    vr_buf_free(&all);
}

static int on_entry(void *ud, const char *path, const char *skipped)
{
    fuzz_ctx *c = ud;
    if (skipped)
        abort(); /* a regular file in the folder is always one to read */
    c->files++;
    vr_error err = VR_ERROR_INIT;
    vr_input *in = vr_input_open(path, &err);
    if (!in)
        return 0;
    char *head = malloc(HEAD);
    ptrdiff_t n = head ? vr_input_peek(in, head, HEAD, &err) : -1;
    if (n >= 0) {
        sniff_head(head, (size_t)n);
        static const size_t chunks[] = {1, 3, 7, 4096, 1u << 20};
        size_t chunk = chunks[c->size ? c->data[0] % 5 : 0];
        int utf16 = vr_input_compression(in) == VR_COMPRESSION_NONE && c->size >= 2 &&
                    ((c->data[0] == 0xff && c->data[1] == 0xfe) ||
                     (c->data[0] == 0xfe && c->data[1] == 0xff));
        read_rest(in, head, (size_t)n, chunk, utf16);
    }
    free(head);
    vr_input_close(in);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char dir[] = "/tmp/fuzz_sniff.XXXXXX";
    if (!mkdtemp(dir))
        return 0;
    char path[sizeof dir + 16];
    snprintf(path, sizeof path, "%s/input", dir);
    FILE *f = fopen(path, "wb");
    int wrote = f && fwrite(data, 1, size, f) == size;
    if (f && fclose(f) != 0)
        wrote = 0;
    if (wrote) {
        fuzz_ctx c = {data, size, 0};
        vr_error err = VR_ERROR_INIT;
        if (vr_walk(dir, 0, on_entry, &c, &err) < 0 || c.files != 1)
            abort();
    }
    unlink(path);
    rmdir(dir);
    return 0;
}
