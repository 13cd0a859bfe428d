#include "import/monitor.h"
#include "scan/statcheck.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/hash.h"
#include "util/sat.h"
#include "util/tz.h"

static const char monitor_sql[] = "schemas/monitor.sql";

void vr_monitor_sample_clear(vr_monitor_sample *s)
{
    s->ts_ns = s->used_bytes = s->total_bytes = s->free_bytes = s->reserved_bytes =
        s->util_gpu_pct = s->util_memory_pct = VR_MONITOR_NONE;
}

void vr_monitor_gpu_clear(vr_monitor_gpu *g)
{
    memset(g, 0, sizeof *g);
    g->idx = g->memory_total_bytes = VR_MONITOR_NONE;
}

const char *vr_monitor_where(const vr_monitor *m)
{
    return m->ctx && m->ctx->in ? vr_input_path(m->ctx->in) : "<input>";
}

void vr_monitor_init(vr_monitor *m, vr_import_ctx *ctx)
{
    memset(m, 0, sizeof *m);
    m->ctx = ctx;
}

void vr_monitor_free(vr_monitor *m)
{
    free(m->known);
    memset(m, 0, sizeof *m);
}

/*-*** GPUs ***/

/* A hash that is never 0 (0: not given). */
static uint64_t nonzero_hash(const void *data, size_t len, uint64_t seed)
{
    vr_hash h;
    vr_hash_init(&h, seed);
    vr_hash_update(&h, data, len);
    uint64_t d = vr_hash_digest(&h);
    return d ? d : 1;
}

static uint64_t text_hash(const char *s, size_t len)
{
    return len ? nonzero_hash(s, len, 0x6e7653) : 0;
}

/* One hex field of a bus id up to `stop`; 0 when none. */
static int hex_field(const char *s, size_t len, size_t *i, char stop, uint64_t *out)
{
    size_t start = *i;
    uint64_t v = 0;
    while (*i < len && isxdigit((unsigned char)s[*i]) && *i - start < 8) {
        char c = (char)tolower((unsigned char)s[(*i)++]);
        v = v * 16 + (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
    }
    *out = v;
    if (*i == start)
        return 0;
    if (stop == 0)
        return *i == len;
    return *i < len && s[(*i)++] == stop;
}

/* "00000000:18:00.0" and "0000:18:00.0" are the same bus id: compared as
 * (domain, bus, device, function); text that is not one, as text. */
static uint64_t bus_hash(const char *s, size_t len)
{
    uint64_t f[4];
    size_t i = 0;
    if (hex_field(s, len, &i, ':', &f[0]) && hex_field(s, len, &i, ':', &f[1]) &&
        hex_field(s, len, &i, '.', &f[2]) && hex_field(s, len, &i, 0, &f[3]))
        return nonzero_hash(f, sizeof f, 0x627573);
    return text_hash(s, len);
}

/* The gpu row's columns a sighting gives (complete_gpu's). */
enum {
    FILLED_UUID = 1,
    FILLED_BUS = 2,
    FILLED_IDX = 4,
    FILLED_TOTAL = 8,
    FILLED_NAME = 16,
    FILLED_WHOLE_NAME = 32 /* a name the table did not cut ("... ") */
};

static int cut_name(vr_monitor_text t)
{
    return t.len >= 3 && memcmp(t.s + t.len - 3, "...", 3) == 0;
}

static unsigned gives(const vr_monitor_gpu *g)
{
    return (g->uuid.len ? FILLED_UUID : 0u) | (g->bus_id.len ? FILLED_BUS : 0u) |
           (g->idx != VR_MONITOR_NONE ? FILLED_IDX : 0u) |
           (g->memory_total_bytes != VR_MONITOR_NONE ? FILLED_TOTAL : 0u) |
           (g->name.len ? FILLED_NAME : 0u) |
           (g->name.len && !cut_name(g->name) ? FILLED_WHOLE_NAME : 0u);
}

static vr_monitor_known identity(const vr_monitor_gpu *g)
{
    vr_monitor_known k = {0,
                          text_hash(g->uuid.s, g->uuid.len),
                          bus_hash(g->bus_id.s, g->bus_id.len),
                          text_hash(g->mig.s, g->mig.len),
                          g->idx,
                          gives(g)};
    return k;
}

/* How well a sighting names a known GPU: 3 same UUID, 2 same bus id, 1
 * same index; 0 when an identifier both give differs, or none is shared. */
static int match_level(const vr_monitor_known *k, const vr_monitor_known *s)
{
    if (k->mig != s->mig || (k->uuid && s->uuid && k->uuid != s->uuid) ||
        (k->bus && s->bus && k->bus != s->bus) ||
        (k->idx != VR_MONITOR_NONE && s->idx != VR_MONITOR_NONE && k->idx != s->idx))
        return 0;
    if (k->uuid && k->uuid == s->uuid)
        return 3;
    if (k->bus && k->bus == s->bus)
        return 2;
    return k->idx != VR_MONITOR_NONE && k->idx == s->idx ? 1 : 0;
}

/* A sighting with no identifier at all is one GPU of its own: index
 * NONE matches index NONE. */
static vr_monitor_known *find_known(vr_monitor *m, const vr_monitor_known *s)
{
    vr_monitor_known *best = NULL;
    int best_level = 0;
    int anonymous = !s->uuid && !s->bus && s->idx == VR_MONITOR_NONE;
    for (size_t i = 0; i < m->n; i++) {
        vr_monitor_known *k = &m->known[i];
        int level = anonymous
                        ? (!k->uuid && !k->bus && k->idx == VR_MONITOR_NONE && k->mig == s->mig)
                        : match_level(k, s);
        if (level > best_level)
            best = k, best_level = level;
    }
    return best;
}

static void learn(vr_monitor_known *k, const vr_monitor_known *s)
{
    if (!k->uuid)
        k->uuid = s->uuid;
    if (!k->bus)
        k->bus = s->bus;
    if (k->idx == VR_MONITOR_NONE)
        k->idx = s->idx;
}

static int bind_text_opt(sqlite3_stmt *st, const char *name, vr_monitor_text t, vr_error *err)
{
    return t.len ? vr_db_bind_text(st, name, t.s, t.len, err) : vr_db_bind_null(st, name, err);
}

static int bind_figure(sqlite3_stmt *st, const char *name, int64_t v, vr_error *err)
{
    return vr_db_bind_opt_int(st, name, v != VR_MONITOR_NONE, v, err);
}

static int bind_gpu(sqlite3_stmt *st, const vr_monitor_gpu *g, vr_error *err)
{
    return bind_text_opt(st, ":uuid", g->uuid, err) < 0 ||
                   bind_text_opt(st, ":bus_id", g->bus_id, err) < 0 ||
                   bind_text_opt(st, ":name", g->name, err) < 0 ||
                   bind_figure(st, ":idx", g->idx, err) < 0 ||
                   bind_figure(st, ":total", g->memory_total_bytes, err) < 0
               ? -1
               : 0;
}

static int64_t insert_gpu(vr_monitor *m, const vr_monitor_gpu *g, vr_error *err)
{
    vr_db *db = m->ctx->db;
    sqlite3_stmt *st = vr_db_stmt(db, monitor_sql, "insert_gpu", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":source", m->ctx->source_id, err) < 0 || bind_gpu(st, g, err) < 0 ||
        bind_text_opt(st, ":mig", g->mig, err) < 0 ||
        bind_text_opt(st, ":host", g->host, err) < 0)
        return -1;
    if (vr_db_step_done(db, st, err) < 0)
        return -1;
    return sqlite3_last_insert_rowid(vr_db_handle(db));
}

static int complete_gpu(vr_monitor *m, int64_t id, const vr_monitor_gpu *g, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(m->ctx->db, monitor_sql, "complete_gpu", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":gpu", id, err) < 0 || bind_gpu(st, g, err) < 0)
        return -1;
    return vr_db_step_done(m->ctx->db, st, err);
}

int64_t vr_monitor_gpu_id(vr_monitor *m, const vr_monitor_gpu *g, vr_error *err)
{
    vr_monitor_known seen = identity(g);
    vr_monitor_known *k = find_known(m, &seen);
    if (k) {
        learn(k, &seen);
        if ((seen.filled & ~k->filled) == 0)
            return k->id; /* nothing the row lacks */
        k->filled |= seen.filled;
        return complete_gpu(m, k->id, g, err) < 0 ? -1 : k->id;
    }
    if (m->n >= VR_MONITOR_MAX_GPUS)
        return vr_fail_code(err, VR_ERR_MALFORMED,
                            "%s: more than %d different GPUs named: not an nvidia-smi log of "
                            "one job's machines",
                            vr_monitor_where(m), VR_MONITOR_MAX_GPUS);
    seen.id = insert_gpu(m, g, err);
    if (seen.id < 0)
        return -1;
    vr_xgrow(&m->known, &m->cap, m->n + 1, sizeof *m->known, 8);
    m->known[m->n++] = seen;
    return seen.id;
}

/*-*** readings and processes ***/

static void note_time(vr_import_ctx *c, int64_t ts)
{
    if (ts == VR_MONITOR_NONE)
        return;
    if (ts < c->start_ns)
        c->start_ns = ts;
    if (ts > c->end_ns)
        c->end_ns = ts;
}

int64_t vr_monitor_add_sample(vr_monitor *m, int64_t gpu_id, const vr_monitor_sample *s,
                              vr_error *err)
{
    vr_db *db = m->ctx->db;
    sqlite3_stmt *st = vr_db_stmt(db, monitor_sql, "insert_gpu_sample", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":source", m->ctx->source_id, err) < 0 ||
        vr_db_bind_int(st, ":gpu", gpu_id, err) < 0 ||
        vr_db_bind_int(st, ":seq", m->seq++, err) < 0 ||
        bind_figure(st, ":ts", s->ts_ns, err) < 0 ||
        bind_figure(st, ":used", s->used_bytes, err) < 0 ||
        bind_figure(st, ":total", s->total_bytes, err) < 0 ||
        bind_figure(st, ":free", s->free_bytes, err) < 0 ||
        bind_figure(st, ":reserved", s->reserved_bytes, err) < 0 ||
        bind_figure(st, ":util_gpu", s->util_gpu_pct, err) < 0 ||
        bind_figure(st, ":util_memory", s->util_memory_pct, err) < 0)
        return -1;
    if (vr_db_step_done(db, st, err) < 0)
        return -1;
    m->ctx->events++;
    note_time(m->ctx, s->ts_ns);
    return sqlite3_last_insert_rowid(vr_db_handle(db));
}

int vr_monitor_add_process(vr_monitor *m, int64_t gpu_id, int64_t sample_id, int64_t ts_ns,
                           const vr_monitor_process *p, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(m->ctx->db, monitor_sql, "insert_process_sample", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":source", m->ctx->source_id, err) < 0 ||
        bind_figure(st, ":gpu", gpu_id, err) < 0 ||
        bind_figure(st, ":sample", sample_id, err) < 0 ||
        bind_figure(st, ":ts", ts_ns, err) < 0 || bind_figure(st, ":pid", p->pid, err) < 0 ||
        bind_text_opt(st, ":name", p->name, err) < 0 ||
        bind_text_opt(st, ":type", p->type, err) < 0 ||
        bind_figure(st, ":used", p->used_bytes, err) < 0)
        return -1;
    note_time(m->ctx, ts_ns);
    return vr_db_step_done(m->ctx->db, st, err);
}

/*-*** values ***/

static void trim(const char **s, size_t *len)
{
    while (*len && isspace((unsigned char)**s))
        (*s)++, (*len)--;
    while (*len && isspace((unsigned char)(*s)[*len - 1]))
        (*len)--;
}

/* nvidia-smi's units; KB/MB/GB are binary there too. */
static const struct {
    const char *name;
    int64_t bytes;
} units[] = {
    {"B", 1},         {"KiB", 1 << 10},          {"MiB", 1 << 20},
    {"GiB", 1 << 30}, {"TiB", INT64_C(1) << 40}, {"KB", 1 << 10},
    {"MB", 1 << 20},  {"GB", 1 << 30},           {"TB", INT64_C(1) << 40},
};

static int64_t unit_bytes(const char *s, size_t len)
{
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (strlen(units[i].name) == len && memcmp(units[i].name, s, len) == 0)
            return units[i].bytes;
    return 0;
}

/* Digits, an optional fraction: the value times `scale`, exactly for
 * whole numbers and rounded to the byte otherwise. Returns the bytes
 * consumed, 0 if no digit. */
static size_t scaled_number(const char *s, size_t len, int64_t scale, int64_t *out)
{
    size_t i = 0;
    int64_t whole = 0, frac = 0, frac_div = 1;
    while (i < len && isdigit((unsigned char)s[i]))
        whole = vr_sat_add(vr_sat_mul(whole, 10), s[i++] - '0');
    if (i == 0)
        return 0;
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && isdigit((unsigned char)s[i])) {
            if (frac_div < INT64_C(1000000000))
                frac = frac * 10 + (s[i] - '0'), frac_div *= 10;
            i++;
        }
    }
    *out = vr_sat_add(vr_sat_mul(whole, scale), (frac * scale + frac_div / 2) / frac_div);
    return i;
}

int vr_monitor_size(const char *s, size_t len, int64_t default_unit, int64_t *bytes)
{
    trim(&s, &len);
    int64_t value;
    size_t n = scaled_number(s, len, 1, &value);
    if (n == 0)
        return 0;
    const char *u = s + n;
    size_t ulen = len - n;
    trim(&u, &ulen);
    int64_t scale = ulen ? unit_bytes(u, ulen) : default_unit;
    if (scale <= 0)
        return 0;
    /* Past 1 PiB no GPU's memory: a corrupt figure (saturated at 8 EiB
     * before), which the readers skip and count as malformed. */
    return scaled_number(s, n, scale, bytes) == n && *bytes <= VR_STAT_MAX_BYTES;
}

int vr_monitor_int(const char *s, size_t len, int64_t *out)
{
    trim(&s, &len);
    if (len && s[len - 1] == '%') {
        len--;
        trim(&s, &len);
    }
    size_t i = 0;
    int64_t v = 0;
    while (i < len && isdigit((unsigned char)s[i]))
        v = vr_sat_add(vr_sat_mul(v, 10), s[i++] - '0');
    if (i == 0 || i != len)
        return 0;
    *out = v;
    return 1;
}

/* Reads `width` digits (or up to `width` when width < 0) at s[*i]. */
static int digits(const char *s, size_t len, size_t *i, int width, int *out)
{
    int n = 0, v = 0, max = width < 0 ? -width : width;
    while (*i < len && n < max && isdigit((unsigned char)s[*i]))
        v = v * 10 + (s[(*i)++] - '0'), n++;
    *out = v;
    return width < 0 ? n > 0 : n == width;
}

static int expect(const char *s, size_t len, size_t *i, char c)
{
    if (*i < len && s[*i] == c) {
        (*i)++;
        return 1;
    }
    return 0;
}

/* The fraction after a '.', as nanoseconds. */
static int64_t fraction_ns(const char *s, size_t len, size_t *i)
{
    int64_t ns = 0, scale = 100000000;
    if (!expect(s, len, i, '.'))
        return 0;
    while (*i < len && isdigit((unsigned char)s[*i])) {
        ns += (s[(*i)++] - '0') * scale;
        scale /= 10;
    }
    return ns;
}

/* "2024/03/12 10:15:32.123" */
static int csv_stamp(const char *s, size_t len, int64_t *ns)
{
    size_t i = 0;
    int y, mo, d, h, mi, sec;
    if (!digits(s, len, &i, 4, &y) || !expect(s, len, &i, '/') || !digits(s, len, &i, 2, &mo) ||
        !expect(s, len, &i, '/') || !digits(s, len, &i, 2, &d) || !expect(s, len, &i, ' ') ||
        !digits(s, len, &i, 2, &h) || !expect(s, len, &i, ':') || !digits(s, len, &i, 2, &mi) ||
        !expect(s, len, &i, ':') || !digits(s, len, &i, 2, &sec))
        return 0;
    int64_t frac = fraction_ns(s, len, &i);
    return i == len && vr_tz_civil_to_ns(y, mo, d, h, mi, sec, frac, ns) == 0;
}

/* "Tue Mar 12 10:15:32 2024" (ctime's layout; the day may be padded). */
static int ctime_stamp(const char *s, size_t len, int64_t *ns)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    if (len < 20 || s[3] != ' ' || s[7] != ' ')
        return 0;
    int mo = 0;
    for (int k = 0; k < 12 && !mo; k++)
        if (memcmp(s + 4, months + 3 * k, 3) == 0)
            mo = k + 1;
    size_t i = 8;
    while (i < len && s[i] == ' ')
        i++;
    int d, h, mi, sec, y;
    if (!mo || !digits(s, len, &i, -2, &d) || !expect(s, len, &i, ' ') ||
        !digits(s, len, &i, 2, &h) || !expect(s, len, &i, ':') || !digits(s, len, &i, 2, &mi) ||
        !expect(s, len, &i, ':') || !digits(s, len, &i, 2, &sec) || !expect(s, len, &i, ' ') ||
        !digits(s, len, &i, 4, &y))
        return 0;
    return i == len && vr_tz_civil_to_ns(y, mo, d, h, mi, sec, 0, ns) == 0;
}

int vr_monitor_stamp(const char *s, size_t len, int64_t *ns)
{
    trim(&s, &len);
    return csv_stamp(s, len, ns) || ctime_stamp(s, len, ns);
}
