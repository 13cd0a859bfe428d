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

/* The role named `w` (len bytes) among those declared, or -1. */
static int role_index(const vr_rules *r, const char *w, size_t len)
{
    return word_index((const char *const *)r->role_name, r->nrole_names, w, len);
}

/* Bits of a '|'-list of declared roles ('-': a stack without one). */
static int parse_roles(const parse_at *at, const vr_rules *r, const char *value, int allow_none,
                       unsigned *set, int *neg)
{
    *neg = value[0] == '!';
    const char *p = value + *neg;
    *set = 0;
    for (;;) {
        size_t len = strcspn(p, "|");
        int i = allow_none && len == 1 && p[0] == '-' ? VR_ROLES_MAX : role_index(r, p, len);
        if (i < 0)
            return expected(at, "a role declared by a 'role' line above", p);
        *set |= 1u << i;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

static int parse_condition(const parse_at *at, const vr_rules *r, char *tok, vr_rule *rule)
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
    if (strcmp(key, "role") == 0 || strcmp(key, "within") == 0) {
        int is_role = key[0] == 'r';
        unsigned *set = is_role ? &rule->role_set : &rule->within_set;
        if (*set)
            return expected(at, "each condition once", key);
        return parse_roles(at, r, value, is_role, set,
                           is_role ? &rule->role_neg : &rule->within_neg);
    }
    if (strcmp(key, "step") == 0) {
        rule->step = strcmp(value, "yes") == 0 ? 1 : strcmp(value, "no") == 0 ? 0 : -2;
        return rule->step == -2 ? expected(at, "step=yes or step=no", value) : 0;
    }
    vr_rule_globs *g = strcmp(key, "op") == 0      ? &rule->op
                       : strcmp(key, "frame") == 0 ? &rule->frame
                       : strcmp(key, "file") == 0  ? &rule->file
                                                   : NULL;
    if (!g)
        return expected(
            at, "a condition alloc=, free=, step=, op=, frame=, file=, role= or within=", key);
    if (g->set)
        return expected(at, "each condition once", key);
    parse_globs(value, g);
    return 0;
}

/* The message names every category, from category.h's list. */
static int parse_category(const parse_at *at, const char *tok, vr_rule *rule)
{
    int c = tok ? word_index(vr_category_names, VR_CATEGORY_COUNT, tok, strlen(tok)) : -1;
    if (c >= 0) {
        rule->category = c;
        return 0;
    }
    vr_buf what = VR_BUF_INIT;
    vr_buf_puts(&what, "a category after '->' (");
    for (int i = 0; i < VR_CATEGORY_COUNT; i++)
        vr_buf_printf(&what, "%s%s", i ? ", " : "", vr_category_names[i]);
    vr_buf_puts(&what, ")");
    int rc = expected(at, what.data, tok ? tok : "end of line");
    vr_buf_free(&what);
    return rc;
}

static void globs_free(vr_rule_globs *g)
{
    for (size_t j = 0; j < g->n; j++)
        free(g->globs[j]);
    free(g->globs);
}

static void rule_free(vr_rule *rule)
{
    globs_free(&rule->op);
    globs_free(&rule->frame);
    globs_free(&rule->file);
    free(rule->name);
}

static void role_line_free(vr_role_line *line)
{
    globs_free(&line->frame);
    globs_free(&line->file);
}

/* A role line (modified in place): role NAME CONDITION..., the conditions
 * frame= and file= alone (on the same frame). */
static int parse_role(const parse_at *at, vr_rules *r, char *line, vr_role_line *out)
{
    static const char space[] = " \t\r";
    memset(out, 0, sizeof *out);
    char *save = NULL, *tok = strtok_r(line, space, &save); /* "role" */
    const char *name = strtok_r(NULL, space, &save);
    if (!name || strchr(name, '=') || strchr(name, '|') || strcmp(name, "-") == 0)
        return expected(at, "a role name after 'role'", name ? name : "end of line");
    int i = role_index(r, name, strlen(name));
    if (i < 0 && r->nrole_names == VR_ROLES_MAX)
        return expected(at, "at most 31 roles", name);
    if (i < 0) {
        i = (int)r->nrole_names++;
        r->role_name[i] = vr_xstrdup(name);
    }
    out->role = i;
    while ((tok = strtok_r(NULL, space, &save)) != NULL) {
        char *eq = strchr(tok, '=');
        vr_rule_globs *g = !eq || eq[1] == '\0'             ? NULL
                           : strncmp(tok, "frame=", 6) == 0 ? &out->frame
                           : strncmp(tok, "file=", 5) == 0  ? &out->file
                                                            : NULL;
        if (!g || g->set) {
            role_line_free(out);
            return expected(
                at, g ? "each condition once" : "a condition frame= or file= of a role", tok);
        }
        parse_globs(eq + 1, g);
    }
    if (!out->frame.set && !out->file.set)
        return expected(at, "a condition frame= or file= of a role", name);
    return 0;
}

/* A role line starts with the word "role" and has no '->' (a rule may be
 * named "role": rules files from before roles keep their meaning). */
static int is_role_line(const char *line)
{
    line += strspn(line, " \t\r");
    return strncmp(line, "role", 4) == 0 && strchr(" \t", line[4]) && line[4] &&
           !strstr(line, "->");
}

/* One rule line (modified in place): NAME CONDITION... -> CATEGORY. */
static int parse_rule(const parse_at *at, const vr_rules *r, char *line, vr_rule *rule)
{
    static const char space[] = " \t\r";
    memset(rule, 0, sizeof *rule);
    rule->step = -1;
    char *save = NULL, *tok = strtok_r(line, space, &save);
    rule->name = vr_xstrdup(tok);
    int rc = 0, arrow = 0;
    while (rc == 0 && !arrow && (tok = strtok_r(NULL, space, &save)) != NULL)
        rc = strcmp(tok, "->") == 0 ? (arrow = 1, 0) : parse_condition(at, r, tok, rule);
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

/* A role line or a rule, appended to r (caps: their arrays' room). */
static int parse_line(const parse_at *at, vr_rules *r, char *line, size_t *cap, size_t *rcap)
{
    int rc;
    if (is_role_line(line)) {
        vr_xgrow(&r->roles, rcap, r->nroles + 1, sizeof *r->roles, 16);
        rc = parse_role(at, r, line, &r->roles[r->nroles]);
        r->nroles += rc == 0;
        return rc;
    }
    if (r->n == VR_RULES_MAX)
        return expected(at, "at most 64 rules", line);
    vr_xgrow(&r->rule, cap, r->n + 1, sizeof *r->rule, 16);
    rc = parse_rule(at, r, line, &r->rule[r->n]);
    r->n += rc == 0;
    return rc;
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
    size_t cap = 0, rcap = 0;
    int rc = 0;
    for (size_t pos = 0; rc == 0 && pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
        char *line = vr_xstrndup(text + pos, n);
        pos += n + 1;
        at.line++;
        if (memchr(line, '\0', n))
            rc = expected(&at, "text", "a NUL byte");
        else if (!blank_or_comment(line))
            rc = parse_line(&at, r, line, &cap, &rcap);
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
    for (size_t i = 0; i < r->nroles; i++)
        role_line_free(&r->roles[i]);
    free(r->roles);
    for (size_t i = 0; i < r->nrole_names; i++)
        free(r->role_name[i]);
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

int vr_rules_frame_role(const vr_rules *r, const char *function, const char *file)
{
    for (size_t i = 0; i < r->nroles; i++) {
        const vr_role_line *x = &r->roles[i];
        if ((!x->frame.set || globs_hold(&x->frame, function)) &&
            (!x->file.set || globs_hold(&x->file, file)))
            return x->role;
    }
    return -1;
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
    unsigned rbits = f->role >= 0 ? 1u << f->role : VR_ROLE_NONE_BIT;
    for (size_t i = 0; i < r->n; i++) {
        const vr_rule *x = &r->rule[i];
        uint64_t bit = UINT64_C(1) << i;
        if (set_holds(x->alloc_set, x->alloc_neg, abits) &&
            set_holds(x->free_set, x->free_neg, fbits) &&
            (x->step < 0 || x->step == f->in_step) && (!x->op.set || (op_mask & bit)) &&
            (!(x->frame.set || x->file.set) || (f->has_stack && (frame_mask & bit))) &&
            (!x->role_set || (f->has_stack && set_holds(x->role_set, x->role_neg, rbits))) &&
            (!x->within_set ||
             (f->has_stack && set_holds(x->within_set, x->within_neg, f->within))))
            return (int)i;
    }
    return -1;
}
