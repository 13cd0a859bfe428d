/* The category rules: a small line format parsed into a table, and the
 * first-match evaluation the categorize pass runs on each allocation. The
 * rules themselves are data (schemas/categories.rules, or the user's file
 * given with --category-rules); nothing here knows what a gradient is. */
#include "analyze/rules.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/category.h"
#include "resources/resources.h"
#include "util/buf.h"
#include "util/hash.h"

static const char builtin_rules[] = "schemas/categories.rules";
static const size_t max_rules_file = 1 << 20;

static const char *const phase_names[VR_PHASE_COUNT] = {
    "before", "forward", "backward", "optimizer", "zero_grad", "other",
};


/* free= also takes these, after the phases. */
enum {
    FREE_NEVER = VR_PHASE_COUNT,
    FREE_SAME_OP,
    FREE_SAME_PHASE,
    FREE_SAME_STEP,
    FREE_LATER_STEP
};
static const char *const free_words[] = {"never", "same_op", "same_phase", "same_step",
                                         "later_step"};

const char *vr_phase_name(int phase)
{
    return phase >= 0 && phase < VR_PHASE_COUNT ? phase_names[phase] : NULL;
}

static int word_index(const char *const *words, size_t n, const char *w, size_t len);

/*-*** parsing ***/

typedef struct {
    const char *origin;
    size_t line;
    vr_error *err;
} parse_at;

static int expected(const parse_at *at, const char *what, const char *got)
{
    return vr_fail_code(at->err, VR_ERR_MALFORMED, "%s:%zu: expected %s, got '%.60s'", at->origin,
                        at->line, what, got);
}

static int word_index(const char *const *words, size_t n, const char *w, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(words[i]) == len && memcmp(words[i], w, len) == 0)
            return (int)i;
    return -1;
}

/* Bits of a '|'-list of phases (and, for free=, the free words). */
static int parse_set(const parse_at *at, const char *value, int is_free, unsigned *set, int *neg)
{
    *neg = value[0] == '!';
    const char *p = value + *neg;
    *set = 0;
    for (;;) {
        size_t len = strcspn(p, "|");
        int i = word_index(phase_names, VR_PHASE_COUNT, p, len);
        if (i < 0 && is_free) {
            i = word_index(free_words, sizeof free_words / sizeof *free_words, p, len);
            i = i < 0 ? -1 : i + VR_PHASE_COUNT;
        }
        if (i < 0)
            return expected(at,
                            is_free ? "a phase (before, forward, backward, optimizer, "
                                      "zero_grad, other) or never, same_op, same_phase, "
                                      "same_step, later_step"
                                    : "a phase (before, forward, backward, optimizer, "
                                      "zero_grad, other)",
                            p);
        *set |= 1u << i;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

static void parse_globs(const char *value, vr_rule_globs *g)
{
    g->set = 1;
    g->negate = value[0] == '!';
    const char *p = value + g->negate;
    size_t cap = 0;
    for (;;) {
        size_t len = strcspn(p, "|");
        vr_xgrow(&g->globs, &cap, g->n + 1, sizeof *g->globs, 4);
        g->globs[g->n++] = vr_xstrndup(p, len);
        if (p[len] == '\0')
            return;
        p += len + 1;
    }
}

static int parse_condition(const parse_at *at, char *tok, vr_rule *rule)
{
    char *eq = strchr(tok, '=');
    if (!eq || eq == tok || eq[1] == '\0')
        return expected(at, "a condition KEY=VALUE or '-> CATEGORY'", tok);
    *eq = '\0';
    const char *key = tok, *value = eq + 1;
    if (strcmp(key, "alloc") == 0)
        return parse_set(at, value, 0, &rule->alloc_set, &rule->alloc_neg);
    if (strcmp(key, "free") == 0)
        return parse_set(at, value, 1, &rule->free_set, &rule->free_neg);
    if (strcmp(key, "step") == 0) {
        rule->step = strcmp(value, "yes") == 0 ? 1 : strcmp(value, "no") == 0 ? 0 : -2;
        return rule->step == -2 ? expected(at, "step=yes or step=no", value) : 0;
    }
    vr_rule_globs *g = strcmp(key, "op") == 0      ? &rule->op
                       : strcmp(key, "frame") == 0 ? &rule->frame
                       : strcmp(key, "file") == 0  ? &rule->file
                                                   : NULL;
    if (!g)
        return expected(at, "a condition alloc=, free=, step=, op=, frame= or file=", key);
    if (g->set)
        return expected(at, "each condition once", key);
    parse_globs(value, g);
    return 0;
}

static int parse_category(const parse_at *at, const char *tok, vr_rule *rule)
{
    int c = tok ? word_index(vr_category_names, VR_CATEGORY_COUNT, tok, strlen(tok)) : -1;
    if (c < 0)
        return expected(at,
                        "a category after '->' (parameter, optimizer_state, input, "
                        "temporary, activation, gradient, autograd_detail, unknown)",
                        tok ? tok : "end of line");
    rule->category = c;
    return 0;
}

static void rule_free(vr_rule *rule)
{
    vr_rule_globs *gs[] = {&rule->op, &rule->frame, &rule->file};
    for (size_t i = 0; i < 3; i++) {
        for (size_t j = 0; j < gs[i]->n; j++)
            free(gs[i]->globs[j]);
        free(gs[i]->globs);
    }
    free(rule->name);
}

/* One rule line (modified in place): NAME CONDITION... -> CATEGORY. */
static int parse_rule(const parse_at *at, char *line, vr_rule *rule)
{
    static const char space[] = " \t\r";
    memset(rule, 0, sizeof *rule);
    rule->step = -1;
    char *save = NULL, *tok = strtok_r(line, space, &save);
    rule->name = vr_xstrdup(tok);
    int rc = 0, arrow = 0;
    while (rc == 0 && !arrow && (tok = strtok_r(NULL, space, &save)) != NULL)
        rc = strcmp(tok, "->") == 0 ? (arrow = 1, 0) : parse_condition(at, tok, rule);
    if (rc == 0 && !arrow)
        rc = expected(at, "'-> CATEGORY' at the end of the rule", rule->name);
    if (rc == 0)
        rc = parse_category(at, strtok_r(NULL, space, &save), rule);
    if (rc == 0 && (tok = strtok_r(NULL, space, &save)) != NULL)
        rc = expected(at, "the end of the line after the category", tok);
    if (rc < 0)
        rule_free(rule);
    return rc;
}

static int blank_or_comment(const char *line)
{
    line += strspn(line, " \t\r");
    return *line == '\0' || *line == '#';
}

int vr_rules_parse(vr_rules *r, const char *origin, const char *text, size_t len, vr_error *err)
{
    memset(r, 0, sizeof *r);
    vr_hash h;
    vr_hash_init(&h, 0);
    vr_hash_update(&h, text, len);
    vr_hash_hex(vr_hash_digest(&h), r->digest);
    r->origin = vr_xstrdup(origin);
    r->text = vr_xstrndup(text, len);
    r->len = len;
    parse_at at = {origin, 0, err};
    size_t cap = 0;
    int rc = 0;
    for (size_t pos = 0; rc == 0 && pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
        char *line = vr_xstrndup(text + pos, n);
        pos += n + 1;
        at.line++;
        if (memchr(line, '\0', n))
            rc = expected(&at, "text", "a NUL byte");
        else if (!blank_or_comment(line) && r->n == VR_RULES_MAX)
            rc = expected(&at, "at most 64 rules", line);
        else if (!blank_or_comment(line)) {
            vr_xgrow(&r->rule, &cap, r->n + 1, sizeof *r->rule, 16);
            rc = parse_rule(&at, line, &r->rule[r->n]);
            r->n += rc == 0;
        }
        free(line);
    }
    if (rc == 0 && r->n == 0)
        rc = vr_fail_code(err, VR_ERR_MALFORMED, "%s:1: expected at least one rule", origin);
    if (rc < 0)
        vr_rules_free(r);
    return rc;
}

static int read_small_file(const char *path, vr_buf *out, vr_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return vr_fail_code(err, VR_ERR_IO, "%s: cannot read the category rules: %s", path,
                            strerror(errno));
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0 && out->len <= max_rules_file)
        vr_buf_append(out, chunk, n);
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return vr_fail_code(err, VR_ERR_IO, "%s: cannot read the category rules", path);
    if (out->len > max_rules_file)
        return vr_fail_code(err, VR_ERR_MALFORMED, "%s:1: expected a rules file (at most 1 MiB)",
                            path);
    return 0;
}

int vr_rules_load(vr_rules *r, const char *path, vr_error *err)
{
    if (!path) {
        size_t len;
        const char *text = vr_resource_get(builtin_rules, &len);
        if (!text)
            return vr_fail(err, "%s: not built in", builtin_rules);
        return vr_rules_parse(r, builtin_rules, text, len, err);
    }
    vr_buf b = VR_BUF_INIT;
    int rc = read_small_file(path, &b, err);
    if (rc == 0)
        rc = vr_rules_parse(r, path, b.data ? b.data : "", b.len, err);
    vr_buf_free(&b);
    return rc;
}

void vr_rules_free(vr_rules *r)
{
    for (size_t i = 0; i < r->n; i++)
        rule_free(&r->rule[i]);
    free(r->rule);
    free(r->origin);
    free(r->text);
    memset(r, 0, sizeof *r);
}

/*-*** matching ***/

static int any_glob(const vr_rule_globs *g, const char *s)
{
    for (size_t i = 0; i < g->n; i++)
        if (strcmp(g->globs[i], "-") == 0 ? s == NULL : s && fnmatch(g->globs[i], s, 0) == 0)
            return 1;
    return 0;
}

static int globs_hold(const vr_rule_globs *g, const char *s)
{
    return any_glob(g, s) != g->negate;
}

uint64_t vr_rules_op_mask(const vr_rules *r, const char *op)
{
    uint64_t mask = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->rule[i].op.set && globs_hold(&r->rule[i].op, op))
            mask |= UINT64_C(1) << i;
    return mask;
}

uint64_t vr_rules_frame_mask(const vr_rules *r, const char *function, const char *file)
{
    uint64_t mask = 0;
    for (size_t i = 0; i < r->n; i++) {
        const vr_rule *x = &r->rule[i];
        if ((x->frame.set || x->file.set) && (!x->frame.set || globs_hold(&x->frame, function)) &&
            (!x->file.set || globs_hold(&x->file, file)))
            mask |= UINT64_C(1) << i;
    }
    return mask;
}

static unsigned free_bits(const vr_alloc_facts *f)
{
    unsigned bits = f->free_phase < 0 ? 1u << FREE_NEVER : 1u << f->free_phase;
    bits |= (unsigned)f->same_op << FREE_SAME_OP | (unsigned)f->same_phase << FREE_SAME_PHASE |
            (unsigned)f->same_step << FREE_SAME_STEP | (unsigned)f->later_step << FREE_LATER_STEP;
    return bits;
}

static int set_holds(unsigned set, int neg, unsigned bits)
{
    return !set || ((set & bits) != 0) != neg;
}

int vr_rules_match(const vr_rules *r, const vr_alloc_facts *f, uint64_t op_mask,
                   uint64_t frame_mask)
{
    unsigned fbits = free_bits(f), abits = 1u << f->alloc_phase;
    for (size_t i = 0; i < r->n; i++) {
        const vr_rule *x = &r->rule[i];
        uint64_t bit = UINT64_C(1) << i;
        if (set_holds(x->alloc_set, x->alloc_neg, abits) &&
            set_holds(x->free_set, x->free_neg, fbits) &&
            (x->step < 0 || x->step == f->in_step) && (!x->op.set || (op_mask & bit)) &&
            (!(x->frame.set || x->file.set) || (f->has_stack && (frame_mask & bit))))
            return (int)i;
    }
    return -1;
}
