/* The job-log scanner (joblog_scan.h): which lines are out-of-memory
 * errors, what their figures are, and where embedded boxes are. Every
 * wording is data: the markers that start an error, the forms that name
 * its wording, the phrases around each figure, the units, the rank
 * prefixes and the timestamp shapes are tables below
 * (docs/formats/job-log-oom.md).
 *
 * How the log is passed over: the scanner keeps a window of the log
 * (HISTORY bytes before the scan position, LOOKAHEAD after it) and looks
 * for a few needles with memmem over the whole window, never line by
 * line. Only a line holding a needle is cleaned (colours, HTML escapes)
 * and matched against the tables; newlines are counted with memchr for
 * the line numbers.
 *
 * One message, several copies: every occurrence on its own line is its
 * own error (each rank prints it; the same job may fail twice). A message
 * repeated, for the same rank, after "During handling of the above
 * exception" or "The above exception was the direct cause" (a chained
 * traceback that prints it again) is one error, given once and counted
 * in stats.repeats. The bare hint ("If reserved but unallocated memory is
 * large ...") on a line of its own right after a message is part of it. */
#include "scan/joblog_scan.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/tz.h"
#include "scan/proftable.h"
#include "scan/liboom.h"

#define HISTORY (256u << 10)
#define LOOKAHEAD (256u << 10)
#define WINDOW (4u << 20)
#define LINE_MAX_KEPT (64u << 10) /* a candidate line longer than this is cut */
#define JOIN_MAX 12               /* lines a re-wrapped message may span */
#define BLOCK_MAX_LINES 400
#define BLOCK_TEXT_MAX (64u << 10)
#define FRAME_MAX 512

/*-*** the tables ***/

/* What the window is searched for: every marker below holds one of these
 * (so a line without any cannot be an error or a box). "emory" covers
 * "out of memory", "OutOfMemory", "ErrorMemoryAllocation" and "memory
 * summary" in one pass. `anchor`: the index of a byte to memchr for and
 * check the needle around, where that is faster than glibc's memmem
 * (which is slow on needles starting with a common letter: 1.9 s for
 * "emory" over 200 MiB of log, against 25 ms anchored on its 'y'); -1:
 * memmem. */
static const struct {
    const char *text;
    int anchor;
} needles[] = {{"emory", 4},
               {"reserved", -1},
               {"Tried to allocate", -1},
               {"NVIDIA-SMI", -1},
               {"of Calls", 3}, /* a profiler table's header (proftable.h) */
               /* memory prints (schemas/memprint.patterns): "allocated",
                 * "mem_alloc", DeepSpeed's "Max_MA", detectron2's
                 * "max_mem", Chinese labels' "已" (UTF-8) */
               {"lloc", 3},
               {"Max_MA", -1},
               {"max_mem", -1},
               {"\xe5\xb7\xb2", -1},
               /* inference servers' memory lines (servermem.h) that say
                * neither "memory" nor "allocated": vLLM's "Loading model
                * weights took", "model weights take", SGLang's "Load
                * weight end" ("weight"), vLLM's "Model loading took",
                * "GPU KV cache size", "# GPU blocks"; anchored on their
                * first letter (rare: 0.02 s per 192 MiB of the bench's log
                * each, "took" on its 'k' 0.05 s) */
               {"weight", 0},
               {"Model loading", 0},
               {"KV cache size", 0},
               {"GPU blocks", 0},
               /* other libraries' errors (liboom.h) that say neither
                * "memory" nor "allocate": cuBLAS's and cuDNN's
                * "..._STATUS_ALLOC_FAILED", the driver's
                * "CUDA_ERROR_OUT_OF_MEMORY"; and TensorFlow's allocator
                * stats block, read for the error its "ran out of memory"
                * line announced. Anchored on an upper-case letter (rare
                * in logs: memmem's three passes cost 14 % of the bench's
                * import) */
               {"ALLOC_FAILED", 11},
               {"OUT_OF_MEMORY", 12},
               {"MaxInUse:", 5}};
#define NNEEDLES (sizeof needles / sizeof *needles)

/* The first needle k in [p, p + n), or NULL. */
static const char *find_needle(const char *p, size_t n, size_t k)
{
    size_t len = strlen(needles[k].text);
    if (needles[k].anchor < 0)
        return memmem(p, n, needles[k].text, len);
    size_t a = (size_t)needles[k].anchor;
    if (n < len)
        return NULL;
    const char *end = p + n - (len - 1 - a), *q = p + a;
    while (q < end && (q = memchr(q, needles[k].text[a], (size_t)(end - q)))) {
        if (memcmp(q - a, needles[k].text, len) == 0)
            return q - a;
        q++;
    }
    return NULL;
}

int vr_joblog_has_needle(const char *label, size_t len)
{
    for (size_t k = 0; k < NNEEDLES; k++)
        if (memmem(label, len, needles[k].text, strlen(needles[k].text)))
            return 1;
    return 0;
}

typedef enum { FOLLOW_ANY, FOLLOW_STOP, FOLLOW_DIGIT } follow_rule;

/* A line is an error when it holds one of these. `figures`: the message
 * may carry figures (parsed, and re-wrapped lines joined); `begins`: the
 * marker starts a message (a line with one is never joined to the one
 * before; excerpt markers are, as they are its middle); `wording`: the
 * name when no form below names it. */
static const struct {
    const char *marker;
    follow_rule follow; /* STOP: '.' or the end of the line must follow */
    int figures, begins;
    const char *wording;
} starts[] = {
    {"CUDA out of memory", FOLLOW_STOP, 1, 1, "bare"},
    {"HIP out of memory", FOLLOW_STOP, 1, 1, "hip-bare"},
    {"CUDA error: out of memory", FOLLOW_ANY, 0, 1, "cuda-error"},
    {"HIP error: out of memory", FOLLOW_ANY, 0, 1, "hip-error"},
    {"error=2 : out of memory", FOLLOW_ANY, 0, 1, "thc"},
    {"cudaErrorMemoryAllocation", FOLLOW_ANY, 0, 1, "cudaErrorMemoryAllocation"},
    {"hipErrorOutOfMemory", FOLLOW_ANY, 0, 1, "hip-error"},
    /* PyTorch before 1.0 (THC): the exception after its THCudaCheck line */
    {"cuda runtime error (2) : out of memory", FOLLOW_ANY, 0, 1, "thc"},
    /* the cudaMallocAsync backend's block, its figures on the lines after */
    {"would exceed allowed memory. (out of memory)", FOLLOW_ANY, 1, 1, "cuda-malloc-async"},
    {"MPS backend out of memory", FOLLOW_ANY, 1, 1, "mps"},
    {"XPU out of memory", FOLLOW_STOP, 1, 1, "xpu-bare"},
    /* excerpts that lost their first words */
    {"Tried to allocate ", FOLLOW_DIGIT, 1, 0, "partial"},
    {"reserved in total by PyTorch", FOLLOW_ANY, 1, 0, "partial"},
    {"is reserved by PyTorch but unallocated", FOLLOW_ANY, 1, 0, "partial"},
    {"If reserved but unallocated memory is large", FOLLOW_ANY, 0, 0, "hint"},
    {"If reserved memory is >> allocated memory", FOLLOW_ANY, 0, 0, "hint"},
};

/* The message's form, by the words only it has; first match wins. */
static const struct {
    const char *marker, *wording;
} forms[] = {
    {"allocated in private pools", "private-pools"},
    {"total capacty of", "capacty-2.1"},
    {"has a total capacity of", "current"},
    {"reserved in total by PyTorch", "reserved-in-total"},
    {" cached)", "cached"},
};

/* Where a message with figures ends (the hint after it is joined too
 * when it is on the same line). */
static const char *const message_ends[] = {"reserved in total by PyTorch)",
                                           " cached)",
                                           "but unallocated.",
                                           "(malloc at ",
                                           "on private pool",
                                           "on shared pool"}; /* MPS */

/* Where a message ends with the figure after these words (the
 * cudaMallocAsync block's last line, which its limit may wrap onto the
 * line after). */
static const char *const ends_after_figure[] = {"memory fraction)"};

/* Words a re-wrapped message's next line has; a line without any is not
 * joined. */
static const char *const continuation_words[] = {
    "allocate", "GiB",    "MiB", "KiB",     "bytes",   "capacity", "capacty", "free", "PyTorch",
    "reserved", "memory", "GPU", "Process", "process", "cached",   "allowed", "pools"};

/* A figure is the size between these words: `before` ends the text before
 * the number, `after` starts the text after its unit (NULL: any). First
 * match wins, so the more specific come first. */
typedef enum { AS_FIGURE, AS_SELF, AS_PROCESS, AS_LABEL } figure_kind;
static const struct {
    const char *before, *after;
    figure_kind kind;
    vr_oom_figure figure;
} figure_rules[] = {
    /* The cudaMallocAsync block: "Label   : X", the blanks before the
     * colon as many as the alignment (or a web page) left. */
    {"Currently allocated", NULL, AS_LABEL, VR_OOM_ALLOCATED},
    {"Requested", NULL, AS_LABEL, VR_OOM_REQUESTED},
    {"Device limit", NULL, AS_LABEL, VR_OOM_CAPACITY},
    {"Free (according to CUDA)", NULL, AS_LABEL, VR_OOM_FREE},
    {"(set by user-supplied memory fraction)", NULL, AS_LABEL, VR_OOM_ALLOWED},
    /* MPS: "MPS allocated" is what PyTorch's heaps hold of Metal memory
     * (m_total_allocated_memory, after the cache was released), "max
     * allowed" the high-watermark limit. */
    {"MPS allocated: ", NULL, AS_FIGURE, VR_OOM_RESERVED},
    {"other allocations: ", NULL, AS_FIGURE, VR_OOM_OTHER_ALLOCATIONS},
    {"max allowed: ", NULL, AS_FIGURE, VR_OOM_ALLOWED},
    {"Tried to allocate ", NULL, AS_FIGURE, VR_OOM_REQUESTED},
    {"total capacity of ", NULL, AS_FIGURE, VR_OOM_CAPACITY},
    {"total capacty of ", NULL, AS_FIGURE, VR_OOM_CAPACITY},
    {NULL, " total capacity", AS_FIGURE, VR_OOM_CAPACITY},
    {"of which ", " is free", AS_FIGURE, VR_OOM_FREE},
    {NULL, " free", AS_FIGURE, VR_OOM_FREE},
    {"Of the allocated memory ", NULL, AS_FIGURE, VR_OOM_ALLOCATED},
    {NULL, " already allocated", AS_FIGURE, VR_OOM_ALLOCATED},
    {NULL, " reserved in total by PyTorch", AS_FIGURE, VR_OOM_RESERVED},
    /* PyTorch 1.0-1.3 printed amount_cached - amount_allocated: the
     * cache's free part, not the total reserved. */
    {NULL, " cached", AS_FIGURE, VR_OOM_RESERVED_UNALLOCATED},
    {NULL, " is reserved by PyTorch but unallocated", AS_FIGURE, VR_OOM_RESERVED_UNALLOCATED},
    {NULL, " allocated in private pools", AS_FIGURE, VR_OOM_PRIVATE_POOLS},
    {NULL, " allowed", AS_FIGURE, VR_OOM_ALLOWED},
    {"this process has ", " memory in use", AS_SELF, 0},
    {" has ", " memory in use", AS_PROCESS, 0},
};

/* format_size's units; older messages wrote KB/MB/GB for the same binary units. */
static const struct {
    const char *name;
    int shift;
} units[] = {{"bytes", 0}, {"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40},
             {"KB", 10},   {"MB", 20},  {"GB", 30},  {"TB", 40},  {"B", 0}};

/* "[rank3]:", "[default3]:" (torchrun), "rank=3", "[Rank 3]". */
static const struct {
    const char *before, *after;
} rank_prefixes[] = {{"[rank", "]"}, {"[default", "]"}, {"rank=", ""}, {"[Rank ", "]"}};

/* Leading stamps: 'd' a digit, other bytes literal ('T' also matches a
 * space). glog's "I0312 10:15:32.123456" has no year: known, not placed. */
static const struct {
    const char *shape;
    int has_year;
} ts_shapes[] = {
    {"dddd-dd-ddTdd:dd:dd", 1},
    {"dddd/dd/ddTdd:dd:dd", 1},
    {"dddd dd:dd:dd", 0},
};

/* The boxes a log may embed, by their title line. */
static const struct {
    const char *marker, *role;
} boxes[] = {{"NVIDIA-SMI ", "smi_table"}, {"PyTorch CUDA memory summary", "memory_summary"}};

/* A chained traceback, which prints the error it handles again. */
static const char *const chain_markers[] = {"During handling of the above exception",
                                            "The above exception was the direct cause"};

/* HTML escapes found in copied logs. */
static const struct {
    const char *entity;
    char c;
} entities[] = {{"&gt;", '>'},   {"&lt;", '<'},    {"&amp;", '&'}, {"&quot;", '"'},
                {"&#39;", '\''}, {"&#x27;", '\''}, {"&nbsp;", ' '}};

/*-*** small text helpers ***/

static const char *find(const char *s, size_t n, const char *needle)
{
    return memmem(s, n, needle, strlen(needle));
}

static int starts_with(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    return n >= k && memcmp(s, prefix, k) == 0;
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int is_alnum(char c)
{
    return isalnum((unsigned char)c) != 0;
}

void vr_joblog_clean(const char *s, size_t n, vr_buf *out)
{
    size_t i = 0, run = 0;
    while (i < n) {
        size_t skip = 0;
        char repl = 0;
        if (s[i] == '\x1b') { /* CSI: ESC [ params final (0x40..0x7e); else ESC x */
            skip = 2;
            if (i + 1 < n && s[i + 1] == '[') {
                while (i + skip < n && !((unsigned char)s[i + skip] >= 0x40 &&
                                         (unsigned char)s[i + skip] <= 0x7e))
                    skip++;
                skip++;
            }
            if (i + skip > n)
                skip = n - i;
        } else if (s[i] == '&') {
            for (size_t e = 0; e < sizeof entities / sizeof *entities; e++)
                if (starts_with(s + i, n - i, entities[e].entity)) {
                    skip = strlen(entities[e].entity);
                    repl = entities[e].c;
                    break;
                }
        } else if (s[i] == '\r') {
            skip = 1;
        }
        if (!skip) {
            i++;
            continue;
        }
        vr_buf_append(out, s + run, i - run);
        if (repl)
            vr_buf_putc(out, repl);
        i += skip;
        run = i;
    }
    vr_buf_append(out, s + run, n - run);
}

/*-*** sizes ***/

int vr_joblog_parse_size(const char *s, size_t n, int64_t *bytes, size_t *used)
{
    size_t i = 0, int_digits = 0, frac_digits = 0;
    int64_t ip = 0, frac = 0, scale = 1;
    int too_big = 0;
    for (; i < n && is_digit(s[i]); i++, int_digits++) {
        if (ip > (INT64_MAX - 9) / 10)
            too_big = 1;
        else
            ip = ip * 10 + (s[i] - '0');
    }
    if (!int_digits)
        return 0;
    if (i + 1 < n && s[i] == '.' && is_digit(s[i + 1]))
        for (i++; i < n && is_digit(s[i]); i++, frac_digits++)
            if (frac_digits < 9) {
                frac = frac * 10 + (s[i] - '0');
                scale *= 10;
            }
    if (i >= n || s[i] != ' ')
        return 0;
    i++;
    for (size_t u = 0; u < sizeof units / sizeof *units; u++) {
        size_t k = strlen(units[u].name);
        if (!starts_with(s + i, n - i, units[u].name) || (i + k < n && is_alnum(s[i + k])))
            continue;
        *used = i + k;
        int shift = units[u].shift;
        if (too_big || ip > (INT64_MAX >> shift) - 1)
            return -1;
        /* frac < scale <= 10^9, times 2^40 at most: fits in 64 bits unsigned. */
        uint64_t part = ((uint64_t)frac << shift) + (uint64_t)scale / 2;
        *bytes = (ip << shift) + (int64_t)(part / (uint64_t)scale);
        return 1;
    }
    return 0;
}

/*-*** timestamps ***/

static int two(const char *p)
{
    return (p[0] - '0') * 10 + (p[1] - '0');
}

static int match_shape(const char *s, size_t n, const char *shape)
{
    size_t k = strlen(shape);
    if (n < k)
        return 0;
    for (size_t i = 0; i < k; i++) {
        if (shape[i] == 'd' ? !is_digit(s[i])
                            : !(s[i] == shape[i] || (shape[i] == 'T' && s[i] == ' ')))
            return 0;
    }
    return 1;
}

/* The fraction and zone after "HH:MM:SS". */
static size_t read_fraction(const char *s, size_t n, int64_t *frac_ns)
{
    size_t i = 0;
    *frac_ns = 0;
    if (n < 2 || (s[0] != '.' && s[0] != ',') || !is_digit(s[1]))
        return 0;
    int64_t scale = 100000000;
    for (i = 1; i < n && is_digit(s[i]); i++, scale /= 10)
        if (scale > 0)
            *frac_ns += (s[i] - '0') * scale;
    return i;
}

static int read_zone(const char *s, size_t n, int64_t *offset_s)
{
    *offset_s = 0;
    if (n >= 1 && s[0] == 'Z')
        return 1;
    if (n < 5 || (s[0] != '+' && s[0] != '-') || !is_digit(s[1]) || !is_digit(s[2]))
        return 0;
    size_t m = s[3] == ':' ? 4 : 3;
    if (n < m + 2 || !is_digit(s[m]) || !is_digit(s[m + 1]))
        return 0;
    *offset_s = (two(s + 1) * 3600 + two(s + m) * 60) * (s[0] == '-' ? -1 : 1);
    return 1;
}

static int stamp_at(const char *s, size_t n, int64_t *ns, int *zoned)
{
    for (size_t k = 0; k < sizeof ts_shapes / sizeof *ts_shapes; k++) {
        if (!match_shape(s, n, ts_shapes[k].shape))
            continue;
        if (!ts_shapes[k].has_year)
            return 0;
        size_t len = strlen(ts_shapes[k].shape);
        int64_t frac, off;
        len += read_fraction(s + len, n - len, &frac);
        *zoned = read_zone(s + len, n - len, &off);
        int year = two(s) * 100 + two(s + 2);
        if (vr_tz_civil_to_ns(year, two(s + 5), two(s + 8), two(s + 11), two(s + 14), two(s + 17),
                              frac, ns) < 0)
            return 0;
        *ns -= off * 1000000000LL;
        return 1;
    }
    return 0;
}

int vr_joblog_timestamp(const char *line, size_t len, int64_t *ns, int *zoned)
{
    /* The stamp leads the line, perhaps after '[' or a rank prefix: try
     * where each run of digits begins in the first bytes. */
    size_t lim = len < 40 ? len : 40;
    for (size_t i = 0; i < lim; i++) {
        if (!is_digit(line[i]) || (i > 0 && is_digit(line[i - 1])))
            continue;
        if (i > 0 && is_alnum(line[i - 1]))
            continue; /* "rank0", glog's "I0312" */
        if (stamp_at(line + i, len - i, ns, zoned))
            return 1;
    }
    return 0;
}

/*-*** ranks ***/

static int64_t read_rank(const char *s, size_t n, size_t *end)
{
    for (size_t r = 0; r < sizeof rank_prefixes / sizeof *rank_prefixes; r++) {
        const char *p = find(s, n, rank_prefixes[r].before);
        if (!p)
            continue;
        size_t i = (size_t)(p - s) + strlen(rank_prefixes[r].before);
        int64_t v = 0;
        size_t d = 0;
        for (; i < n && is_digit(s[i]) && d < 9; i++, d++)
            v = v * 10 + (s[i] - '0');
        if (!d || !starts_with(s + i, n - i, rank_prefixes[r].after))
            continue;
        if (end)
            *end = i + strlen(rank_prefixes[r].after);
        return v;
    }
    return -1;
}

/* The line without a leading "[rank3]:" and the blanks around it. */
static size_t prefix_length(const char *s, size_t n)
{
    return vr_joblog_prefix_length(s, n);
}

size_t vr_joblog_prefix_length(const char *s, size_t n)
{
    size_t i = 0, end;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i < n && s[i] == '[' && read_rank(s + i, n - i < 24 ? n - i : 24, &end) >= 0 &&
        memchr(s + i, ':', end + 1 <= n - i ? end + 1 : n - i)) {
        i += end;
        if (i < n && s[i] == ':')
            i++;
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
    }
    return i;
}

/* The rank prefix alone, with the one blank after it: a table's cells
 * are aligned by their leading blanks, which must stay. */
size_t vr_joblog_rank_prefix_length(const char *s, size_t n)
{
    size_t p = vr_joblog_prefix_length(s, n);
    while (p > 0 && s[p - 1] == ' ')
        p--;
    if (p == 0 || s[p - 1] != ':')
        return 0;
    return p + (p < n && s[p] == ' ');
}

/*-*** the scanner's state ***/

struct vr_joblog_scan {
    const vr_joblog_sink *sink;
    void *ud;
    char *buf;
    size_t cap, fill, pos; /* cap grows to WINDOW: a short log needs little */
    size_t consumed;       /* the end of the last line an error or box took */
    uint64_t kept_through; /* the last line given to on_oom */
    uint64_t base;         /* log offset of buf[0] */
    size_t counted;        /* newlines counted before buf[counted] ... */
    uint64_t lines_before; /* ... this many */
    vr_joblog_stats stats;
    vr_buf line, joined, scratch, frame, above;
    vr_log_line kept[VR_JOBLOG_CONTEXT + JOIN_MAX];
    vr_buf kept_text[VR_JOBLOG_CONTEXT + JOIN_MAX];
    vr_oom oom;
    /* the last error given, to fold a chained traceback's repeat */
    int have_last;
    uint64_t last_hash, last_end_line;
    uint64_t last_end; /* log offset after its last line */
    int64_t last_rank;
    /* the last other library's error given (liboom.h), to fold the copies
     * one failure prints: its family, rank, latest line, whether it waits
     * for the exception its allocator line announced, and stats.ooms then */
    const char *lib_family;
    int64_t lib_rank;
    uint64_t lib_line, lib_ooms;
    /* TensorFlow's allocator line, held for the error that follows it */
    int holding, held_k;
    vr_oom held;
    vr_buf held_text;
    vr_log_line held_line;
    /* the last THC error's source location (thc_location), to fold the
     * exception that follows its THCudaCheck line */
    uint64_t thc_at, thc_line;
    int64_t thc_rank;
};

static void saw_stamp(vr_joblog_scan *s, int64_t ns, int zoned)
{
    if (zoned)
        s->stats.seen_zoned = 1;
    else
        s->stats.seen_local = 1;
    if (ns < s->stats.start_ns)
        s->stats.start_ns = ns;
    if (ns > s->stats.end_ns)
        s->stats.end_ns = ns;
}

/* The number of the line that starts at buf[at] (at >= counted). */
static uint64_t line_number(vr_joblog_scan *s, size_t at)
{
    for (size_t i = at; i < s->counted; i++) /* back (a box's border above its title) */
        s->lines_before -= s->buf[i] == '\n';
    if (at < s->counted)
        s->counted = at;
    const char *p = s->buf + s->counted, *end = s->buf + at;
    while (p < end && (p = memchr(p, '\n', (size_t)(end - p)))) {
        s->lines_before++;
        p++;
    }
    s->counted = at;
    return s->lines_before + 1;
}

static size_t line_start(const vr_joblog_scan *s, size_t at)
{
    size_t lim = at > HISTORY ? at - HISTORY : 0;
    const char *nl = at > lim ? memrchr(s->buf + lim, '\n', at - lim) : NULL;
    return nl ? (size_t)(nl - s->buf) + 1 : lim;
}

/* The end of the line starting at `at` (its '\n', or the window's fill). */
static size_t line_end(const vr_joblog_scan *s, size_t at)
{
    const char *nl = memchr(s->buf + at, '\n', s->fill - at);
    return nl ? (size_t)(nl - s->buf) : s->fill;
}

/* The line [a, b) cleaned into `out`, bounded. */
static void clean_line(vr_joblog_scan *s, size_t a, size_t b, vr_buf *out)
{
    vr_buf_clear(out);
    if (b - a > LINE_MAX_KEPT) {
        b = a + LINE_MAX_KEPT;
        s->stats.cut_lines++;
    }
    vr_joblog_clean(s->buf + a, b - a, out);
    if (!out->data)
        vr_buf_putc(out, '\0'), out->len = 0;
}

/*-*** errors ***/

/* Which start marker the cleaned line holds, -1 when none. */
static int start_marker(const char *t, size_t n)
{
    for (size_t k = 0; k < sizeof starts / sizeof *starts; k++) {
        const char *p = find(t, n, starts[k].marker);
        if (!p)
            continue;
        size_t after = (size_t)(p - t) + strlen(starts[k].marker);
        if (starts[k].follow == FOLLOW_DIGIT && !(after < n && is_digit(t[after])))
            continue;
        if (starts[k].follow == FOLLOW_STOP) {
            while (after < n && t[after] == ' ')
                after++;
            if (after < n && t[after] != '.')
                continue;
        }
        return (int)k;
    }
    return -1;
}

static int has_any(const char *t, size_t n, const char *const *words, size_t nwords)
{
    for (size_t k = 0; k < nwords; k++)
        if (find(t, n, words[k]))
            return 1;
    return 0;
}

static int message_complete(const vr_buf *m)
{
    if (has_any(m->data, m->len, message_ends, sizeof message_ends / sizeof *message_ends))
        return 1;
    for (size_t k = 0; k < sizeof ends_after_figure / sizeof *ends_after_figure; k++) {
        const char *p = find(m->data, m->len, ends_after_figure[k]);
        if (!p)
            continue;
        size_t i = (size_t)(p - m->data) + strlen(ends_after_figure[k]);
        while (i < m->len && (m->data[i] == ' ' || m->data[i] == ':'))
            i++;
        int64_t bytes;
        size_t used;
        if (vr_joblog_parse_size(m->data + i, m->len - i, &bytes, &used) != 0)
            return 1;
    }
    return 0;
}

/* The words of the messages' text, to tell a word cut by a fixed-width
 * wrap ("G" + "PU") from two words re-flowed at a space ("GiB" + "total"). */
static const char *const message_words[] = {"GPU",
                                            "CUDA",
                                            "HIP",
                                            "out",
                                            "of",
                                            "memory",
                                            "Tried",
                                            "to",
                                            "allocate",
                                            "bytes",
                                            "KiB",
                                            "MiB",
                                            "GiB",
                                            "TiB",
                                            "total",
                                            "capacity",
                                            "capacty",
                                            "already",
                                            "allocated",
                                            "free",
                                            "reserved",
                                            "in",
                                            "by",
                                            "PyTorch",
                                            "cached",
                                            "allowed",
                                            "has",
                                            "a",
                                            "which",
                                            "is",
                                            "Process",
                                            "process",
                                            "this",
                                            "use",
                                            "Including",
                                            "non",
                                            "the",
                                            "and",
                                            "with",
                                            "private",
                                            "pools",
                                            "CUDA",
                                            "Graphs",
                                            "but",
                                            "unallocated",
                                            "If",
                                            "large",
                                            "try",
                                            "setting",
                                            "max_split_size_mb",
                                            "avoid",
                                            "fragmentation",
                                            "See",
                                            "documentation",
                                            "for",
                                            "Memory",
                                            "Management",
                                            "PYTORCH_CUDA_ALLOC_CONF",
                                            "expandable_segments",
                                            "True",
                                            "malloc",
                                            "at",
                                            "RuntimeError",
                                            "OutOfMemoryError",
                                            "error",
                                            "Of",
                                            "e",
                                            "g",
                                            "memory_allocated"};

static int is_word_char(char c)
{
    return is_alnum(c) || c == '_';
}

static int is_message_word(const char *w, size_t n)
{
    for (size_t k = 0; k < sizeof message_words / sizeof *message_words; k++)
        if (strlen(message_words[k]) == n && memcmp(message_words[k], w, n) == 0)
            return 1;
    return 0;
}

/* Whether a space goes between a line and the next when they are joined:
 * a re-flow at a space dropped it, a fixed-width cut kept every byte (so
 * a cut inside a word or a number joins as is). */
static int needs_space(const char *prev, size_t pn, const char *next, size_t nn)
{
    if (!pn || !nn || prev[pn - 1] == ' ' || next[0] == ' ' || prev[pn - 1] == '(' ||
        prev[pn - 1] == '-' || strchr(".,;:)", next[0]))
        return 0;
    size_t a = pn, b = 0;
    while (a > 0 && (is_word_char(prev[a - 1]) || prev[a - 1] == '.'))
        a--;
    while (b < nn && (is_word_char(next[b]) || next[b] == '.'))
        b++;
    if (a == pn || b == 0)
        return 1;
    int digits = 1;
    for (size_t i = a; i < pn && digits; i++)
        digits = is_digit(prev[i]) || prev[i] == '.';
    for (size_t i = 0; i < b && digits; i++)
        digits = is_digit(next[i]) || next[i] == '.';
    if (digits)
        return 0; /* "14.5" + "2 GiB": one number */
    char word[64];
    size_t wa = pn - a, wb = b;
    while (wa > 0 && prev[pn - wa] == '.')
        wa--; /* "...memory." is no part of the next word */
    while (wb > 0 && next[wb - 1] == '.')
        wb--;
    if (wa + wb >= sizeof word)
        return 1;
    memcpy(word, prev + pn - wa, wa);
    memcpy(word + wa, next, wb);
    return !is_message_word(word, wa + wb);
}

/* The line without a leading "[rank3]:" (and the blanks after it). */
static size_t rank_prefix_length(const char *t, size_t n)
{
    size_t end;
    if (n == 0 || t[0] != '[' || read_rank(t, n < 24 ? n : 24, &end) < 0)
        return 0;
    if (end < n && t[end] == ':')
        end++;
    while (end < n && t[end] == ' ')
        end++;
    return end;
}

/* A next line that continues the re-wrapped message `m`: it has the
 * message's words, or it ends a word or number the last line cut. Never
 * a new record (a stamped line, a traceback, another error), and a
 * message that has not reached "Tried to allocate" yet only takes a line
 * that does (a bare "CUDA out of memory." is whole). */
static int continues(const vr_buf *m, const char *t, size_t n)
{
    int64_t ns;
    int zoned, marker = start_marker(t, n);
    if (n == 0 || (marker >= 0 && starts[marker].begins) || find(t, n, "Traceback (") ||
        starts_with(t, n, "  File \"") || vr_joblog_timestamp(t, n, &ns, &zoned) ||
        (!find(m->data, m->len, "allocate") && !find(t, n, "allocate")))
        return 0;
    if (has_any(t, n, continuation_words, sizeof continuation_words / sizeof *continuation_words))
        return 1;
    size_t p = rank_prefix_length(t, n);
    return m->len && p < n && is_word_char(m->data[m->len - 1]) && is_word_char(t[p]) &&
           !needs_space(m->data, m->len, t + p, n - p);
}

/* Appends a continuation line of a re-wrapped message. */
static void join_line(vr_buf *m, const char *t, size_t n)
{
    size_t p = rank_prefix_length(t, n);
    t += p;
    n -= p;
    if (needs_space(m->data, m->len, t, n) && m->len < VR_OOM_MESSAGE_MAX)
        vr_buf_putc(m, ' ');
    if (m->len + n > VR_OOM_MESSAGE_MAX)
        n = m->len < VR_OOM_MESSAGE_MAX ? VR_OOM_MESSAGE_MAX - m->len : 0;
    vr_buf_append(m, t, n);
}

static void set_figure(vr_oom *o, vr_oom_figure f, int64_t v)
{
    if (o->has & (1u << f))
        return; /* the first occurrence names it */
    o->figure[f] = v;
    o->has |= 1u << f;
}

static void add_process(vr_oom *o, int64_t pid, int64_t used)
{
    if (o->nprocess < VR_OOM_MAX_PROCESSES)
        o->process[o->nprocess++] = (vr_oom_process){pid, used};
}

/* "Process 20398" just before `at` (which is " has "): the pid, or -1. */
static int64_t pid_before(const char *t, size_t at)
{
    size_t i = at;
    int64_t pid = 0, scale = 1;
    while (i > 0 && is_digit(t[i - 1]) && scale < 1000000000000LL) {
        pid += (t[i - 1] - '0') * scale;
        scale *= 10;
        i--;
    }
    return i < at && ends_with(t, i, "Process ") ? pid : -1;
}

/* "Label   : " ends t[0, i): the label, blanks, a colon, blanks. */
static int ends_with_label(const char *t, size_t i, const char *label)
{
    while (i > 0 && t[i - 1] == ' ')
        i--;
    if (i == 0 || t[i - 1] != ':')
        return 0;
    i--;
    while (i > 0 && t[i - 1] == ' ')
        i--;
    return ends_with(t, i, label);
}

/* The figure rule the size at t[i] follows (its words before and after
 * it), or -1. */
static int figure_rule_at(const char *t, size_t n, size_t i, size_t used)
{
    for (size_t r = 0; r < sizeof figure_rules / sizeof *figure_rules; r++) {
        const char *before = figure_rules[r].before, *after = figure_rules[r].after;
        int label = figure_rules[r].kind == AS_LABEL;
        if ((before && !(label ? ends_with_label(t, i, before) : ends_with(t, i, before))) ||
            (after && !starts_with(t + i + used, n - i - used, after)))
            continue;
        if (figure_rules[r].kind == AS_PROCESS && pid_before(t, i - strlen(before)) < 0)
            continue;
        return (int)r;
    }
    return -1;
}

/* The size at [i, i+used) of message t: which figure it is by its words. */
static void place_figure(vr_oom *o, const char *t, size_t n, size_t i, size_t used, int64_t bytes)
{
    int rule = figure_rule_at(t, n, i, used);
    if (rule >= 0) {
        size_t r = (size_t)rule;
        const char *before = figure_rules[r].before;
        if (figure_rules[r].kind == AS_FIGURE || figure_rules[r].kind == AS_LABEL)
            set_figure(o, figure_rules[r].figure, bytes);
        else if (figure_rules[r].kind == AS_SELF)
            add_process(o, -1, bytes);
        else
            add_process(o, pid_before(t, i - strlen(before)), bytes);
    }
}

/* The cudaMallocAsync block prints its limit when none was set too: the
 * UINT64_MAX it starts from, "17179869184.00 GiB", past what a size can
 * be here. Not an unreadable figure, and no limit. */
static int is_unset_limit(const char *t, size_t n, size_t i)
{
    size_t used = 0;
    while (i + used < n && t[i + used] != ' ')
        used++;
    int r = figure_rule_at(t, n, i, used);
    return r >= 0 && figure_rules[r].figure == VR_OOM_ALLOWED && figure_rules[r].kind == AS_LABEL;
}

/* Figures that follow from the others as the message means them. */
static void settle_figures(vr_oom *o)
{
    unsigned allowed = 1u << VR_OOM_ALLOWED, cap = 1u << VR_OOM_CAPACITY;
    /* a memory fraction's limit at or above the device is no limit */
    if ((o->has & allowed) && (o->has & cap) &&
        o->figure[VR_OOM_ALLOWED] >= o->figure[VR_OOM_CAPACITY])
        o->has &= ~allowed;
    /* MPS: the process's Metal memory is PyTorch's heaps plus the
     * other allocations (current_allocated_size()) */
    if ((o->has & (1u << VR_OOM_OTHER_ALLOCATIONS)) && (o->has & (1u << VR_OOM_RESERVED)))
        add_process(o, -1, o->figure[VR_OOM_RESERVED] + o->figure[VR_OOM_OTHER_ALLOCATIONS]);
}

/* "GPU 0", "on device 0" (cudaMallocAsync) */
static const char *const device_words[] = {"GPU ", "on device "};

static void read_device(vr_oom *o, const char *t, size_t n)
{
    for (size_t w = 0; w < sizeof device_words / sizeof *device_words && o->device_idx < 0; w++) {
        size_t k = strlen(device_words[w]);
        const char *at = find(t, n, device_words[w]);
        while (at && o->device_idx < 0) {
            size_t i = (size_t)(at - t) + k;
            int64_t v = 0;
            size_t d = 0;
            for (; i < n && is_digit(t[i]) && d < 6; i++, d++)
                v = v * 10 + (t[i] - '0');
            if (d && (i == n || t[i] == ';' || t[i] == ' '))
                o->device_idx = v;
            at = find(t + i, n - i, device_words[w]);
        }
    }
}

static void read_figures(vr_joblog_scan *s, vr_oom *o, const char *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(t[i]) || (i > 0 && (is_alnum(t[i - 1]) || t[i - 1] == '.')))
            continue;
        int64_t bytes;
        size_t used = 0;
        int rc = vr_joblog_parse_size(t + i, n - i, &bytes, &used);
        if (rc < 0 && !is_unset_limit(t, n, i))
            s->stats.unreadable++;
        if (rc > 0)
            place_figure(o, t, n, i, used, bytes);
        while (i + 1 < n && (is_digit(t[i + 1]) || t[i + 1] == '.'))
            i++;
    }
    settle_figures(o);
    read_device(o, t, n);
}

static const char *wording_of(const char *t, size_t n, int marker)
{
    for (size_t f = 0; f < sizeof forms / sizeof *forms; f++)
        if (find(t, n, forms[f].marker))
            return forms[f].wording;
    return starts[marker].wording;
}

/* The raw line [a, b) as a kept line; its text is copied (the window moves). */
static void keep_line(vr_joblog_scan *s, size_t slot, size_t a, size_t b, uint64_t number,
                      const char *role)
{
    vr_buf *t = &s->kept_text[slot];
    vr_buf_clear(t);
    size_t n = b - a > 4096 ? 4096 : b - a;
    vr_joblog_clean(s->buf + a, n, t);
    vr_log_line *l = &s->kept[slot];
    *l = (vr_log_line){number, t->data ? t->data : "", t->len, role, 0, 0};
    int zoned;
    l->has_ts = vr_joblog_timestamp(l->text, l->len, &l->ts_ns, &zoned);
    if (l->has_ts)
        saw_stamp(s, l->ts_ns, zoned);
}

/* 'file.py:42 in f' from `  File "file.py", line 42, in f`; 0 when not a frame. */
static int read_frame(const char *t, size_t n, vr_buf *out)
{
    const char *f = find(t, n, "File \"");
    if (!f)
        return 0;
    const char *path = f + 6, *end = t + n;
    while (end > path && (end[-1] == '\r' || end[-1] == ' '))
        end--;
    const char *q = memchr(path, '"', (size_t)(end - path));
    if (!q || q == path)
        return 0;
    size_t plen = (size_t)(q - path);
    if (path[0] == '<' || find(path, plen, "/torch/") || starts_with(path, plen, "torch/"))
        return -1; /* torch's own (or frozen importlib): not the user's */
    const char *ln = find(q, (size_t)(end - q), ", line ");
    const char *in = find(q, (size_t)(end - q), ", in ");
    vr_buf_clear(out);
    vr_buf_append(out, path, plen > FRAME_MAX ? FRAME_MAX : plen);
    if (ln) {
        const char *d = ln + 7;
        size_t k = 0;
        while (d + k < end && is_digit(d[k]) && k < 10)
            k++;
        vr_buf_putc(out, ':');
        vr_buf_append(out, d, k);
    }
    if (in) {
        size_t k = (size_t)(end - in - 5);
        vr_buf_puts(out, " in ");
        vr_buf_append(out, in + 5, k > 128 ? 128 : k);
    }
    return 1;
}

/* Walks back from the error's line: the context lines (at most
 * VR_JOBLOG_CONTEXT, 'traceback' from the traceback's first line on) and
 * the traceback's last frame outside torch, for the error's rank when the
 * lines say theirs. */
static size_t look_back(vr_joblog_scan *s, size_t start, uint64_t number, int64_t rank,
                        uint64_t stop)
{
    size_t starts_at[VR_JOBLOG_CONTEXT];
    size_t n = 0, tb = SIZE_MAX, at = start, steps = 0;
    int frame_done = 0;
    size_t lim = start > HISTORY ? start - HISTORY : 0;
    vr_buf_clear(&s->frame);
    if (at > 0 && s->buf[at - 1] != '\n')
        at = line_start(s, at); /* the part of a long line kept: from its start */
    /* stop: the last line of the rank's previous error, where this one's
     * traceback cannot reach (a dense log costs no more than a sparse one) */
    while (at > lim && steps < 200 && stop + steps + 1 < number &&
           (n < VR_JOBLOG_CONTEXT || !frame_done)) {
        steps++;
        size_t b = at - 1, a = line_start(s, b);
        if (a == 0 && s->base > 0)
            break; /* a line cut by the window's start is no line */
        const char *t = s->buf + a;
        size_t len = b - a;
        int64_t r = read_rank(t, len < 40 ? len : 40, NULL);
        int same = rank < 0 || r < 0 || r == rank;
        int is_tb = find(t, len, "Traceback (most recent call last)") != NULL;
        if (!frame_done && same && read_frame(t, len, &s->scratch) > 0) {
            vr_buf_clear(&s->frame);
            vr_buf_append(&s->frame, s->scratch.data, s->scratch.len);
            frame_done = 1;
        }
        if (is_tb && same)
            frame_done = 1;
        if (n < VR_JOBLOG_CONTEXT) {
            if (is_tb && tb == SIZE_MAX)
                tb = n;
            starts_at[n++] = a;
        }
        at = a;
    }
    /* kept[] in file order, the oldest first; lines an earlier error kept
     * are not given again */
    size_t kept = 0;
    for (size_t k = 0; k < n; k++) {
        size_t back = n - 1 - k, a = starts_at[back];
        if (number - (n - k) <= s->kept_through)
            continue;
        keep_line(s, kept++, a, line_end(s, a), number - (n - k),
                  tb != SIZE_MAX && back <= tb ? "traceback" : "context");
    }
    return kept;
}

/* A repeat of the last error in a chained traceback of the same rank. */
static int is_chained_repeat(vr_joblog_scan *s, uint64_t hash, int64_t rank, size_t start)
{
    if (!s->have_last || s->last_hash != hash || s->last_rank != rank || s->last_end < s->base ||
        s->last_end - s->base > start)
        return 0;
    size_t from = (size_t)(s->last_end - s->base);
    return has_any(s->buf + from, start - from, chain_markers,
                   sizeof chain_markers / sizeof *chain_markers);
}

/* Joins the lines after `end` that continue the message; the end of the last. */
static size_t join_message(vr_joblog_scan *s, size_t end, vr_buf *m, uint64_t *lines)
{
    while (*lines < JOIN_MAX && !message_complete(m) && end < s->fill) {
        size_t a = end + 1, b = line_end(s, a);
        clean_line(s, a, b, &s->line);
        if (!continues(m, s->line.data, s->line.len))
            break;
        join_line(m, s->line.data, s->line.len);
        end = b;
        (*lines)++;
    }
    return end;
}

static void reset_oom(vr_oom *o)
{
    memset(o, 0, sizeof *o);
    o->device_idx = -1;
    o->rank = -1;
}

/* The hint alone ("If reserved but unallocated memory is large ..."), on
 * a line of its own right after the message it belongs to. */
static int is_trailing_hint(const vr_joblog_scan *s, int marker, int64_t rank, uint64_t number)
{
    return strcmp(starts[marker].wording, "hint") == 0 && s->have_last && s->last_rank == rank &&
           number <= s->last_end_line + 3;
}

/* A traceback's reach: a THC exception further below its THCudaCheck
 * line than this is another error. */
#define THC_REACH 200

/* The THC source location an error names, hashed: `file=F line=N`
 * (THCudaCheck's line) or `out of memory at F:N` (the exception's); 0
 * when it names none. */
static uint64_t thc_location(const char *t, size_t n)
{
    const char *f = find(t, n, "file="), *path, *end, *num;
    if (f) {
        path = f + 5;
        end = find(path, (size_t)(t + n - path), " line=");
        num = end ? end + 6 : NULL;
    } else {
        f = find(t, n, "out of memory at ");
        if (!f)
            return 0;
        path = f + 17;
        end = memrchr(path, ':', (size_t)(t + n - path));
        num = end ? end + 1 : NULL;
    }
    if (!end || end == path || num >= t + n || !is_digit(*num))
        return 0;
    size_t d = 0;
    while (num + d < t + n && is_digit(num[d]))
        d++;
    vr_hash h;
    vr_hash_init(&h, 0);
    vr_hash_update(&h, path, (size_t)(end - path));
    vr_hash_update(&h, ":", 1);
    vr_hash_update(&h, num, d);
    return vr_hash_digest(&h) | 1u;
}

/* PyTorch before 1.0 told one failure twice: THCudaCheck's line
 * (`THCudaCheck FAIL file=F line=N error=2 : out of memory`), then the
 * traceback and its exception (`cuda runtime error (2) : out of memory
 * at F:N`). The second, for the same rank and place, is the first. */
static int is_thc_repeat(vr_joblog_scan *s, int marker, const vr_buf *m, int64_t rank,
                         uint64_t number)
{
    if (strcmp(starts[marker].wording, "thc") != 0)
        return 0;
    uint64_t at = thc_location(m->data, m->len);
    int repeat =
        at && s->thc_at == at && s->thc_rank == rank && number - s->thc_line <= THC_REACH;
    s->thc_at = repeat ? 0 : at;
    s->thc_line = number;
    s->thc_rank = rank;
    return repeat;
}

/* Remembers the message (for the next one's repeat test); 1 when it
 * repeats the last one in a chained traceback. */
static int remember(vr_joblog_scan *s, const vr_buf *m, int64_t rank, size_t start, size_t end,
                    uint64_t last_line)
{
    size_t p = prefix_length(m->data, m->len);
    vr_hash h;
    vr_hash_init(&h, 0);
    vr_hash_update(&h, m->data + p, m->len - p);
    uint64_t hash = vr_hash_digest(&h);
    int repeat = is_chained_repeat(s, hash, rank, start);
    s->have_last = 1;
    s->last_hash = hash;
    s->last_rank = rank;
    s->last_end = s->base + end;
    s->last_end_line = last_line;
    return repeat;
}

/* The error's own lines after the context ones; its time is its first
 * line's stamp, else the nearest stamp before it. */
static void keep_oom_lines(vr_joblog_scan *s, vr_oom *o, size_t start, size_t nk)
{
    for (size_t k = nk; k > 0 && !o->has_ts; k--)
        if (s->kept[k - 1].has_ts) {
            o->has_ts = 1;
            o->ts_ns = s->kept[k - 1].ts_ns;
        }
    size_t a = start;
    for (uint64_t k = 0; k <= o->last_line - o->line; k++) {
        size_t b = line_end(s, a);
        keep_line(s, nk + k, a, b, o->line + k, "oom");
        a = b + 1;
    }
    if (s->kept[nk].has_ts) {
        o->has_ts = 1;
        o->ts_ns = s->kept[nk].ts_ns;
    }
}

/* The error starting on the line [start, end) (cleaned in s->line, its
 * marker `marker`); *next: where the scan goes on. */
static int take_oom(vr_joblog_scan *s, size_t start, size_t end, int marker, size_t *next,
                    vr_error *err)
{
    vr_oom *o = &s->oom;
    reset_oom(o);
    uint64_t number = line_number(s, start), lines = 1;
    vr_buf *m = &s->joined;
    vr_buf_clear(m);
    vr_buf_append(m, s->line.data,
                  s->line.len > VR_OOM_MESSAGE_MAX ? VR_OOM_MESSAGE_MAX : s->line.len);
    o->rank = read_rank(s->line.data, s->line.len, NULL);
    if (starts[marker].figures)
        end = join_message(s, end, m, &lines);
    *next = end;
    vr_buf_putc(m, '\0');
    m->len--;
    if (is_trailing_hint(s, marker, o->rank, number))
        return 0;
    uint64_t stop = s->have_last && s->last_rank == o->rank ? s->last_end_line : 0;
    if (is_thc_repeat(s, marker, m, o->rank, number) ||
        remember(s, m, o->rank, start, end, number + lines - 1)) {
        s->stats.repeats++;
        return 0;
    }
    if (starts[marker].figures)
        read_figures(s, o, m->data, m->len);
    o->wording = o->has ? wording_of(m->data, m->len, marker) : starts[marker].wording;
    o->message = m->data;
    o->message_len = m->len;
    o->line = number;
    o->last_line = number + lines - 1;
    size_t nk = look_back(s, start, number, o->rank, stop);
    if (s->frame.len) {
        vr_buf_putc(&s->frame, '\0');
        s->frame.len--;
        o->user_frame = s->frame.data;
    }
    keep_oom_lines(s, o, start, nk);
    s->kept_through = o->last_line;
    s->stats.ooms++;
    return s->sink->on_oom ? s->sink->on_oom(s->ud, o, s->kept, nk + lines, err) : 0;
}

/*-*** other libraries' errors (liboom.h) ***/

/* Lines within which a library's copies of one failure fold (NCCL's
 * WARN for each channel, TensorFlow's op error and Python exception, a
 * driver retry loop's shrinking requests). */
#define LIB_FOLD_LINES 200

/* Whether the error of wording k on line `number` is a copy of the
 * library's last one: same family and rank, no other error between, and
 * near it. */
static int lib_copy(vr_joblog_scan *s, int k, int64_t rank, uint64_t number)
{
    if (!s->lib_family || strcmp(s->lib_family, vr_liboom_family(k)) != 0 ||
        s->lib_rank != rank || s->lib_ooms != s->stats.ooms ||
        number > s->lib_line + LIB_FOLD_LINES)
        return 0;
    s->lib_line = number;
    return 1;
}

/* The error in s->oom (its message in m, its first line at `start`) to
 * the sink, with the lines before it; `nkept`: its own lines' slots when
 * there is no window to read them from (a held allocator line). */
static int give_lib_oom(vr_joblog_scan *s, int k, size_t start, const vr_log_line *own,
                        vr_error *err)
{
    vr_oom *o = &s->oom;
    size_t nk = 0;
    if (own) {
        s->kept[0] = *own;
        o->has_ts = own->has_ts;
        o->ts_ns = own->ts_ns;
    } else {
        uint64_t stop = s->have_last && s->last_rank == o->rank ? s->last_end_line : 0;
        nk = look_back(s, start, o->line, o->rank, stop);
        if (s->frame.len) {
            vr_buf_putc(&s->frame, '\0');
            s->frame.len--;
            o->user_frame = s->frame.data;
        }
        keep_oom_lines(s, o, start, nk);
    }
    if (o->last_line > s->kept_through)
        s->kept_through = o->last_line;
    s->stats.ooms++;
    s->lib_family = vr_liboom_family(k);
    s->lib_rank = o->rank;
    s->lib_line = o->last_line;
    s->lib_ooms = s->stats.ooms;
    return s->sink->on_oom ? s->sink->on_oom(s->ud, o, s->kept, nk + 1, err) : 0;
}

/* TensorFlow's allocator line ("Allocator (GPU_0_bfc) ran out of memory
 * trying to allocate ...") is held: its stats block and the op's error
 * follow it, far after its dump of chunks; the error, when it comes, is
 * the OOM with the held figures. Held with it: its own line, copied. */
static void hold_alloc_line(vr_joblog_scan *s, int k, uint64_t number)
{
    s->held = s->oom;
    s->held_k = k;
    vr_buf_clear(&s->held_text);
    vr_buf_append(&s->held_text, s->joined.data, s->joined.len);
    vr_buf_putc(&s->held_text, '\0');
    s->held_text.len--;
    s->held.message = s->held_text.data;
    s->held_line = (vr_log_line){number, s->held_text.data, s->held_text.len, "oom", 0, 0};
    int zoned;
    s->held_line.has_ts =
        vr_joblog_timestamp(s->held_text.data, s->held_text.len, &s->held_line.ts_ns, &zoned);
    s->holding = 1;
}

/* A held allocator line no error followed (the log ends, another error
 * comes): an OOM of its own. */
static int flush_held(vr_joblog_scan *s, vr_error *err)
{
    if (!s->holding)
        return 0;
    s->holding = 0;
    s->oom = s->held;
    vr_log_line own = s->held_line;
    return give_lib_oom(s, s->held_k, 0, &own, err);
}

/* The held line's figures for the error of the same rank that follows it
 * (its own figures first: the op's tensor is the request). */
static void take_held(vr_joblog_scan *s, vr_oom *o)
{
    if (!s->holding || s->held.rank != o->rank)
        return;
    for (int f = 0; f < VR_OOM_FIGURES; f++)
        if (!(o->has & (1u << f)) && (s->held.has & (1u << f))) {
            o->figure[f] = s->held.figure[f];
            o->has |= 1u << f;
        }
    if (o->device_idx < 0)
        o->device_idx = s->held.device_idx;
    s->holding = 0;
}

/* TensorFlow's stats block ("Limit:", "InUse:", "MaxInUse:" lines) whose
 * MaxInUse line starts at `start`: its figures go to the held allocator
 * line. */
static void take_tf_stats(vr_joblog_scan *s, size_t start, size_t end)
{
    size_t from = start > 512 ? start - 512 : 0;
    if (s->holding)
        vr_liboom_tf_stats(s->buf + from, end - from, &s->held);
}

/* The error of library wording k on the line [start, end) (cleaned in
 * s->line): one line, its figures the wording's. */
static int take_lib_oom(vr_joblog_scan *s, size_t start, size_t end, int k, size_t *next,
                        vr_error *err)
{
    vr_oom *o = &s->oom;
    reset_oom(o);
    *next = end;
    uint64_t number = line_number(s, start);
    o->rank = read_rank(s->line.data, s->line.len, NULL);
    if (!vr_liboom_opens(k) && lib_copy(s, k, o->rank, number)) {
        s->stats.repeats++;
        return 0;
    }
    vr_buf *m = &s->joined;
    vr_buf_clear(m);
    vr_buf_append(m, s->line.data,
                  s->line.len > VR_OOM_MESSAGE_MAX ? VR_OOM_MESSAGE_MAX : s->line.len);
    vr_buf_putc(m, '\0');
    m->len--;
    vr_liboom_figures(k, m->data, m->len, o);
    o->wording = vr_liboom_wording(k);
    o->message = m->data;
    o->message_len = m->len;
    o->line = o->last_line = number;
    if (s->holding &&
        (vr_liboom_opens(k) || strcmp(vr_liboom_family(k), vr_liboom_family(s->held_k)) != 0)) {
        vr_oom mine = *o;
        if (flush_held(s, err) < 0)
            return -1;
        *o = mine;
    }
    if (vr_liboom_opens(k)) {
        hold_alloc_line(s, k, number);
        return 0;
    }
    take_held(s, o);
    return give_lib_oom(s, k, start, NULL, err);
}

/*-*** boxes ***/

static int box_line(const char *t, size_t n)
{
    size_t p = prefix_length(t, n);
    return p < n && (t[p] == '|' || t[p] == '+');
}

/* The box whose title is on line [start, end): from the border above it
 * to its last row (nvidia-smi leaves one blank line between its tables). */
/* The whole line above offset `at` (a line's start), cleaned into
 * s->above; NULL when there is none or the window starts inside it. */
static const char *above_line(vr_joblog_scan *s, size_t at)
{
    vr_buf_clear(&s->above);
    if (at == 0)
        return NULL;
    size_t a = line_start(s, at - 1), b = at - 1;
    if (a == 0 && s->base != 0)
        return NULL;
    b -= b > a && s->buf[b - 1] == '\r';
    vr_joblog_clean(s->buf + a, b - a > 4096 ? 4096 : b - a, &s->above);
    return s->above.data ? s->above.data : "";
}

static int give_box(vr_joblog_scan *s, size_t first, size_t last, size_t last_end,
                    const char *role, int cut, vr_error *err);

static int take_box(vr_joblog_scan *s, size_t start, size_t end, const char *role, size_t *next,
                    vr_error *err)
{
    size_t first = start;
    if (start > 0) {
        size_t a = line_start(s, start - 1);
        if ((a > 0 || s->base == 0) && box_line(s->buf + a, start - 1 - a))
            first = a;
    }
    size_t last = start, last_end = end, count = 1;
    for (size_t a = end + 1; a < s->fill && count < BLOCK_MAX_LINES;) {
        size_t b = line_end(s, a);
        size_t len = b - a - (b > a && s->buf[b - 1] == '\r');
        if (!box_line(s->buf + a, len)) {
            size_t c = b + 1, d = c < s->fill ? line_end(s, c) : c;
            if (prefix_length(s->buf + a, len) != len || c >= s->fill ||
                !box_line(s->buf + c, d - c))
                break;
        } else {
            last = a;
            last_end = b;
        }
        a = b + 1;
        count++;
    }
    *next = last_end;
    return give_box(s, first, last, last_end, role,
                    count >= BLOCK_MAX_LINES || last_end - first > BLOCK_TEXT_MAX, err);
}

/* The box of lines [first, last_end) (`last`: its last line's start) to
 * the sink, its text cleaned and bounded. */
static int give_box(vr_joblog_scan *s, size_t first, size_t last, size_t last_end,
                    const char *role, int cut, vr_error *err)
{
    uint64_t number = line_number(s, first);
    vr_log_box box = {NULL, NULL, above_line(s, first), 0, cut};
    box.above_len = s->above.len;
    uint64_t lines_in = 1;
    for (size_t p = first; p < last; p++)
        lines_in += s->buf[p] == '\n';
    vr_buf_clear(&s->scratch);
    size_t n = last_end - first > BLOCK_TEXT_MAX ? BLOCK_TEXT_MAX : last_end - first;
    vr_joblog_clean(s->buf + first, n, &s->scratch);
    vr_log_line head = {number, s->scratch.data ? s->scratch.data : "", s->scratch.len, role, 0,
                        0};
    int zoned;
    head.has_ts = vr_joblog_timestamp(head.text, head.len, &head.ts_ns, &zoned);
    vr_buf_clear(&s->line);
    vr_joblog_clean(s->buf + last, last_end - last, &s->line);
    vr_log_line tail = {
        number + lines_in - 1, s->line.data ? s->line.data : "", s->line.len, role, 0, 0};
    s->stats.blocks++;
    box.first = &head;
    box.last = &tail;
    return s->sink->on_block ? s->sink->on_block(s->ud, &box, err) : 0;
}

/*-*** profiler tables (proftable.h) ***/

/* The line [a, b) as the table parser reads it: without its end and the
 * log's rank prefix. */
static const char *table_line(const vr_joblog_scan *s, size_t a, size_t b, size_t *len)
{
    size_t n = b - a - (b > a && s->buf[b - 1] == '\r');
    size_t p = vr_joblog_rank_prefix_length(s->buf + a, n);
    *len = n - p;
    return s->buf + a + p;
}

/* The lines after a table's rule under its header: rows, then the
 * closing rule and its "time total" lines; a table cut short (a killed
 * job) ends at its last line that can be a row. *last: the start of the
 * last line taken; the end of it returned; *bounded: stopped by the bound. */
static size_t table_rows(vr_joblog_scan *s, size_t first, size_t from, const char *rule,
                         size_t rule_len, size_t *last, int *bounded)
{
    size_t end = from - 1, count = 3, at;
    int closed = 0, totals = 0;
    for (size_t a = from; a < s->fill; a = end + 1) {
        size_t b = line_end(s, a), n;
        if (count >= BLOCK_MAX_LINES || b - first > BLOCK_TEXT_MAX) { /* whole lines only */
            *bounded = !closed;
            break;
        }
        const char *t = table_line(s, a, b, &n);
        int is_rule = vr_proftable_is_rule(t, n, &at);
        if (closed ? !vr_proftable_is_total(t, n) || ++totals > 2
                   : !is_rule && !vr_proftable_fits(rule, rule_len, t, n))
            break;
        closed |= is_rule;
        *last = a;
        end = b;
        count++;
    }
    return end;
}

/* A profiler table whose header is the line [start, end): from the rule
 * above it on. 0 when the lines around it are not a table's. */
static int take_table(vr_joblog_scan *s, size_t start, size_t end, size_t *next, vr_error *err)
{
    size_t at, n, first = start > 0 ? line_start(s, start - 1) : 0;
    if (start == 0 || (first == 0 && s->base != 0) || end >= s->fill)
        return 0;
    const char *above = table_line(s, first, start - 1, &n);
    if (!vr_proftable_is_rule(above, n, &at))
        return 0;
    size_t rule_end = line_end(s, end + 1), rule_len;
    const char *rule = table_line(s, end + 1, rule_end, &rule_len);
    if (!vr_proftable_is_rule(rule, rule_len, &at))
        return 0;
    size_t last = end + 1;
    int bounded = 0;
    size_t last_end = table_rows(s, first, rule_end + 1, rule, rule_len, &last, &bounded);
    if (last_end < rule_end)
        last_end = rule_end;
    *next = last_end;
    return give_box(s, first, last, last_end, "profiler_table", bounded, err) < 0 ? -1 : 1;
}

/*-*** other lines (memory prints) ***/

/* The line in s->line (starting at `start`) to on_text, with the lines
 * before it (cleaned into kept_text's slots, which an error refills). */
static int give_text(vr_joblog_scan *s, size_t start, vr_error *err)
{
    vr_log_line line = {line_number(s, start), s->line.data, s->line.len, "memory_print", 0, 0};
    int zoned;
    line.has_ts = vr_joblog_timestamp(line.text, line.len, &line.ts_ns, &zoned);
    if (line.has_ts)
        saw_stamp(s, line.ts_ns, zoned);
    size_t n = 0;
    for (size_t at = start; n < VR_JOBLOG_AROUND && at > 0; n++) {
        size_t a = line_start(s, at - 1);
        if (a == 0 && s->base != 0)
            break; /* cut by the window's start */
        keep_line(s, n, a, at - 1, line.number - 1 - n, "context");
        at = a;
    }
    s->stats.texts++;
    int64_t rank = read_rank(line.text, line.len < 40 ? line.len : 40, NULL);
    return s->sink->on_text(s->ud, &line, rank, s->kept, n, err);
}

/*-*** the window ***/

/* A line holding a needle (at `hit`): an error, a box, or nothing. Of a
 * line too long to keep whole, the part from just before the needle. */
static int take_line(vr_joblog_scan *s, size_t start, size_t hit, size_t *next, vr_error *err)
{
    size_t end = line_end(s, start);
    if (hit - start > LINE_MAX_KEPT / 2) {
        start = hit - 1024;
        s->stats.cut_lines++;
    }
    *next = end;
    clean_line(s, start, end, &s->line);
    const char *t = s->line.data;
    size_t n = s->line.len;
    for (size_t b = 0; b < sizeof boxes / sizeof *boxes; b++)
        if (find(t, n, boxes[b].marker) && box_line(t, n))
            return take_box(s, start, end, boxes[b].role, next, err);
    if (vr_proftable_is_header(t, n)) {
        int rc = take_table(s, start, end, next, err);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
    }
    int marker = start_marker(t, n);
    if (marker >= 0)
        return flush_held(s, err) < 0 ? -1 : take_oom(s, start, end, marker, next, err);
    int lib = vr_liboom_match(t, n);
    if (lib >= 0)
        return take_lib_oom(s, start, end, lib, next, err);
    if (find(t, n, "MaxInUse:"))
        take_tf_stats(s, start, end);
    return s->sink->on_text ? give_text(s, start, err) : 0;
}

/* The stamps of the region's first and last lines bound the log's times
 * (a log is written in time order), at no cost per line. */
static void sample_stamps(vr_joblog_scan *s, size_t from, size_t to)
{
    if (to <= from)
        return;
    size_t a = from > 0 && s->buf[from - 1] != '\n' ? line_end(s, from) + 1 : from;
    size_t z = line_start(s, to - 1);
    size_t at[2] = {a, z};
    for (int k = 0; k < 2; k++) {
        if (at[k] >= to)
            continue;
        size_t e = line_end(s, at[k]);
        int64_t ns;
        int zoned;
        vr_buf_clear(&s->scratch);
        vr_joblog_clean(s->buf + at[k], e - at[k] > 256 ? 256 : e - at[k], &s->scratch);
        if (s->scratch.len && vr_joblog_timestamp(s->scratch.data, s->scratch.len, &ns, &zoned))
            saw_stamp(s, ns, zoned);
    }
}

/* Scans [pos, limit): each needle found, in order, is its line's turn. */
static int scan_region(vr_joblog_scan *s, size_t limit, vr_error *err)
{
    const char *hit[NNEEDLES];
    size_t search_end = limit + 64 < s->fill ? limit + 64 : s->fill;
    sample_stamps(s, s->pos, limit);
    for (size_t k = 0; k < NNEEDLES; k++)
        hit[k] =
            s->pos < search_end ? find_needle(s->buf + s->pos, search_end - s->pos, k) : NULL;
    for (;;) {
        size_t first = SIZE_MAX;
        for (size_t k = 0; k < NNEEDLES; k++)
            if (hit[k] && (size_t)(hit[k] - s->buf) < first)
                first = (size_t)(hit[k] - s->buf);
        if (first >= limit)
            break;
        size_t start = line_start(s, first), next;
        if (start < s->consumed)
            start = s->consumed; /* the rest of a line an error or box ended in */
        if (take_line(s, start, first, &next, err) < 0)
            return -1;
        s->pos = next > first ? next : first + 1;
        if (next > first)
            s->consumed = next;
        for (size_t k = 0; k < NNEEDLES; k++)
            if (hit[k] && (size_t)(hit[k] - s->buf) < s->pos)
                hit[k] = s->pos < search_end
                             ? find_needle(s->buf + s->pos, search_end - s->pos, k)
                             : NULL;
    }
    if (s->pos < limit)
        s->pos = limit;
    return 0;
}

/* Drops what is more than HISTORY behind the scan position. */
static void slide(vr_joblog_scan *s)
{
    size_t keep = s->pos > HISTORY ? s->pos - HISTORY : 0;
    if (!keep)
        return;
    line_number(s, keep);
    memmove(s->buf, s->buf + keep, s->fill - keep);
    s->fill -= keep;
    s->pos -= keep;
    s->consumed = s->consumed > keep ? s->consumed - keep : 0;
    s->counted -= keep;
    s->base += keep;
}

vr_joblog_scan *vr_joblog_scan_new(const vr_joblog_sink *sink, void *ud)
{
    vr_joblog_scan *s = vr_xmalloc(sizeof *s);
    memset(s, 0, sizeof *s);
    s->sink = sink;
    s->ud = ud;
    s->cap = 65536;
    s->buf = vr_xmalloc(s->cap);
    s->stats.start_ns = INT64_MAX;
    s->stats.end_ns = INT64_MIN;
    return s;
}

char *vr_joblog_scan_space(vr_joblog_scan *s, size_t *room)
{
    if (s->fill == s->cap && s->cap < WINDOW) {
        s->cap = s->cap * 2 < WINDOW ? s->cap * 2 : WINDOW;
        s->buf = vr_xrealloc(s->buf, s->cap);
    }
    *room = s->cap - s->fill;
    return s->buf + s->fill;
}

int vr_joblog_scan_wrote(vr_joblog_scan *s, size_t n, vr_error *err)
{
    s->fill += n;
    if (s->fill < WINDOW)
        return 0;
    if (scan_region(s, s->fill - LOOKAHEAD, err) < 0)
        return -1;
    slide(s);
    return 0;
}

int vr_joblog_scan_feed(vr_joblog_scan *s, const char *data, size_t len, vr_error *err)
{
    while (len > 0) {
        size_t room;
        char *to = vr_joblog_scan_space(s, &room);
        size_t n = len < room ? len : room;
        memcpy(to, data, n);
        data += n;
        len -= n;
        if (vr_joblog_scan_wrote(s, n, err) < 0)
            return -1;
    }
    return 0;
}

int vr_joblog_scan_finish(vr_joblog_scan *s, vr_error *err)
{
    if (scan_region(s, s->fill, err) < 0 || flush_held(s, err) < 0)
        return -1;
    line_number(s, s->fill);
    s->stats.lines = s->lines_before + (s->fill > 0 && s->buf[s->fill - 1] != '\n');
    return 0;
}

const vr_joblog_stats *vr_joblog_scan_stats(const vr_joblog_scan *s)
{
    return &s->stats;
}

void vr_joblog_scan_free(vr_joblog_scan *s)
{
    if (!s)
        return;
    vr_buf_free(&s->line);
    vr_buf_free(&s->joined);
    vr_buf_free(&s->scratch);
    vr_buf_free(&s->frame);
    vr_buf_free(&s->above);
    vr_buf_free(&s->held_text);
    for (size_t k = 0; k < sizeof s->kept_text / sizeof *s->kept_text; k++)
        vr_buf_free(&s->kept_text[k]);
    free(s->buf);
    free(s);
}
