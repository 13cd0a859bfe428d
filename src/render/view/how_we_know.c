/* The breakdown's inferences in words (how_we_know.h). */
#include "render/view/how_we_know.h"

#include <stdio.h>
#include <string.h>

#include "render/results/doc.h"
#include "util/buf.h"
#include "util/units.h"

/* An evidence figure of a row by name: its integer, or -1. */
static long long figure(const cJSON *row, const char *name)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(row, "evidence"))
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
        long long v;
        if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0 &&
            vr_results_int(cJSON_GetObjectItemCaseSensitive(e, "value"), &v))
            return v;
    }
    return -1;
}

static const char *text_figure(const cJSON *row, const char *name)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(row, "evidence"))
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "value");
        if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0 && cJSON_IsString(v))
            return v->valuestring;
    }
    return NULL;
}

typedef struct {
    char s[32];
} size_text;

static size_text size_of(long long bytes)
{
    size_text t;
    vr_units_bytes(bytes < 0 ? 0 : bytes, t.s, sizeof t.s);
    return t;
}

/* The sentence of one rule: its row's bytes and figures in words. */
typedef void (*say_fn)(vr_buf *b, const cJSON *row, const char *bytes);

static void say_replaced(vr_buf *b, const cJSON *row, const char *bytes)
{
    vr_buf_printf(b,
                  "%s of optimizer state: memory from before the record that the "
                  "optimizer step let go of after the peak (%lld tensors) as it made %s of "
                  "new state: its old state, replaced.",
                  bytes, figure(row, "freed_in_optimizer_step_after_peak_count"),
                  size_of(figure(row, "new_optimizer_state_bytes")).s);
}

static void say_zero_grad(vr_buf *b, const cJSON *row, const char *bytes)
{
    vr_buf_printf(b,
                  "%s of gradients: memory from before the record that zero_grad let go of "
                  "after the peak (%lld tensors); zero_grad frees nothing else.",
                  bytes, figure(row, "freed_by_zero_grad_after_peak_count"));
}

static void say_state_half(vr_buf *b, const cJSON *row, const char *bytes)
{
    const char *opt = text_figure(row, "optimizer");
    long long copies = figure(row, "state_copies_of_parameters");
    vr_buf_printf(b,
                  "%s of parameters: memory kept from before the record and never freed in "
                  "it (%s) against the optimizer's measured state of %s: %s keeps %s of "
                  "each parameter's size, so the parameters are %s of it.",
                  bytes, size_of(figure(row, "kept_from_before_record_bytes")).s,
                  size_of(figure(row, "optimizer_state_bytes")).s, opt ? opt : "the optimizer",
                  copies == 2 ? "two moments" : "one buffer", copies == 2 ? "half" : "all");
}

static void say_grads_kept(vr_buf *b, const cJSON *row, const char *bytes)
{
    (void)row;
    vr_buf_printf(b,
                  "%s of gradients: the rest of what was kept from before the record is as "
                  "large as the parameters again, and the record runs a backward: their "
                  "gradients, kept from step to step (zero_grad without set_to_none, or "
                  "gradient accumulation). A guess from sizes alone.",
                  bytes);
}

static void say_forward_only(vr_buf *b, const cJSON *row, const char *bytes)
{
    (void)row;
    vr_buf_printf(b,
                  "%s of parameters: memory kept from before the record and never freed, in a "
                  "run with a forward and neither backward nor optimizer: the model's weights "
                  "(with whatever else it made before the record and kept: buffers, a cache).",
                  bytes);
}

static void say_weights_stack(vr_buf *b, const cJSON *row, const char *bytes)
{
    long long n = figure(row, "blocks_in_use_before_record");
    vr_buf_printf(b,
                  "%s of parameters: %lld block%s in use since before the record whose stacks "
                  "load, move or make weights.",
                  bytes, n, n == 1 ? "" : "s");
}

/* A category in a sentence: "8.12 MiB of activations", not of the
 * category's name (activation, kv_cache). */
static const char *category_words(const cJSON *cat)
{
    static const struct {
        const char *name, *words;
    } words[] = {
        {"parameter", "parameters"},         {"gradient", "gradients"},
        {"optimizer_state", "optimizer state"}, {"activation", "activations"},
        {"temporary", "temporaries"},        {"input", "inputs"},
        {"kv_cache", "KV cache"},            {"autograd_detail", "autograd's own memory"},
    };
    for (size_t i = 0; cJSON_IsString(cat) && i < sizeof words / sizeof *words; i++)
        if (strcmp(words[i].name, cat->valuestring) == 0)
            return words[i].words;
    return cJSON_IsString(cat) ? cat->valuestring : "memory";
}

static void say_block_stack(vr_buf *b, const cJSON *row, const char *bytes)
{
    const cJSON *cat = cJSON_GetObjectItemCaseSensitive(row, "category");
    long long n = figure(row, "blocks_in_use_before_record");
    vr_buf_printf(b, "%s of %s: %lld block%s in use since before the record, %s.", bytes,
                  category_words(cat), n, n == 1 ? "" : "s",
                  n == 1 ? "its category read from the stack that allocated it"
                         : "each one's category read from the stack that allocated it");
}

static void say_server(vr_buf *b, const cJSON *row, const char *bytes)
{
    const cJSON *cat = cJSON_GetObjectItemCaseSensitive(row, "category");
    int kv = cJSON_IsString(cat) && strcmp(cat->valuestring, "kv_cache") == 0;
    const char *server = text_figure(row, "server");
    vr_buf_printf(b,
                  "%s of %s: the inference server's log (%s, line %lld) says it reserved that "
                  "much at start-up, before the record, which kept %s from before it.",
                  bytes, kv ? "KV cache" : "weights",
                  server && strcmp(server, "sglang") == 0 ? "SGLang" : "vLLM",
                  figure(row, kv ? "kv_cache_log_line" : "weights_log_line"),
                  size_of(figure(row, "kept_from_before_record_bytes")).s);
}

static void say_weights_read(vr_buf *b, const cJSON *row, const char *bytes)
{
    const char *dtype = text_figure(row, "weights_dtype");
    long long tied = figure(row, "tied_candidate_bytes");
    vr_buf_printf(b,
                  "%s of parameters: the weight operands one forward reads (the trace's "
                  "record_shapes, %lld modules%s%s), each once; memory kept from before the "
                  "record (%s) holds them.",
                  bytes, figure(row, "modules"), dtype ? ", in " : "", dtype ? dtype : "",
                  size_of(figure(row, "kept_from_before_record_bytes")).s);
    if (tied > 0)
        vr_buf_printf(b,
                      " An output layer shaped as the embedding (%s) is taken as sharing its "
                      "matrix (tied), as shapes cannot tell.",
                      size_of(tied).s);
}

static void say_state_from_weights(vr_buf *b, const cJSON *row, const char *bytes)
{
    const char *opt = text_figure(row, "optimizer");
    vr_buf_printf(b,
                  "%s of optimizer state: %s keeps two moments of each parameter's size, twice "
                  "the weights the forward reads, and what was kept from before the record "
                  "holds them too.",
                  bytes, opt ? opt : "the optimizer");
}

static const struct {
    const char *rule;
    say_fn say;
} sentences[] = {
    {"server-kv-cache", say_server},
    {"weights-read-by-forward", say_weights_read},
    {"adam-state-from-weights", say_state_from_weights},
    {"optimizer-state-replaced", say_replaced}, {"freed-by-zero-grad", say_zero_grad},
    {"adam-state-half", say_state_half},        {"sgd-momentum-state", say_state_half},
    {"gradients-kept", say_grads_kept},         {"forward-only-weights", say_forward_only},
    {"weight-loading-stack", say_weights_stack}, {"block-stack", say_block_stack},
};

static void add_text(cJSON *list, vr_buf *b)
{
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "text", b->len ? b->data : "");
    cJSON_AddItemToArray(list, row);
    vr_buf_clear(b);
}

static void add_row(cJSON *list, const cJSON *row, vr_buf *b)
{
    const cJSON *rule = cJSON_GetObjectItemCaseSensitive(row, "rule");
    const cJSON *conf = cJSON_GetObjectItemCaseSensitive(row, "confidence");
    long long bytes = 0;
    vr_results_int(cJSON_GetObjectItemCaseSensitive(row, "bytes"), &bytes);
    for (size_t i = 0; cJSON_IsString(rule) && i < sizeof sentences / sizeof *sentences; i++)
        if (strcmp(sentences[i].rule, rule->valuestring) == 0) {
            sentences[i].say(b, row, size_of(bytes).s);
            vr_buf_printf(b, " (%s, %s confidence)", rule->valuestring,
                          cJSON_IsString(conf) ? conf->valuestring : "no");
            add_text(list, b);
            return;
        }
}

/* Whether the device's peak source is an allocator snapshot. */
static int peak_from_snapshot(const cJSON *doc, const cJSON *dev)
{
    long long id = -1, want = -1;
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(dev, "sources"))
    {
        const cJSON *chosen = cJSON_GetObjectItemCaseSensitive(s, "chosen");
        if (cJSON_IsTrue(chosen) &&
            vr_results_int(cJSON_GetObjectItemCaseSensitive(s, "source_id"), &want))
            break;
    }
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(doc, "sources"))
    {
        const cJSON *format = cJSON_GetObjectItemCaseSensitive(s, "format");
        if (vr_results_int(cJSON_GetObjectItemCaseSensitive(s, "id"), &id) && id == want)
            return cJSON_IsString(format) && strncmp(format->valuestring, "snapshot", 8) == 0;
    }
    return 0;
}

static void unknown_notes(const cJSON *doc, cJSON *dev, cJSON *list, vr_buf *b)
{
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(dev, "unknown_at_peak");
    long long before = 0, unplaced = 0, undecided = 0;
    vr_results_int(cJSON_GetObjectItemCaseSensitive(u, "before_record_bytes"), &before);
    vr_results_int(cJSON_GetObjectItemCaseSensitive(u, "unplaced_bytes"), &unplaced);
    vr_results_int(cJSON_GetObjectItemCaseSensitive(u, "undecided_bytes"), &undecided);
    int snapshot = peak_from_snapshot(doc, dev);
    int shapes = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(dev, "explained"))
    {
        const cJSON *rule = cJSON_GetObjectItemCaseSensitive(row, "rule");
        shapes |= cJSON_IsString(rule) && strcmp(rule->valuestring, "weights-read-by-forward") == 0;
    }
    /* a few bytes in a GPU's worth are not worth a sentence */
    long long peak = 0;
    vr_results_int(cJSON_GetObjectItemCaseSensitive(dev, "peak_allocated_bytes"), &peak);
    long long least = peak / 1000;
    before = before > least ? before : 0;
    unplaced = unplaced > least ? unplaced : 0;
    undecided = undecided > least ? undecided : 0;
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(dev, "categories_stated"))) {
        long long unknown = 0;
        vr_results_int(cJSON_GetObjectItemCaseSensitive(
                           cJSON_GetObjectItemCaseSensitive(dev, "peak_breakdown"), "unknown"),
                       &unknown);
        if (unknown > least) {
            vr_buf_printf(b,
                          "%s stays unknown: PyTorch's memory profiler gave it no category "
                          "itself, and its export keeps no stacks to decide one by.",
                          size_of(unknown).s);
            add_text(list, b);
        }
        return;
    }
    if (before > 0) {
        vr_buf_printf(b,
                      "%s stays unknown: it was live before the record began, and nothing in "
                      "the file says what it was. ",
                      size_of(before).s);
        vr_buf_puts(b, snapshot ? "Start recording (torch.cuda.memory._record_memory_history) "
                                  "before the model is made to see it allocated."
                       : shapes ? "It is not among the weights the forward reads (inputs, "
                                  "buffers, cuBLAS workspaces, weights used by other ops): "
                                  "start profiling before the model is made to see it allocated."
                                : "Start profiling before the model is made, or profile with "
                                  "record_shapes=True and with_modules=True, to see it.");
        add_text(list, b);
    }
    if (unplaced > 0) {
        vr_buf_printf(b,
                      "%s stays unknown: the record's memory events carry no addresses "
                      "(PyTorch before 1.10 wrote none), so what it let go of cannot be told "
                      "from what it allocated. A newer PyTorch's profiler records them.",
                      size_of(unplaced).s);
        add_text(list, b);
    }
    if (undecided > 0) {
        vr_buf_printf(b, "%s stays unknown: allocations of the record no category rule decides.",
                      size_of(undecided).s);
        add_text(list, b);
    }
}

void vr_view_how_we_know(const cJSON *doc, cJSON *dev)
{
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(dev, "explained");
    if (!cJSON_IsArray(rows))
        return;
    vr_buf b = VR_BUF_INIT;
    cJSON *know = cJSON_CreateArray(), *notes = cJSON_CreateArray();
    const cJSON *row;
    cJSON_ArrayForEach(row, rows) add_row(know, row, &b);
    unknown_notes(doc, dev, notes, &b);
    vr_buf_free(&b);
    cJSON_AddItemToObject(dev, "how_we_know", know);
    cJSON_AddItemToObject(dev, "unknown_notes", notes);
}
