/*-*** nvsmi_capture.c: a multi-section nvidia-smi capture ***/
/*
 * One file holding the output of several nvidia-smi commands, each in a
 * section headed by the command between two rules of '#':
 *
 *   ################################################################
 *   # load :: nvidia-smi (default table)
 *   # $ nvidia-smi
 *   ################################################################
 *   <the command's output>
 *
 * as nvidia_gpu_exporter's captures are written
 * (tests/data/realdata/nvsmi/exporter-capture-*.txt), and as a support
 * script collecting several commands into one file would write them. Each
 * section is read by the parser its command calls for (options[]): the
 * default table (nvsmi_table.h), --query-gpu and --query-compute-apps
 * (nvsmi_csv.h); help, version, topology, pmon/dmon and other output are
 * not GPU memory and are passed over. All sections write through one
 * vr_monitor, so a GPU seen by the table and by the CSV is one gpu row.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "import/monitor.h"
#include "import/readers/nvsmi/nvsmi_csv.h"
#include "import/readers/nvsmi/nvsmi_qtext.h"
#include "import/readers/nvsmi/nvsmi_table.h"

/* In order of precedence: the largest kind a command's words give wins
 * ("-q -x" is XML, "topo -m" is passed over). */
typedef enum {
    S_TABLE,    /* `nvidia-smi` alone, or with -l / -i ... */
    S_CSV_GPU,  /* --query-gpu=... --format=csv */
    S_CSV_APPS, /* --query-compute-apps=... --format=csv */
    S_QUERY,    /* -q text */
    S_XML,      /* -q -x */
    S_SKIP      /* not GPU memory */
} section_kind;

/* What a word of the command line makes the section; `prefix`: the word
 * starts with it ("--query-gpu=..."). Words not listed (-l 5, -i 0,
 * --format=csv) change nothing; another bare word is a subcommand (topo,
 * pmon, dmon, nvlink, mig ...), passed over. */
static const struct {
    const char *word;
    int prefix;
    section_kind kind;
} options[] = {
    {"--query-gpu=", 1, S_CSV_GPU},
    {"--query-compute-apps=", 1, S_CSV_APPS},
    {"-q", 0, S_QUERY},
    {"--query", 0, S_QUERY},
    {"-x", 0, S_XML},
    {"--xml-format", 0, S_XML},
    {"--query-", 1, S_SKIP}, /* accounted apps, retired pages, remapped rows ... */
    {"--help", 1, S_SKIP},   /* also --help-query-gpu ... */
    {"-h", 0, S_SKIP},
    {"--version", 0, S_SKIP},
    {"-L", 0, S_SKIP},
    {"--list-gpus", 0, S_SKIP},
    {"-B", 0, S_SKIP},
};

typedef struct {
    const char *s;
    size_t len;
} word;

static word next_word(const char *s, size_t len, size_t *i)
{
    while (*i < len && isspace((unsigned char)s[*i]))
        (*i)++;
    size_t start = *i;
    while (*i < len && !isspace((unsigned char)s[*i]))
        (*i)++;
    return (word){s + start, *i - start};
}

static int word_is(word w, const char *text, int prefix)
{
    size_t n = strlen(text);
    return prefix ? w.len >= n && memcmp(w.s, text, n) == 0
                  : w.len == n && memcmp(w.s, text, n) == 0;
}

static section_kind word_kind(word w)
{
    for (size_t k = 0; k < sizeof options / sizeof *options; k++)
        if (word_is(w, options[k].word, options[k].prefix))
            return options[k].kind;
    int number = 1;
    for (size_t i = 0; i < w.len; i++)
        number &= isdigit((unsigned char)w.s[i]) != 0;
    return w.s[0] == '-' || number ? S_TABLE : S_SKIP;
}

/* "nvidia-smi", "/usr/bin/nvidia-smi", "nvidia-smi.exe" */
static int is_nvidia_smi(word w)
{
    const char *base = w.s;
    for (size_t i = 0; i < w.len; i++)
        if (w.s[i] == '/' || w.s[i] == '\\')
            base = w.s + i + 1;
    size_t n = (size_t)(w.s + w.len - base);
    return n >= 10 && memcmp(base, "nvidia-smi", 10) == 0;
}

typedef struct {
    section_kind kind;
    word fields;  /* --query-*=LIST */
    int noheader; /* --format=csv,noheader */
} command;

static command read_command(const char *s, size_t len)
{
    command c = {S_SKIP, {NULL, 0}, 0};
    size_t i = 0;
    if (!is_nvidia_smi(next_word(s, len, &i)))
        return c;
    c.kind = S_TABLE;
    word w;
    while ((w = next_word(s, len, &i)).len) {
        section_kind k = word_kind(w);
        if (k > c.kind)
            c.kind = k;
        const char *eq = memchr(w.s, '=', w.len);
        if ((k == S_CSV_GPU || k == S_CSV_APPS) && eq)
            c.fields = (word){eq + 1, (size_t)(w.s + w.len - eq - 1)};
        if (word_is(w, "--format=", 1) && memmem(w.s, w.len, "noheader", 8))
            c.noheader = 1;
    }
    return c;
}

/*-*** sections ***/

typedef enum { C_BODY, C_HEAD } capture_state;

typedef struct {
    vr_import_ctx *ctx;
    vr_monitor mon;
    capture_state state;
    command cmd; /* the head's (its text in cmd_text) */
    char cmd_text[8192];
    size_t cmd_len;
    section_kind kind; /* the body's */
    vr_nvsmi_table table;
    vr_nvsmi_csv csv;
    vr_nvsmi_qtext *query; /* -q text (nvsmi_qtext.c) */
    uint64_t sections, unread;
    int stamped;
} capture;

/* A line of '#' only (at least 20): a rule around a section's head. */
static int is_rule(const char *s, size_t len)
{
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    if (len < 20)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (s[i] != '#')
            return 0;
    return 1;
}

static void begin_body(capture *c)
{
    command cmd =
        c->cmd_len ? read_command(c->cmd_text, c->cmd_len) : (command){S_SKIP, {NULL, 0}, 0};
    c->kind = cmd.kind;
    if (cmd.kind == S_TABLE) {
        vr_nvsmi_table_init(&c->table, &c->mon);
    } else if (cmd.kind == S_CSV_GPU || cmd.kind == S_CSV_APPS) {
        vr_nvsmi_csv_init(&c->csv, &c->mon);
        if (cmd.noheader && cmd.fields.len)
            vr_nvsmi_csv_fields(&c->csv, cmd.fields.s, cmd.fields.len, cmd.kind == S_CSV_APPS);
    } else if (cmd.kind == S_QUERY) {
        c->query = vr_nvsmi_qtext_init(&c->mon);
    } else if (cmd.kind == S_XML) {
        /* An XML section is a whole document with its own parser
         * (nvsmi_qxml.c reads files, not lines): not read inside a
         * capture yet, and said (unread_section). */
        c->unread++;
    }
    c->sections += cmd.kind <= S_QUERY;
    c->state = C_BODY;
}

/* A CSV section that cannot be read (rows without a header and no
 * field list on its command) is passed over with a warning: the other
 * sections are still good. */
static int end_csv(capture *c, vr_error *err)
{
    vr_error csv_err = VR_ERROR_INIT;
    int rc = vr_nvsmi_csv_finish(&c->csv, &csv_err);
    c->stamped |= c->csv.stamped;
    vr_nvsmi_csv_free(&c->csv);
    if (rc == 0)
        return 0;
    if (csv_err.code != VR_ERR_MALFORMED) {
        *err = csv_err;
        return -1;
    }
    vr_warn(c->ctx->warn, "%s", csv_err.msg);
    c->unread++;
    return 0;
}

static int end_body(capture *c, vr_error *err)
{
    section_kind kind = c->kind;
    c->kind = S_SKIP;
    if (kind == S_TABLE) {
        int rc = vr_nvsmi_table_finish(&c->table, err);
        c->stamped |= c->table.stamped;
        vr_nvsmi_table_free(&c->table);
        return rc;
    }
    if (kind == S_QUERY) {
        int rc = vr_nvsmi_qtext_finish(c->query, err);
        vr_nvsmi_qtext_free(c->query);
        c->query = NULL;
        /* the -q parser places its readings itself (a Timestamp read) */
        c->stamped |= c->ctx->clock == VR_CLOCK_WALL_LOCAL;
        return rc;
    }
    return kind == S_CSV_GPU || kind == S_CSV_APPS ? end_csv(c, err) : 0;
}

static int body_line(capture *c, const char *line, size_t len, uint64_t number, int cut,
                     vr_error *err)
{
    switch (c->kind) {
    case S_TABLE:
        return vr_nvsmi_table_line(&c->table, line, len, cut, err);
    case S_CSV_GPU:
    case S_CSV_APPS:
        return vr_nvsmi_csv_line(&c->csv, line, len, number, cut, err);
    case S_QUERY:
        return vr_nvsmi_qtext_line(c->query, line, len, number, cut, err);
    default:
        return 0;
    }
}

/* "# $ nvidia-smi -q": the head's command, kept for its body. */
static void head_line(capture *c, const char *line, size_t len)
{
    if (len < 4 || memcmp(line, "# $ ", 4) != 0)
        return;
    c->cmd_len = len - 4 < sizeof c->cmd_text ? len - 4 : sizeof c->cmd_text;
    memcpy(c->cmd_text, line + 4, c->cmd_len);
}

static int on_line(void *ud, const char *line, size_t len, uint64_t number, int cut,
                   vr_error *err)
{
    capture *c = ud;
    if (!cut && is_rule(line, len)) {
        if (c->state == C_HEAD) {
            begin_body(c);
            return 0;
        }
        c->state = C_HEAD;
        c->cmd_len = 0;
        return end_body(c, err);
    }
    if (c->state == C_HEAD) {
        head_line(c, line, len);
        return 0;
    }
    return body_line(c, line, len, number, cut, err);
}

/*-*** the reader ***/

static size_t count_marker(const char *head, size_t len, const char *marker)
{
    size_t n = 0, m = strlen(marker);
    const char *p = head, *end = head + len;
    while ((p = memmem(p, (size_t)(end - p), marker, m)) != NULL)
        n++, p += m;
    return n;
}

/* The exporter's title, or several commands' heads: either beats the
 * table's and the CSV's own signatures (the registry lists this first). */
static vr_sniff_level sniff_nvsmi_capture(const char *head, size_t len)
{
    return memmem(head, len, "# nvidia_gpu_exporter GPU capture", 33) ||
                   count_marker(head, len, "\n# $ nvidia-smi") >= 2
               ? VR_SNIFF_SIGNATURE
               : VR_SNIFF_NO;
}

static void capture_init(void *state, vr_import_ctx *ctx)
{
    capture *c = state;
    c->ctx = ctx;
    c->kind = S_SKIP;
    vr_monitor_init(&c->mon, ctx);
}

static int capture_finish(void *state, vr_error *err)
{
    capture *c = state;
    int rc = end_body(c, err);
    if (rc == 0)
        rc = vr_reader_tally(c->ctx, "unread_section", c->unread, err);
    if (rc == 0 && c->sections == 0)
        rc = vr_fail_code(err, VR_ERR_NOT_RECOGNISED,
                          "%s: no nvidia-smi section vramreport reads (a table, -q, "
                          "--query-gpu or --query-compute-apps)",
                          vr_monitor_where(&c->mon));
    c->ctx->clock = c->stamped ? VR_CLOCK_WALL_LOCAL : VR_CLOCK_NONE;
    return rc;
}

/* After a failed line or finish: the open section's parser (none when
 * finish ended it). */
static void capture_free(void *state)
{
    capture *c = state;
    vr_error ignored = VR_ERROR_INIT;
    end_body(c, &ignored);
    vr_monitor_free(&c->mon);
}

/* The command line of a --query-gpu with every field runs to 5 KB. */
static const vr_line_reader capture_lines = {sizeof(capture), (size_t)64 << 10, capture_init,
                                             on_line,         capture_finish,   capture_free};

const vr_reader vr_reader_nvsmi_capture = {
    "nvsmi_capture", "an nvidia-smi capture (several commands' output, one file)",
    sniff_nvsmi_capture, NULL, &capture_lines};
