/*-*** estimate.c: `vramreport estimate`: options in, a table or JSON out ***/
/*
 * Parses the subcommand's options into a vr_estimate_input, runs the
 * library's estimate (src/estimate/estimate.h) and prints it: an aligned
 * table in binary units, or JSON with exact bytes. All arithmetic is in
 * the library; this file only reads options and prints.
 */
#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "estimate/estimate.h"
#include "util/units.h"

/* getopt_long's codes of the long options. */
enum {
    OPT_PARAMS = 256,
    OPT_DTYPE,
    OPT_OPTIMIZER,
    OPT_INFERENCE,
    OPT_MASTER,
    OPT_BATCH,
    OPT_SEQ,
    OPT_HIDDEN,
    OPT_LAYERS,
    OPT_HEADS,
    OPT_CKPT,
    OPT_GPUS,
    OPT_ZERO,
    OPT_GPU,
    OPT_WORKSPACE,
    OPT_CONTEXT,
    OPT_LIST_GPUS
};

static const char estimate_usage[] =
    "Usage: vramreport estimate --params N [OPTIONS]\n"
    "\n"
    "Estimates the GPU memory a transformer needs to train (or to run),\n"
    "before any run: weights, gradients, fp32 master weights, optimizer\n"
    "state, activations (Korthikanti et al.), cuBLAS workspace and CUDA\n"
    "context, per GPU after ZeRO sharding, and whether that fits a GPU.\n"
    "Formulas and sources: docs/estimate.md.\n"
    "\n"
    "Model:\n"
    "      --params N          parameters: 7e9, 7B, 350M, 1.5T (required)\n"
    "      --dtype D           weights' dtype: fp32, bf16 (default), fp16, fp8,\n"
    "                          int8, int4\n"
    "      --optimizer O       adamw (default), adam-8bit, sgd, sgd-nomomentum,\n"
    "                          adafactor, lion, or none (inference)\n"
    "      --inference         the same as --optimizer none: weights and\n"
    "                          activations only\n"
    "      --master-weights W  auto (default: fp32 master weights when training\n"
    "                          below fp32: 16 bytes/param with adamw), yes, or no\n"
    "                          (2 + 2 + 8 = 12 bytes/param with bf16 adamw)\n"
    "Activations (give all of --seq, --hidden, --layers, --heads, or none):\n"
    "      --batch B           micro-batch per GPU (default 1)\n"
    "      --seq S             sequence length\n"
    "      --hidden H          hidden size\n"
    "      --layers L          transformer layers\n"
    "      --heads A           attention heads\n"
    "      --checkpointing[=K] activation checkpointing: full (the default K:\n"
    "                          2*s*b*h per layer) or selective (34*s*b*h)\n"
    "Parallelism and device:\n"
    "      --gpus N            data-parallel GPUs (default 1)\n"
    "      --zero S            ZeRO stage 0 (default), 1 (optimizer state\n"
    "                          sharded), 2 (and gradients), 3 (and weights)\n"
    "      --gpu NAME          say whether it fits NAME: H100-80GB, h100,\n"
    "                          A100-40GB, 4090, MI300X, ... (see --list-gpus)\n"
    "      --workspace SIZE    cuBLAS workspace (default: PyTorch's for --gpu,\n"
    "                          32 MiB without one)\n"
    "      --context SIZE      CUDA context (default 500 MiB)\n"
    "Output:\n"
    "  -f, --format FMT        text (default) or json (exact bytes)\n"
    "      --list-gpus         list the GPUs --gpu knows and exit\n"
    "  -h, --help              show this help\n"
    "\n"
    "Examples:\n"
    "  vramreport estimate --params 7e9 --dtype bf16 --optimizer adamw --gpu H100-80GB\n"
    "      7B model states: 16 bytes/param, 104 GiB: does not fit one H100\n"
    "  vramreport estimate --params 7e9 --gpus 8 --zero 3 --gpu h100 \\\n"
    "      --batch 1 --seq 4096 --hidden 4096 --layers 32 --heads 32 --checkpointing\n"
    "      the same sharded over 8 GPUs, with a Llama-2-7B-like shape\n"
    "  vramreport estimate --params 7e9 --master-weights no\n"
    "      the 2 + 2 + 8 bytes/param figure (no fp32 master copy)\n"
    "  vramreport estimate --params 70B --dtype int4 --inference --gpu 4090\n"
    "  vramreport estimate --params 1.3e9 --format json\n"
    "\n"
    "Exit status: 0 when the estimate was made (whether or not it fits),\n"
    "2 on a usage error.\n";

typedef struct {
    vr_estimate_input in;
    int json;
    int list_gpus;
    int inference;
    const char *dtype, *optimizer;
} estimate_opts;

static int estimate_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "vramreport estimate: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see vramreport estimate --help)\n");
    return VR_EXIT_USAGE;
}

/*-*** Option values ***/

/* The numeric options but --params (vr_estimate_parse_count), each with
 * its bound: the one place an option's bound is checked, and the message
 * states it. The bounds are the library's (estimate.h). */
typedef enum { NUM_WHOLE, NUM_SIZE } number_kind;

static const struct {
    int opt;
    const char *name;
    number_kind kind;
    int64_t min, max;
    size_t offset; /* of the figure in vr_estimate_input */
} number_options[] = {
    {OPT_BATCH, "batch", NUM_WHOLE, 1, VR_ESTIMATE_MAX_SHAPE, offsetof(vr_estimate_input, batch)},
    {OPT_SEQ, "seq", NUM_WHOLE, 1, VR_ESTIMATE_MAX_SHAPE, offsetof(vr_estimate_input, seq)},
    {OPT_HIDDEN, "hidden", NUM_WHOLE, 1, VR_ESTIMATE_MAX_SHAPE,
     offsetof(vr_estimate_input, hidden)},
    {OPT_LAYERS, "layers", NUM_WHOLE, 1, VR_ESTIMATE_MAX_SHAPE,
     offsetof(vr_estimate_input, layers)},
    {OPT_HEADS, "heads", NUM_WHOLE, 1, VR_ESTIMATE_MAX_SHAPE, offsetof(vr_estimate_input, heads)},
    {OPT_GPUS, "gpus", NUM_WHOLE, 1, VR_ESTIMATE_MAX_GPUS, offsetof(vr_estimate_input, gpus)},
    {OPT_WORKSPACE, "workspace", NUM_SIZE, 0, VR_ESTIMATE_MAX_BYTES,
     offsetof(vr_estimate_input, workspace)},
    {OPT_CONTEXT, "context", NUM_SIZE, 0, VR_ESTIMATE_MAX_BYTES,
     offsetof(vr_estimate_input, context)},
};

/* "4096" (decimal digits only) -> the number; 0 when it is none or past
 * int64 (then past every bound). */
static int read_whole(const char *s, double *out)
{
    size_t n = vr_estimate_decimal(s);
    if (!n || s[n] || strspn(s, "0123456789") != n)
        return 0;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    *out = errno == ERANGE ? HUGE_VAL : (double)v;
    return 1;
}

/* Option k's value into its figure: 0, or -1 after one line saying what
 * it takes, bound included. */
static int parse_number(size_t k, const char *s, vr_estimate_input *in)
{
    double v;
    int whole = number_options[k].kind == NUM_WHOLE;
    int ok = whole ? read_whole(s, &v) : vr_estimate_read_size(s, &v);
    double lo = (double)number_options[k].min, hi = (double)number_options[k].max;
    if (ok && v >= lo && v <= hi) {
        *(int64_t *)((char *)in + number_options[k].offset) = (int64_t)llround(v);
        return 0;
    }
    if (whole)
        fprintf(stderr,
                "vramreport estimate: --%s '%s': give a whole decimal number from %lld to %lld "
                "(see vramreport estimate --help)\n",
                number_options[k].name, s, (long long)number_options[k].min,
                (long long)number_options[k].max);
    else
        fprintf(stderr,
                "vramreport estimate: --%s '%s': give a decimal size up to 1e15 bytes, such as "
                "32MiB, 500MiB or 0 (see vramreport estimate --help)\n",
                number_options[k].name, s);
    return -1;
}

static int number_option(int opt, const char *s, vr_estimate_input *in, int *handled)
{
    for (size_t k = 0; k < sizeof number_options / sizeof *number_options; k++)
        if (number_options[k].opt == opt) {
            *handled = 1;
            return parse_number(k, s, in);
        }
    *handled = 0;
    return 0;
}

static const struct {
    const char *name;
    vr_estimate_master value;
} master_names[] = {
    {"auto", VR_ESTIMATE_MASTER_AUTO}, {"yes", VR_ESTIMATE_MASTER_YES},
    {"no", VR_ESTIMATE_MASTER_NO},     {"fp32", VR_ESTIMATE_MASTER_YES},
    {"none", VR_ESTIMATE_MASTER_NO},
};

static const struct {
    const char *name;
    vr_estimate_recompute value;
} recompute_names[] = {
    {"full", VR_ESTIMATE_RECOMPUTE_FULL},
    {"selective", VR_ESTIMATE_RECOMPUTE_SELECTIVE},
    {"none", VR_ESTIMATE_RECOMPUTE_NONE},
};

static int parse_master(const char *s, vr_estimate_master *out)
{
    for (size_t i = 0; i < sizeof master_names / sizeof *master_names; i++)
        if (strcasecmp(s, master_names[i].name) == 0) {
            *out = master_names[i].value;
            return 0;
        }
    estimate_error("--master-weights '%s': give auto, yes or no", s);
    return -1;
}

static int parse_recompute(const char *s, vr_estimate_recompute *out)
{
    if (!s) {
        *out = VR_ESTIMATE_RECOMPUTE_FULL;
        return 0;
    }
    for (size_t i = 0; i < sizeof recompute_names / sizeof *recompute_names; i++)
        if (strcasecmp(s, recompute_names[i].name) == 0) {
            *out = recompute_names[i].value;
            return 0;
        }
    estimate_error("--checkpointing='%s': give full or selective", s);
    return -1;
}

static int parse_zero(const char *s, int *out)
{
    if (s[0] >= '0' && s[0] <= '3' && !s[1]) {
        *out = s[0] - '0';
        return 0;
    }
    estimate_error("--zero '%s': give 0, 1, 2 or 3", s);
    return -1;
}

static int parse_gpu(const char *s, const vr_estimate_gpu **out)
{
    vr_error err = VR_ERROR_INIT;
    *out = vr_estimate_gpu_find(s, &err);
    if (*out)
        return 0;
    fprintf(stderr, "vramreport estimate: %s (see vramreport estimate --list-gpus)\n", err.msg);
    return -1;
}

/*-*** Options ***/

static const struct option long_options[] = {
    {"params", required_argument, NULL, OPT_PARAMS},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"optimizer", required_argument, NULL, OPT_OPTIMIZER},
    {"inference", no_argument, NULL, OPT_INFERENCE},
    {"master-weights", required_argument, NULL, OPT_MASTER},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"seq", required_argument, NULL, OPT_SEQ},
    {"hidden", required_argument, NULL, OPT_HIDDEN},
    {"layers", required_argument, NULL, OPT_LAYERS},
    {"heads", required_argument, NULL, OPT_HEADS},
    {"checkpointing", optional_argument, NULL, OPT_CKPT},
    {"gpus", required_argument, NULL, OPT_GPUS},
    {"zero", required_argument, NULL, OPT_ZERO},
    {"gpu", required_argument, NULL, OPT_GPU},
    {"workspace", required_argument, NULL, OPT_WORKSPACE},
    {"context", required_argument, NULL, OPT_CONTEXT},
    {"list-gpus", no_argument, NULL, OPT_LIST_GPUS},
    {"format", required_argument, NULL, 'f'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int parse_format(const char *s, int *json)
{
    if (strcasecmp(s, "json") == 0 || strcasecmp(s, "text") == 0) {
        *json = strcasecmp(s, "json") == 0;
        return 0;
    }
    estimate_error("--format '%s': give text or json", s);
    return -1;
}

static int params_option(const char *s, int64_t *out)
{
    vr_error err = VR_ERROR_INIT;
    if (vr_estimate_parse_count(s, out, &err) == 0)
        return 0;
    estimate_error("--params: %s", err.msg);
    return -1;
}

/* One option's value into o: 0, or -1 after printing why not. */
static int apply_option(int c, const char *arg, estimate_opts *o)
{
    vr_estimate_input *in = &o->in;
    int handled, rc = number_option(c, arg, in, &handled);
    if (handled)
        return rc;
    switch (c) {
    case OPT_PARAMS:
        return params_option(arg, &in->params);
    case OPT_DTYPE:
        o->dtype = arg;
        return 0;
    case OPT_OPTIMIZER:
        o->optimizer = arg;
        return 0;
    case OPT_INFERENCE:
        o->inference = 1;
        return 0;
    case OPT_MASTER:
        return parse_master(arg, &in->master);
    case OPT_CKPT:
        return parse_recompute(arg, &in->recompute);
    case OPT_ZERO:
        return parse_zero(arg, &in->zero);
    case OPT_GPU:
        return parse_gpu(arg, &in->gpu);
    case OPT_LIST_GPUS:
        o->list_gpus = 1;
        return 0;
    case 'f':
        return parse_format(arg, &o->json);
    default:
        return -1;
    }
}

static int bad_option(int c, char **argv)
{
    const char *opt = argv[optind - 1];
    if (c == ':')
        return estimate_error("%s needs a value", opt);
    return estimate_error("unknown option '%s'", opt);
}

/* The names into the table entries: 0, or an exit status. */
static int resolve_names(estimate_opts *o)
{
    const char *opt_name = o->optimizer ? o->optimizer : o->inference ? "none" : "adamw";
    o->in.dtype = vr_estimate_dtype_find(o->dtype ? o->dtype : "bf16");
    if (!o->in.dtype)
        return estimate_error("unknown --dtype '%s' (fp32, bf16, fp16, fp8, int8 or int4)",
                              o->dtype);
    o->in.optimizer = vr_estimate_optimizer_find(opt_name);
    if (!o->in.optimizer)
        return estimate_error("unknown --optimizer '%s' (adamw, adam-8bit, sgd, "
                              "sgd-nomomentum, adafactor, lion or none)",
                              opt_name);
    if (o->inference && o->in.optimizer->training)
        return estimate_error("--inference with --optimizer %s: choose one", opt_name);
    return 0;
}

static int parse_estimate_args(int argc, char **argv, estimate_opts *o, int *help)
{
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":f:h", long_options, NULL)) != -1) {
        if (c == 'h') {
            *help = 1;
            return 0;
        }
        if (c == '?' || c == ':')
            return bad_option(c, argv);
        if (apply_option(c, optarg, o) < 0)
            return VR_EXIT_USAGE;
    }
    if (optind < argc)
        return estimate_error("estimate takes options only (got '%s')", argv[optind]);
    if (o->list_gpus)
        return 0;
    if (o->in.params == 0)
        return estimate_error("%s", "--params is required (for example --params 7e9)");
    return resolve_names(o);
}

/*-*** Text output ***/

/* The table's capacities are whole GiB: "80 GiB", as marketed. */
static void capacity_text(const vr_estimate_gpu *gpu, char *out, size_t n)
{
    snprintf(out, n, "%lld GiB", (long long)(gpu->capacity >> 30));
}

static void bytes_per_param(int bits, char *out, size_t n)
{
    if (bits % 8 == 0)
        snprintf(out, n, "%d B/param", bits / 8);
    else
        snprintf(out, n, "%.1f B/param", bits / 8.0);
}

/* ", / 8 GPUs (ZeRO-3)" when the part is sharded, else "". */
static void sharded_note(const vr_estimate_input *in, int from_stage, char *out, size_t n)
{
    out[0] = '\0';
    if (in->zero >= from_stage && in->gpus > 1)
        snprintf(out, n, ", / %lld GPUs (ZeRO-%d)", (long long)in->gpus, in->zero);
}

static void print_row(const char *part, int64_t bytes, const char *how)
{
    char size[32];
    vr_units_bytes(bytes, size, sizeof size);
    printf("  %-16s %10s%s%s\n", part, size, how[0] ? "  " : "", how);
}

static void print_state_row(const char *part, int64_t bytes, int bits, const char *what,
                            const vr_estimate_input *in, int stage)
{
    char per[32], shard[64], how[160];
    bytes_per_param(bits, per, sizeof per);
    sharded_note(in, stage, shard, sizeof shard);
    snprintf(how, sizeof how, "%s, %s%s", per, what, shard);
    print_row(part, bytes, how);
}

static void print_states(const vr_estimate_input *in, const vr_estimate *e)
{
    const vr_estimate_states *g = &e->per_gpu;
    char grad[32], opt[96];
    print_state_row("weights", g->weights, in->dtype->bits, in->dtype->name, in, 3);
    if (in->optimizer->training) {
        snprintf(grad, sizeof grad, "%s", e->gradient_bits == 32 ? "fp32" : "16-bit");
        if (e->gradient_bits == in->dtype->bits)
            snprintf(grad, sizeof grad, "%s", in->dtype->name);
        print_state_row("gradients", g->gradients, e->gradient_bits, grad, in, 2);
    }
    if (e->master)
        print_state_row("master weights", g->master_weights, 32, "fp32 copy", in, 1);
    snprintf(opt, sizeof opt, "%s: %s", in->optimizer->name, in->optimizer->state);
    if (in->optimizer->training)
        print_state_row("optimizer state", g->optimizer_state, in->optimizer->state_bits, opt, in,
                        1);
}

static const char *const recompute_formula[] = {
    [VR_ESTIMATE_RECOMPUTE_NONE] = "s*b*h*(34 + 5*a*s/h)",
    [VR_ESTIMATE_RECOMPUTE_SELECTIVE] = "34*s*b*h (selective recompute)",
    [VR_ESTIMATE_RECOMPUTE_FULL] = "2*s*b*h (full recompute)",
};

static void print_activations(const vr_estimate_input *in, const vr_estimate *e)
{
    char how[160];
    const char *fp32 = in->dtype->bits == 32 ? ", x2 for fp32" : "";
    if (!e->has_activations)
        snprintf(how, sizeof how, "not estimated: give --seq, --hidden, --layers, --heads");
    else if (!in->optimizer->training)
        snprintf(how, sizeof how, "one layer's %s, nothing kept for backward%s",
                 recompute_formula[VR_ESTIMATE_RECOMPUTE_NONE], fp32);
    else
        snprintf(how, sizeof how, "%s x %lld layers (Korthikanti et al.)%s",
                 recompute_formula[in->recompute], (long long)in->layers, fp32);
    print_row("activations", e->activations, how);
}

static void print_overheads(const vr_estimate_input *in, const vr_estimate *e)
{
    char how[128];
    if (in->workspace >= 0)
        snprintf(how, sizeof how, "cuBLAS workspace, as given");
    else if (in->gpu)
        snprintf(how, sizeof how, "cuBLAS workspace, PyTorch's default on %s", in->gpu->name);
    else
        snprintf(how, sizeof how, "cuBLAS workspace, PyTorch's default on Hopper");
    print_row("workspace", e->workspace, how);
    print_row("CUDA context", e->context,
              in->context >= 0 ? "as given" : "typical with lazy loading; --context to change");
}

static void print_header(const vr_estimate_input *in, const vr_estimate *e)
{
    char count[32];
    vr_units_count(in->params, count, sizeof count);
    printf("%s parameters, %s, %s%s, %s on %lld GPU%s", count, in->dtype->name,
           in->optimizer->training ? in->optimizer->name : "inference",
           e->master ? " with fp32 master weights" : "",
           in->optimizer->training ? "training" : "running", (long long)in->gpus,
           in->gpus == 1 ? "" : "s");
    if (in->zero > 0)
        printf(", ZeRO-%d", in->zero);
    if (e->has_activations)
        printf("; batch %lld, seq %lld, hidden %lld, %lld layers, %lld heads",
               (long long)in->batch, (long long)in->seq, (long long)in->hidden,
               (long long)in->layers, (long long)in->heads);
    printf("\n\n  %-16s %10s  %s\n", "part", "per GPU", "how");
}

/* Under 5% to spare is within the error of the estimate and of what the
 * driver keeps back (docs/estimate.md): said so. */
static const char *tight(const vr_estimate_gpu *gpu, int64_t spare)
{
    return spare < gpu->capacity / 20 ? " (tight: under 5% of it)" : "";
}

static void print_fit(const vr_estimate_gpu *gpu, int64_t spare)
{
    char cap[32], amount[32];
    capacity_text(gpu, cap, sizeof cap);
    vr_units_bytes(spare < 0 ? -spare : spare, amount, sizeof amount);
    if (spare >= 0)
        printf("fits on %s (%s): yes, %s to spare%s\n", gpu->name, cap, amount,
               tight(gpu, spare));
    else
        printf("fits on %s (%s): no: %s short\n", gpu->name, cap, amount);
}

/* Without --gpu: the smallest GPU of the table that the estimate fits
 * (each with its own default workspace). */
static const vr_estimate_gpu *smallest_fit(const vr_estimate_input *in, int64_t *spare)
{
    const vr_estimate_gpu *best = NULL, *g;
    for (size_t i = 0; (g = vr_estimate_gpu_at(i)) != NULL; i++) {
        vr_estimate_input with = *in;
        vr_estimate e;
        vr_error err = VR_ERROR_INIT;
        with.gpu = g;
        if (vr_estimate_compute(&with, &e, &err) < 0 || e.spare < 0)
            continue;
        if (!best || g->capacity < best->capacity) {
            best = g;
            *spare = e.spare;
        }
    }
    return best;
}

static void print_suggestion(const vr_estimate_input *in)
{
    int64_t spare = 0;
    char cap[32], amount[32];
    const vr_estimate_gpu *g = smallest_fit(in, &spare);
    if (!g) {
        printf("no GPU in the table fits it on its own: shard it (--gpus, --zero)\n");
        return;
    }
    capacity_text(g, cap, sizeof cap);
    vr_units_bytes(spare, amount, sizeof amount);
    printf("smallest GPU in the table that fits: %s (%s), %s to spare%s\n", g->name, cap, amount,
           tight(g, spare));
}

static void print_text(const vr_estimate_input *in, const vr_estimate *e)
{
    print_header(in, e);
    print_states(in, e);
    print_activations(in, e);
    print_overheads(in, e);
    print_row("total", e->total, "");
    printf("\n");
    if (in->gpu)
        print_fit(in->gpu, e->spare);
    else
        print_suggestion(in);
}

/*-*** JSON output ***/

static void add_int(cJSON *obj, const char *key, int64_t v)
{
    char num[32];
    snprintf(num, sizeof num, "%lld", (long long)v);
    cJSON_AddItemToObject(obj, key, cJSON_CreateRaw(num));
}

static cJSON *states_json(const vr_estimate_states *s)
{
    cJSON *o = cJSON_CreateObject();
    add_int(o, "weights", s->weights);
    add_int(o, "gradients", s->gradients);
    add_int(o, "master_weights", s->master_weights);
    add_int(o, "optimizer_state", s->optimizer_state);
    add_int(o, "total", s->total);
    return o;
}

static cJSON *shape_json(const vr_estimate_input *in, const vr_estimate *e)
{
    if (!e->has_activations)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    add_int(o, "batch", in->batch);
    add_int(o, "seq", in->seq);
    add_int(o, "hidden", in->hidden);
    add_int(o, "layers", in->layers);
    add_int(o, "heads", in->heads);
    cJSON_AddStringToObject(o, "checkpointing",
                            in->recompute == VR_ESTIMATE_RECOMPUTE_FULL        ? "full"
                            : in->recompute == VR_ESTIMATE_RECOMPUTE_SELECTIVE ? "selective"
                                                                               : "none");
    return o;
}

static cJSON *per_gpu_json(const vr_estimate *e)
{
    cJSON *o = states_json(&e->per_gpu);
    cJSON_DeleteItemFromObject(o, "total");
    add_int(o, "model_states", e->per_gpu.total);
    add_int(o, "activations", e->activations);
    add_int(o, "workspace", e->workspace);
    add_int(o, "context", e->context);
    add_int(o, "total", e->total);
    return o;
}

static cJSON *gpu_json(const vr_estimate_input *in, const vr_estimate *e)
{
    if (!in->gpu)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", in->gpu->name);
    add_int(o, "capacity", in->gpu->capacity);
    cJSON_AddBoolToObject(o, "fits", e->spare >= 0);
    add_int(o, "spare", e->spare);
    return o;
}

static int print_json(const vr_estimate_input *in, const vr_estimate *e)
{
    cJSON *doc = cJSON_CreateObject();
    add_int(doc, "params", in->params);
    cJSON_AddStringToObject(doc, "dtype", in->dtype->name);
    cJSON_AddStringToObject(doc, "optimizer", in->optimizer->name);
    cJSON_AddBoolToObject(doc, "training", in->optimizer->training);
    cJSON_AddBoolToObject(doc, "master_weights", e->master);
    add_int(doc, "gradient_bits", in->optimizer->training ? e->gradient_bits : 0);
    add_int(doc, "gpus", in->gpus);
    add_int(doc, "zero", in->zero);
    cJSON_AddItemToObject(doc, "shape", shape_json(in, e));
    cJSON_AddItemToObject(doc, "model_states", states_json(&e->whole));
    cJSON_AddItemToObject(doc, "per_gpu", per_gpu_json(e));
    cJSON_AddItemToObject(doc, "gpu", gpu_json(in, e));
    int64_t spare = 0;
    const vr_estimate_gpu *smallest = smallest_fit(in, &spare);
    cJSON_AddItemToObject(doc, "smallest_gpu_that_fits",
                          smallest ? cJSON_CreateString(smallest->name) : cJSON_CreateNull());
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (!text)
        return 1;
    printf("%s\n", text);
    cJSON_free(text);
    return 0;
}

static void list_gpus(void)
{
    const vr_estimate_gpu *g;
    char cap[32], ws[32];
    printf("%-14s %10s  %-7s %10s  %s\n", "GPU", "capacity", "memory", "bandwidth",
           "cuBLAS workspace (PyTorch default)");
    for (size_t i = 0; (g = vr_estimate_gpu_at(i)) != NULL; i++) {
        capacity_text(g, cap, sizeof cap);
        vr_units_bytes(g->cublas_workspace, ws, sizeof ws);
        printf("%-14s %10s  %-7s %5.2f TB/s  %s\n", g->name, cap, g->memory_type,
               (double)g->bandwidth / 1e12, ws);
    }
    printf("\nCapacities are the marketed size read as GiB; what a process can use\n"
           "is a little less (nvidia-smi shows 81559 MiB on an H100 80GB).\n"
           "Bandwidths are the datasheets' peak (1 TB/s = 10^12 bytes/s).\n");
}

int vr_cli_estimate(int argc, char **argv, const vr_cli_command *all)
{
    (void)all;
    estimate_opts o = {0};
    int help = 0;
    vr_estimate_input_init(&o.in);
    int rc = parse_estimate_args(argc, argv, &o, &help);
    if (help) {
        fputs(estimate_usage, stdout);
        return 0;
    }
    if (rc)
        return rc;
    if (o.list_gpus) {
        list_gpus();
        return 0;
    }
    vr_estimate e;
    vr_error err = VR_ERROR_INIT;
    if (vr_estimate_compute(&o.in, &e, &err) < 0)
        return estimate_error("%s", err.msg);
    return o.json ? print_json(&o.in, &e) : (print_text(&o.in, &e), 0);
}
