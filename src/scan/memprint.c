/* Memory print lines (memprint.h). The rules are data
 * (schemas/memprint.patterns); this file reads them and walks them over
 * a line: each rule's labels are looked for, the number after each read
 * with its unit (the units are a table, all 1024-based), and the first
 * rule with an allocated or max_allocated figure names the line. */
#include "scan/memprint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resources/resources.h"
#include "util/buf.h"
#include "scan/statcheck.h"

static const char builtin_rules[] = "schemas/memprint.patterns";

#define MAX_RULES 48
#define MAX_LABELS 24
#define MAX_CONTEXT 48
#define TEXT_MAX 96
#define NAME_MAX_ 32
#define SEPARATOR_RUN 8 /* blanks, ':' and '=' read between a label and its number */

const char *const vr_memprint_role_names[VR_MP_ROLES] = {"allocated", "reserved", "max_allocated",
                                                         "max_reserved"};

/* Units as printed; longer names first (so "MB" is not read as "M"). */
static const struct {
    const char *name;
    int shift;
} units[] = {{"bytes", 0}, {"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40},
             {"KB", 10},   {"MB", 20},  {"GB", 30},  {"TB", 40},  {"B", 0},
             {"K", 10},    {"M", 20},   {"G", 30},   {"T", 40}};

static const char *const figures[] = {"current", "peak"};

/* Between a label and its number (UTF-8 '：' is a full-width colon). */
static const char *const separators[] = {" ", "\t", ":", "=", "\xef\xbc\x9a"};
/* Before a step's or an epoch's number: "Epoch [1]", "step #3". */
static const char *const context_separators[] = {" ", "\t", ":", "=",
                                                 "[", "(",  "#", "\xef\xbc\x9a"};

typedef enum { CTX_STEP, CTX_EPOCH, CTX_DEVICE, CTX_KINDS } context_kind;
static const char *const context_names[CTX_KINDS] = {"step", "epoch", "device"};

typedef struct {
    char text[TEXT_MAX];
    size_t len;
    vr_memprint_role role;
} label;

typedef struct {
    char framework[NAME_MAX_];
    const char *figure;
    char unit[8]; /* "" when a number needs its printed unit */
    char requires[TEXT_MAX];
    label labels[MAX_LABELS];
    size_t nlabels;
} print_rule;

typedef struct {
    char text[TEXT_MAX];
    size_t len;
    context_kind kind;
} context_rule;

struct vr_memprint_rules {
    print_rule rule[MAX_RULES];
    size_t nrules;
    context_rule context[MAX_CONTEXT];
    size_t ncontext;
};

/*-*** small helpers ***/

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int is_word(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_letter(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int at(const char *s, size_t n, const char *word)
{
    size_t k = strlen(word);
    return n >= k && memcmp(s, word, k) == 0;
}

/* The separators' run at s (at most SEPARATOR_RUN of them). */
static size_t skip_any(const char *s, size_t n, const char *const *set, size_t nset)
{
    size_t i = 0;
    for (size_t count = 0; count < SEPARATOR_RUN && i < n; count++) {
        size_t k = 0;
        while (k < nset && !at(s + i, n - i, set[k]))
            k++;
        if (k == nset)
            break;
        i += strlen(set[k]);
    }
    return i;
}

/*-*** figures ***/

static int unit_at(const char *s, size_t n, size_t *used)
{
    for (size_t u = 0; u < sizeof units / sizeof *units; u++) {
        size_t k = strlen(units[u].name);
        if (at(s, n, units[u].name) && !(k < n && is_letter(s[k]))) {
            *used = k;
            return (int)u;
        }
    }
    return -1;
}

static int unit_named(const char *name)
{
    for (size_t u = 0; u < sizeof units / sizeof *units; u++)
        if (strcmp(units[u].name, name) == 0)
            return (int)u;
    return -1;
}

/* "12.34 GB" at s (or "12.34" in default_unit): the bytes, rounded to
 * the nearest, and the unit read. 0 when it is no figure, -1 when it is
 * one no allocator gives: over 1 PiB (statcheck.h), 19 digits or more. */
static int read_figure(const char *s, size_t n, const char *default_unit, int64_t *bytes,
                       const char **unit)
{
    size_t i = 0, digits = 0;
    uint64_t ip = 0, frac = 0, scale = 1;
    for (; i < n && is_digit(s[i]); i++, digits++)
        if (digits < 18)
            ip = ip * 10 + (uint64_t)(s[i] - '0');
    if (!digits)
        return 0;
    if (i + 1 < n && s[i] == '.' && is_digit(s[i + 1]))
        for (i++; i < n && is_digit(s[i]); i++)
            if (scale < 1000000000) {
                frac = frac * 10 + (uint64_t)(s[i] - '0');
                scale *= 10;
            }
    size_t j = i;
    while (j < n && s[j] == ' ' && j - i < 2)
        j++;
    size_t used;
    int u = unit_at(s + j, n - j, &used);
    if (u < 0 && i < n && (is_letter(s[i]) || s[i] == '.'))
        return 0; /* "3x", "1.2.3": not a size */
    if (u < 0 && (!default_unit[0] || (u = unit_named(default_unit)) < 0))
        return 0;
    int shift = units[u].shift;
    if (digits > 18 || ip > (uint64_t)VR_STAT_MAX_BYTES >> shift)
        return -1;
    uint64_t part = ((frac << shift) + scale / 2) / scale;
    *bytes = (int64_t)((ip << shift) + part);
    *unit = units[u].name;
    return *bytes > VR_STAT_MAX_BYTES ? -1 : 1;
}

int vr_memprint_size(const char *s, size_t n, int64_t *bytes, const char **unit)
{
    return read_figure(s, n, "", bytes, unit);
}

/*-*** labels ***/

/* Whether the label found at `pos` stands there: a word's start, and no
 * longer label of the same rule ends where it ends. */
static int label_stands(const print_rule *r, const label *l, const char *s, size_t pos)
{
    if (is_word(l->text[0]) && pos > 0 && is_word(s[pos - 1]))
        return 0;
    size_t end = pos + l->len;
    for (size_t k = 0; k < r->nlabels; k++) {
        const label *o = &r->labels[k];
        if (o->len > l->len && end >= o->len && memcmp(s + end - o->len, o->text, o->len) == 0)
            return 0;
    }
    return 1;
}

/* The label's first figure in the line; 0 when none, -1 when it is
 * impossible. */
static int label_figure(const print_rule *r, const label *l, const char *s, size_t n,
                        int64_t *bytes, const char **unit)
{
    for (const char *p = s; p < s + n && (p = memmem(p, (size_t)(s + n - p), l->text, l->len));
         p++) {
        size_t pos = (size_t)(p - s), after = pos + l->len;
        if (!label_stands(r, l, s, pos))
            continue;
        after +=
            skip_any(s + after, n - after, separators, sizeof separators / sizeof *separators);
        int rc = read_figure(s + after, n - after, r->unit, bytes, unit);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* 1 the rule reads the line, -1 it would but a figure is impossible
 * (out->impossible), 0 not. */
static int rule_match(const print_rule *r, const char *s, size_t n, vr_memprint *out)
{
    if (r->requires[0] && !memmem(s, n, r->requires, strlen(r->requires)))
        return 0;
    memset(out->has, 0, sizeof out->has);
    out->impossible = -1;
    out->unit[0] = '\0';
    for (size_t k = 0; k < r->nlabels; k++) {
        const label *l = &r->labels[k];
        int64_t bytes;
        const char *unit;
        int rc = out->has[l->role] ? 0 : label_figure(r, l, s, n, &bytes, &unit);
        if (rc < 0 && out->impossible < 0)
            out->impossible = (int)l->role;
        if (rc == 0)
            continue;
        out->has[l->role] = 1; /* an impossible figure stands for its role too */
        out->bytes[l->role] = rc > 0 ? bytes : 0;
        if (rc < 0)
            continue;
        if (!out->unit[0])
            snprintf(out->unit, sizeof out->unit, "%s", unit);
    }
    if (!out->has[VR_MP_ALLOCATED] && !out->has[VR_MP_MAX_ALLOCATED])
        return 0;
    out->framework = r->framework;
    out->figure = r->figure;
    return out->impossible < 0 ? 1 : -1;
}

/*-*** steps, epochs, devices ***/

/* The number after a context label at s: 1 and *v. A fraction ("'epoch':
 * 0.09") is no step. */
static int context_number(const context_rule *c, const char *s, size_t n, size_t pos, int64_t *v)
{
    if (is_word(c->text[0]) && pos > 0 && is_word(s[pos - 1]))
        return 0;
    size_t i = pos + c->len;
    i += skip_any(s + i, n - i, context_separators,
                  sizeof context_separators / sizeof *context_separators);
    size_t d = 0;
    int64_t x = 0;
    for (; i < n && is_digit(s[i]) && d < 12; i++, d++)
        x = x * 10 + (s[i] - '0');
    if (!d || (i < n && (is_digit(s[i]) || is_letter(s[i]) || s[i] == '_')) ||
        (i + 1 < n && s[i] == '.' && is_digit(s[i + 1])))
        return 0;
    *v = x;
    return 1;
}

static int context_value(const vr_memprint_rules *r, context_kind kind, const char *s, size_t n,
                         int64_t *v)
{
    for (size_t k = 0; k < r->ncontext; k++) {
        const context_rule *c = &r->context[k];
        if (c->kind != kind)
            continue;
        for (const char *p = s;
             p < s + n && (p = memmem(p, (size_t)(s + n - p), c->text, c->len)); p++)
            if (context_number(c, s, n, (size_t)(p - s), v))
                return 1;
    }
    return 0;
}

void vr_memprint_context(const vr_memprint_rules *r, const char *s, size_t n, vr_memprint *p)
{
    if (!p->has_step)
        p->has_step = context_value(r, CTX_STEP, s, n, &p->step);
    if (!p->has_epoch)
        p->has_epoch = context_value(r, CTX_EPOCH, s, n, &p->epoch);
}

int vr_memprint_match(const vr_memprint_rules *r, const char *s, size_t n, vr_memprint *out)
{
    memset(out, 0, sizeof *out);
    out->device_idx = -1;
    out->impossible = -1;
    for (size_t k = 0; k < r->nrules; k++) {
        int rc = rule_match(&r->rule[k], s, n, out);
        if (rc < 0)
            return -1;
        if (rc == 0)
            continue;
        out->has_step = context_value(r, CTX_STEP, s, n, &out->step);
        out->has_epoch = context_value(r, CTX_EPOCH, s, n, &out->epoch);
        int64_t dev;
        if (context_value(r, CTX_DEVICE, s, n, &dev))
            out->device_idx = dev;
        return 1;
    }
    return 0;
}

/*-*** the rules file ***/

typedef struct {
    const char *p, *end;
    const char *name;
    size_t line;
    vr_error *err;
} tokens;

/* The next word or "quoted text" of the line into out; 0 at its end, -1 bad. */
static int next_token(tokens *t, char *out, size_t cap)
{
    while (t->p < t->end && (*t->p == ' ' || *t->p == '\t'))
        t->p++;
    if (t->p >= t->end)
        return 0;
    const char *a = t->p, *b;
    if (*a == '"') {
        b = memchr(a + 1, '"', (size_t)(t->end - a - 1));
        if (!b)
            return vr_fail(t->err, "%s: line %zu: a quote is not closed", t->name, t->line);
        a++;
        t->p = b + 1;
    } else {
        b = a;
        while (b < t->end && *b != ' ' && *b != '\t')
            b++;
        t->p = b;
    }
    if ((size_t)(b - a) >= cap || b == a)
        return vr_fail(t->err, "%s: line %zu: a word is empty or longer than %zu bytes", t->name,
                       t->line, cap - 1);
    memcpy(out, a, (size_t)(b - a));
    out[b - a] = '\0';
    return 1;
}

static int role_named(const char *w)
{
    for (int k = 0; k < VR_MP_ROLES; k++)
        if (strcmp(vr_memprint_role_names[k], w) == 0)
            return k;
    return -1;
}

static int parse_print(vr_memprint_rules *rs, tokens *t)
{
    if (rs->nrules == MAX_RULES)
        return vr_fail(t->err, "%s: line %zu: more than %d print rules", t->name, t->line,
                       MAX_RULES);
    print_rule *r = &rs->rule[rs->nrules];
    memset(r, 0, sizeof *r);
    char fig[16], word[TEXT_MAX];
    if (next_token(t, r->framework, sizeof r->framework) <= 0 ||
        next_token(t, fig, sizeof fig) <= 0 || next_token(t, r->unit, sizeof r->unit) <= 0)
        return vr_fail(t->err, "%s: line %zu: expected: print <framework> <current|peak> <unit>",
                       t->name, t->line);
    for (size_t k = 0; k < sizeof figures / sizeof *figures; k++)
        if (strcmp(fig, figures[k]) == 0)
            r->figure = figures[k];
    if (!r->figure)
        return vr_fail(t->err, "%s: line %zu: '%s' is no figure (current, peak)", t->name,
                       t->line, fig);
    if (strcmp(r->unit, "-") == 0)
        r->unit[0] = '\0';
    else if (unit_named(r->unit) < 0)
        return vr_fail(t->err, "%s: line %zu: '%s' is no unit", t->name, t->line, r->unit);
    int rc;
    while ((rc = next_token(t, word, sizeof word)) > 0) {
        int role = role_named(word);
        int req = strcmp(word, "requires") == 0;
        if (role < 0 && !req)
            return vr_fail(t->err,
                           "%s: line %zu: '%s' is no role (allocated, reserved, "
                           "max_allocated, max_reserved) nor 'requires'",
                           t->name, t->line, word);
        if (!req && r->nlabels == MAX_LABELS)
            return vr_fail(t->err, "%s: line %zu: more than %d labels", t->name, t->line,
                           MAX_LABELS);
        label *l = &r->labels[r->nlabels];
        if (next_token(t, req ? r->requires : l->text, TEXT_MAX) <= 0)
            return vr_fail(t->err, "%s: line %zu: '%s' without its text", t->name, t->line, word);
        if (!req) {
            l->len = strlen(l->text);
            l->role = (vr_memprint_role)role;
            r->nlabels++;
        }
    }
    if (rc < 0)
        return -1;
    if (!r->nlabels)
        return vr_fail(t->err, "%s: line %zu: a print rule without labels", t->name, t->line);
    rs->nrules++;
    return 0;
}

static int parse_context(vr_memprint_rules *rs, tokens *t, context_kind kind)
{
    if (rs->ncontext == MAX_CONTEXT)
        return vr_fail(t->err, "%s: line %zu: more than %d step/epoch/device rules", t->name,
                       t->line, MAX_CONTEXT);
    context_rule *c = &rs->context[rs->ncontext];
    if (next_token(t, c->text, sizeof c->text) <= 0)
        return vr_fail(t->err, "%s: line %zu: expected: %s \"label\"", t->name, t->line,
                       context_names[kind]);
    c->len = strlen(c->text);
    c->kind = kind;
    rs->ncontext++;
    return 0;
}

static int parse_line(vr_memprint_rules *rs, tokens *t)
{
    char word[16];
    int rc = next_token(t, word, sizeof word);
    if (rc <= 0 || word[0] == '#')
        return rc;
    if (strcmp(word, "print") == 0)
        return parse_print(rs, t);
    for (int k = 0; k < CTX_KINDS; k++)
        if (strcmp(word, context_names[k]) == 0)
            return parse_context(rs, t, (context_kind)k);
    return vr_fail(t->err, "%s: line %zu: '%s': expected print, step, epoch or device", t->name,
                   t->line, word);
}

vr_memprint_rules *vr_memprint_rules_parse(const char *text, size_t len, const char *name,
                                           vr_error *err)
{
    vr_memprint_rules *rs = vr_xmalloc(sizeof *rs);
    memset(rs, 0, sizeof *rs);
    tokens t = {text, text, name, 0, err};
    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        t.p = p;
        t.end = nl ? nl : end;
        t.end -= t.end > p && t.end[-1] == '\r';
        t.line++;
        if (parse_line(rs, &t) < 0) {
            free(rs);
            return NULL;
        }
        p = nl ? nl + 1 : end;
    }
    return rs;
}

vr_memprint_rules *vr_memprint_rules_builtin(vr_error *err)
{
    size_t len;
    const char *text = vr_resource_get(builtin_rules, &len);
    if (!text) {
        vr_fail(err, "%s is not built in", builtin_rules);
        return NULL;
    }
    return vr_memprint_rules_parse(text, len, builtin_rules, err);
}

void vr_memprint_rules_free(vr_memprint_rules *r)
{
    free(r);
}

void vr_memprint_labels(const vr_memprint_rules *r,
                        void (*fn)(void *ud, const char *rule_requires, const char *label),
                        void *ud)
{
    for (size_t k = 0; k < r->nrules; k++)
        for (size_t l = 0; l < r->rule[k].nlabels; l++)
            fn(ud, r->rule[k].requires, r->rule[k].labels[l].text);
}
