#include "input/input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "util/bghash.h"
#include "util/buf.h"
#include "util/hash.h"
#include "util/utf8.h"

#define RAW_CHUNK (256 * 1024)
#define UTF16_CHUNK (64 * 1024)
enum { UTF16_LE = 1, UTF16_BE = 2 };

struct vr_input {
    int fd;
    int owns_fd;
    char *path;
    int64_t raw_size;
    vr_compression compression;

    unsigned char *raw; /* compressed bytes not yet consumed */
    size_t raw_len, raw_pos;
    int raw_eof;
    uint64_t raw_offset; /* compressed bytes consumed by the decoder */
    uint64_t raw_read;   /* compressed bytes read from the fd */
    vr_hash hash;
    vr_hash data_hash;  /* decompressed bytes handed out (compressed inputs) */
    vr_bghash *content; /* decompressed bytes handed out (every input) */

    z_stream z;
    int z_ready, z_ended;
    ZSTD_DStream *zstd;
    size_t zstd_hint; /* 0 when the last frame ended cleanly */

    /* Text encoding, decided by the first two decompressed bytes: a
     * UTF-16 byte order mark (PowerShell's `>`) makes the rest UTF-16,
     * handed out as UTF-8 without the mark. */
    int text_checked;
    int utf16;             /* 0; UTF16_LE or UTF16_BE */
    unsigned char lead[2]; /* the two bytes when they were no mark */
    size_t lead_len, lead_pos;
    unsigned char carry[3]; /* a UTF-16 unit or pair cut by a read */
    size_t carry_len;
    vr_buf u8; /* transcoded bytes not yet handed out */
    size_t u8_pos;

    vr_buf pending; /* peeked decompressed bytes, served first */
    size_t pending_pos;
    uint64_t offset;
    int truncated;
};

static int fill_raw(vr_input *in, vr_error *err)
{
    if (in->raw_pos < in->raw_len || in->raw_eof)
        return 0;
    ssize_t n;
    do {
        n = read(in->fd, in->raw, RAW_CHUNK);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return vr_fail_code(err, VR_ERR_IO, "%s: read failed at byte %llu: %s", in->path,
                            (unsigned long long)in->raw_read, strerror(errno));
    in->raw_len = (size_t)n;
    in->raw_pos = 0;
    in->raw_eof = n == 0;
    in->raw_read += (uint64_t)n;
    vr_hash_update(&in->hash, in->raw, (size_t)n);
    return 0;
}

/* A zstd file may start with a skippable frame (magic 0x184D2A50 to
 * 0x184D2A5F, little-endian): pzstd writes one before every frame, and
 * zstd -dc reads past it, as the zstd decoder here does. */
static int zstd_magic(const unsigned char *p, size_t len)
{
    if (len < 4)
        return 0;
    int frame = p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd;
    int skippable = (p[0] & 0xf0) == 0x50 && p[1] == 0x2a && p[2] == 0x4d && p[3] == 0x18;
    return frame || skippable;
}

static void sniff(vr_input *in)
{
    const unsigned char *p = in->raw;
    if (in->raw_len >= 2 && p[0] == 0x1f && p[1] == 0x8b)
        in->compression = VR_COMPRESSION_GZIP;
    else if (zstd_magic(p, in->raw_len))
        in->compression = VR_COMPRESSION_ZSTD;
    else
        in->compression = VR_COMPRESSION_NONE;
}

static int start_decoder(vr_input *in, vr_error *err)
{
    if (in->compression == VR_COMPRESSION_GZIP) {
        memset(&in->z, 0, sizeof in->z);
        if (inflateInit2(&in->z, 15 + 16) != Z_OK)
            return vr_fail_code(err, VR_ERR_IO, "%s: cannot start the gzip decoder", in->path);
        in->z_ready = 1;
    } else if (in->compression == VR_COMPRESSION_ZSTD) {
        in->zstd = ZSTD_createDStream();
        if (!in->zstd || ZSTD_isError(ZSTD_initDStream(in->zstd)))
            return vr_fail_code(err, VR_ERR_IO, "%s: cannot start the zstd decoder", in->path);
    }
    return 0;
}

vr_input *vr_input_open(const char *path, vr_error *err)
{
    vr_input *in = vr_xcalloc(1, sizeof *in);
    int is_stdin = strcmp(path, "-") == 0;
    in->path = vr_xstrdup(is_stdin ? "<stdin>" : path);
    in->fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY);
    in->owns_fd = !is_stdin;
    in->raw_size = -1;
    vr_hash_init(&in->hash, 0);
    vr_hash_init(&in->data_hash, 0);
    in->content = vr_bghash_new();
    if (in->fd < 0) {
        vr_fail_code(err, VR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        goto fail;
    }
    struct stat st;
    if (fstat(in->fd, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            vr_fail_code(err, VR_ERR_IO, "%s: is a directory, expected a file", path);
            goto fail;
        }
        if (S_ISREG(st.st_mode))
            in->raw_size = (int64_t)st.st_size;
    }
    in->raw = vr_xmalloc(RAW_CHUNK);
    if (fill_raw(in, err) < 0)
        goto fail;
    sniff(in);
    if (start_decoder(in, err) < 0)
        goto fail;
    return in;
fail:
    vr_input_close(in);
    return NULL;
}

void vr_input_close(vr_input *in)
{
    if (!in)
        return;
    if (in->owns_fd && in->fd >= 0)
        close(in->fd);
    if (in->z_ready)
        inflateEnd(&in->z);
    ZSTD_freeDStream(in->zstd);
    vr_buf_free(&in->u8);
    vr_bghash_free(in->content);
    vr_buf_free(&in->pending);
    free(in->raw);
    free(in->path);
    free(in);
}

static ptrdiff_t read_plain(vr_input *in, unsigned char *dst, size_t cap, vr_error *err)
{
    if (fill_raw(in, err) < 0)
        return -1;
    size_t n = in->raw_len - in->raw_pos;
    if (n > cap)
        n = cap;
    memcpy(dst, in->raw + in->raw_pos, n);
    in->raw_pos += n;
    in->raw_offset += n;
    return (ptrdiff_t)n;
}

/* gzip files may hold several members back to back (cat a.gz b.gz). */
static int gzip_next_member(vr_input *in)
{
    if (in->raw_pos >= in->raw_len && in->raw_eof)
        return 0;
    /* Trailing bytes that do not start a member are ignored, as gzip does. */
    if (in->raw[in->raw_pos] != 0x1f)
        return 0;
    inflateReset(&in->z);
    in->z_ended = 0;
    return 1;
}

static ptrdiff_t read_gzip(vr_input *in, unsigned char *dst, size_t cap, vr_error *err)
{
    size_t produced = 0;
    while (produced == 0) {
        if (in->z_ended) {
            if (fill_raw(in, err) < 0)
                return -1;
            if (!gzip_next_member(in))
                return 0;
        }
        if (fill_raw(in, err) < 0)
            return -1;
        if (in->raw_pos >= in->raw_len && in->raw_eof) {
            in->truncated = 1;
            return 0;
        }
        in->z.next_in = in->raw + in->raw_pos;
        in->z.avail_in = (uInt)(in->raw_len - in->raw_pos);
        in->z.next_out = dst;
        in->z.avail_out = (uInt)(cap > UINT32_MAX ? UINT32_MAX : cap);
        int rc = inflate(&in->z, Z_NO_FLUSH);
        size_t used = (in->raw_len - in->raw_pos) - in->z.avail_in;
        in->raw_pos += used;
        in->raw_offset += used;
        produced = (size_t)(in->z.next_out - dst);
        if (rc == Z_STREAM_END) {
            in->z_ended = 1;
        } else if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_MEM_ERROR) {
            return vr_fail_code(err, VR_ERR_MALFORMED,
                                "%s: corrupt gzip data at compressed byte %llu: %s", in->path,
                                (unsigned long long)in->raw_offset,
                                in->z.msg ? in->z.msg : "invalid stream");
        }
    }
    return (ptrdiff_t)produced;
}

static ptrdiff_t read_zstd(vr_input *in, unsigned char *dst, size_t cap, vr_error *err)
{
    ZSTD_outBuffer out = {dst, cap, 0};
    while (out.pos == 0) {
        if (fill_raw(in, err) < 0)
            return -1;
        if (in->raw_pos >= in->raw_len && in->raw_eof) {
            if (in->zstd_hint != 0)
                in->truncated = 1;
            return 0;
        }
        ZSTD_inBuffer zin = {in->raw, in->raw_len, in->raw_pos};
        size_t rc = ZSTD_decompressStream(in->zstd, &out, &zin);
        in->raw_offset += zin.pos - in->raw_pos;
        in->raw_pos = zin.pos;
        if (ZSTD_isError(rc))
            return vr_fail_code(err, VR_ERR_MALFORMED,
                                "%s: corrupt zstd data at compressed byte %llu: %s", in->path,
                                (unsigned long long)in->raw_offset, ZSTD_getErrorName(rc));
        in->zstd_hint = rc;
    }
    return (ptrdiff_t)out.pos;
}

static ptrdiff_t decompress(vr_input *in, void *dst, size_t cap, vr_error *err)
{
    switch (in->compression) {
    case VR_COMPRESSION_GZIP:
        return read_gzip(in, dst, cap, err);
    case VR_COMPRESSION_ZSTD:
        return read_zstd(in, dst, cap, err);
    default:
        return read_plain(in, dst, cap, err);
    }
}

/*-*** UTF-16 text ***/

/* The first two decompressed bytes: a UTF-16 mark is dropped and sets
 * the encoding; anything else is handed out first, as it was. */
static int check_text(vr_input *in, vr_error *err)
{
    in->text_checked = 1;
    while (in->lead_len < 2) {
        ptrdiff_t n = decompress(in, in->lead + in->lead_len, 2 - in->lead_len, err);
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        in->lead_len += (size_t)n;
    }
    if (in->lead_len == 2 && in->lead[0] == 0xff && in->lead[1] == 0xfe)
        in->utf16 = UTF16_LE;
    else if (in->lead_len == 2 && in->lead[0] == 0xfe && in->lead[1] == 0xff)
        in->utf16 = UTF16_BE;
    if (in->utf16)
        in->lead_len = 0;
    return 0;
}

static unsigned utf16_unit(const vr_input *in, const unsigned char *p)
{
    return in->utf16 == UTF16_LE ? (unsigned)p[0] | (unsigned)p[1] << 8
                                 : (unsigned)p[0] << 8 | (unsigned)p[1];
}

static void put_code_point(vr_buf *out, uint32_t cp)
{
    char u[4];
    vr_buf_append(out, u, vr_utf8_encode(cp, u));
}

/* Transcodes the whole units and pairs of p[0, len) into in->u8; returns
 * the bytes used (a unit or pair cut at the end is left). A surrogate
 * without its other half becomes U+FFFD, as every decoder does. Written
 * in place (each unit is at most 3 bytes of UTF-8, a pair 4): a log is
 * mostly ASCII, one byte a unit. */
static size_t utf16_to_utf8(vr_input *in, const unsigned char *p, size_t len)
{
    vr_buf_reserve(&in->u8, len / 2 * 3 + 1);
    char *out = in->u8.data + in->u8.len;
    size_t i = 0;
    while (len - i >= 2) {
        unsigned u = utf16_unit(in, p + i);
        uint32_t cp = u;
        size_t used = 2;
        if (u >= 0xd800 && u <= 0xdbff) {
            if (len - i < 4)
                break;
            unsigned low = utf16_unit(in, p + i + 2);
            int paired = low >= 0xdc00 && low <= 0xdfff;
            cp = paired ? 0x10000 + ((uint32_t)(u - 0xd800) << 10) + (low - 0xdc00) : 0xfffd;
            used = paired ? 4 : 2;
        } else if (u >= 0xdc00 && u <= 0xdfff) {
            cp = 0xfffd;
        }
        if (cp < 0x80)
            *out++ = (char)cp;
        else
            out += vr_utf8_encode(cp, out);
        i += used;
    }
    in->u8.len = (size_t)(out - in->u8.data);
    in->u8.data[in->u8.len] = '\0';
    return i;
}

/* Refills in->u8 from the next decompressed bytes; 0 at the end. */
static ptrdiff_t utf16_refill(vr_input *in, vr_error *err)
{
    unsigned char raw[UTF16_CHUNK];
    vr_buf_clear(&in->u8);
    in->u8_pos = 0;
    while (in->u8.len == 0) {
        memcpy(raw, in->carry, in->carry_len);
        ptrdiff_t n = decompress(in, raw + in->carry_len, sizeof raw - in->carry_len, err);
        if (n < 0)
            return -1;
        if (n == 0) {
            if (in->carry_len) /* a unit cut at the end of the input */
                put_code_point(&in->u8, 0xfffd);
            in->carry_len = 0;
            break;
        }
        size_t total = in->carry_len + (size_t)n;
        size_t used = utf16_to_utf8(in, raw, total);
        in->carry_len = total - used;
        memcpy(in->carry, raw + used, in->carry_len);
    }
    return (ptrdiff_t)in->u8.len;
}

static ptrdiff_t read_utf16(vr_input *in, unsigned char *dst, size_t cap, vr_error *err)
{
    if (in->u8_pos == in->u8.len) {
        ptrdiff_t n = utf16_refill(in, err);
        if (n <= 0)
            return n;
    }
    size_t n = in->u8.len - in->u8_pos;
    if (n > cap)
        n = cap;
    memcpy(dst, in->u8.data + in->u8_pos, n);
    in->u8_pos += n;
    return (ptrdiff_t)n;
}

/* The decompressed bytes, UTF-16 text as UTF-8. */
static ptrdiff_t decode(vr_input *in, void *dst, size_t cap, vr_error *err)
{
    if (!in->text_checked && check_text(in, err) < 0)
        return -1;
    if (in->lead_pos < in->lead_len) {
        size_t n = in->lead_len - in->lead_pos;
        if (n > cap)
            n = cap;
        memcpy(dst, in->lead + in->lead_pos, n);
        in->lead_pos += n;
        return (ptrdiff_t)n;
    }
    return in->utf16 ? read_utf16(in, dst, cap, err) : decompress(in, dst, cap, err);
}

static ptrdiff_t read_unhashed(vr_input *in, void *dst, size_t cap, vr_error *err)
{
    if (cap == 0)
        return 0;
    size_t avail = in->pending.len - in->pending_pos;
    if (avail) {
        size_t n = avail < cap ? avail : cap;
        memcpy(dst, in->pending.data + in->pending_pos, n);
        in->pending_pos += n;
        if (in->pending_pos == in->pending.len)
            vr_buf_clear(&in->pending), in->pending_pos = 0;
        in->offset += n;
        return (ptrdiff_t)n;
    }
    ptrdiff_t n = decode(in, dst, cap, err);
    if (n > 0)
        in->offset += (uint64_t)n;
    return n;
}

/* Hashes what reads hand out, peeked bytes once (when they are read). A
 * plain input's bytes are its raw bytes, already in the XXH64; the
 * BLAKE2b is of what is handed out, whatever the compression. */
static ptrdiff_t hashed(vr_input *in, const void *dst, ptrdiff_t n)
{
    if (n > 0 && in->compression != VR_COMPRESSION_NONE)
        vr_hash_update(&in->data_hash, dst, (size_t)n);
    if (n > 0)
        vr_bghash_feed(in->content, dst, (size_t)n);
    return n;
}

ptrdiff_t vr_input_read(vr_input *in, void *dst, size_t cap, vr_error *err)
{
    return hashed(in, dst, read_unhashed(in, dst, cap, err));
}

ptrdiff_t vr_input_peek(vr_input *in, void *dst, size_t cap, vr_error *err)
{
    while (in->pending.len - in->pending_pos < cap) {
        unsigned char tmp[4096];
        size_t want = cap - (in->pending.len - in->pending_pos);
        ptrdiff_t n = decode(in, tmp, want < sizeof tmp ? want : sizeof tmp, err);
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        vr_buf_append(&in->pending, tmp, (size_t)n);
    }
    size_t avail = in->pending.len - in->pending_pos;
    size_t n = avail < cap ? avail : cap;
    if (n)
        memcpy(dst, in->pending.data + in->pending_pos, n);
    return (ptrdiff_t)n;
}

int vr_input_prehash(vr_input *in, uint64_t *digest, vr_error *err)
{
    if (in->raw_size < 0 || !in->owns_fd)
        return 1;
    int fd = open(in->path, O_RDONLY);
    if (fd < 0)
        return vr_fail_code(err, VR_ERR_IO, "%s: cannot reopen to hash: %s", in->path,
                            strerror(errno));
    vr_hash h;
    vr_hash_init(&h, 0);
    unsigned char *chunk = vr_xmalloc(RAW_CHUNK);
    ssize_t n;
    while ((n = read(fd, chunk, RAW_CHUNK)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free(chunk);
            close(fd);
            return vr_fail_code(err, VR_ERR_IO, "%s: read failed while hashing: %s", in->path,
                                strerror(e));
        }
        vr_hash_update(&h, chunk, (size_t)n);
    }
    free(chunk);
    close(fd);
    *digest = vr_hash_digest(&h);
    return 0;
}

const char *vr_input_path(const vr_input *in)
{
    return in->path;
}
vr_compression vr_input_compression(const vr_input *in)
{
    return in->compression;
}
uint64_t vr_input_raw_offset(const vr_input *in)
{
    return in->raw_offset;
}
uint64_t vr_input_offset(const vr_input *in)
{
    return in->offset;
}
int64_t vr_input_raw_size(const vr_input *in)
{
    return in->raw_size;
}
int vr_input_truncated(const vr_input *in)
{
    return in->truncated;
}
uint64_t vr_input_digest(const vr_input *in)
{
    return vr_hash_digest(&in->hash);
}

uint64_t vr_input_data_digest(const vr_input *in)
{
    return vr_hash_digest(in->compression == VR_COMPRESSION_NONE ? &in->hash : &in->data_hash);
}

void vr_input_content_digest(vr_input *in, char out[65])
{
    vr_bghash_hex(in->content, out);
}

const char *vr_compression_name(vr_compression c)
{
    switch (c) {
    case VR_COMPRESSION_GZIP:
        return "gzip";
    case VR_COMPRESSION_ZSTD:
        return "zstd";
    default:
        return "plain";
    }
}
