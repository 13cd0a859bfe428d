/* The commands, options and settings the report's texts name (commands.h). */
#include "render/view/commands.h"

#include <string.h>

#include "util/buf.h"
#include "util/utf8.h"

/* Settings and calls the verdict, the findings and the advice name in
 * their sentences (verdict.c, diagnose.c, how_we_know.c, remedies.sql):
 * the longest that matches is marked. */
static const char *const named[] = {
    "vramreport estimate --list-gpus",
    "profile_memory=True",
    "profile_memory=False",
    "with_stack=True",
    "with_modules=True",
    "record_shapes=True",
    "torch.cuda.memory._dump_snapshot()",
    "torch.cuda.memory._dump_snapshot",
    "torch.cuda.memory._record_memory_history()",
    "torch.cuda.memory._record_memory_history",
    "torch.cuda.memory_stats()",
    "torch.cuda.memory_summary()",
    "memory_stats()",
    "memory_summary()",
    "torch.inference_mode()",
    "torch.no_grad()",
    "tf.config.experimental.get_memory_info('GPU:0')",
    "TF_GPU_ALLOCATOR=cuda_malloc_async",
    "jax.local_devices()[0].memory_stats()",
    "cupy.get_default_memory_pool().used_bytes()",
    "total_bytes()",
    "NCCL_DEBUG=INFO",
    "TF_CPP_MIN_LOG_LEVEL",
};

static int word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* "--name" or "--name=value": two dashes, a lowercase letter, then
 * letters, digits and inner dashes; a value of word characters, dots,
 * commas, colons and dashes. */
static size_t option_at(const char *s, size_t len, size_t i)
{
    if (i + 2 >= len || s[i] != '-' || s[i + 1] != '-' || s[i + 2] < 'a' || s[i + 2] > 'z')
        return 0;
    size_t j = i + 2;
    while (j < len && ((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= '0' && s[j] <= '9') ||
                       (s[j] == '-' && j + 1 < len && word_char(s[j + 1]))))
        j++;
    if (j < len && word_char(s[j]))
        return 0; /* "--Foo", "--a_b": not an option's shape */
    if (j + 1 < len && s[j] == '=' && word_char(s[j + 1])) {
        j++;
        while (j < len && (word_char(s[j]) || (s[j] && strchr(".,:-", s[j]))))
            j++;
        while (!word_char(s[j - 1])) /* a sentence's "," or "." after it */
            j--;
    }
    return j - i;
}

size_t vr_command_at(const char *s, size_t len, size_t i)
{
    if (i > 0 && (word_char(s[i - 1]) || s[i - 1] == '-' || s[i - 1] == '.'))
        return 0;
    size_t n = option_at(s, len, i), best = n;
    for (size_t k = 0; k < sizeof named / sizeof *named; k++) {
        size_t m = strlen(named[k]);
        if (m > best && m <= len - i && memcmp(s + i, named[k], m) == 0 &&
            (i + m == len || !word_char(s[i + m]) || !word_char(named[k][m - 1])))
            best = m;
    }
    return best;
}

size_t vr_longest_backticks(const char *s)
{
    size_t longest = 0, run = 0;
    for (; *s; s++) {
        run = *s == '`' ? run + 1 : 0;
        if (run > longest)
            longest = run;
    }
    return longest;
}

char *vr_code_span(const char *text)
{
    vr_buf body = VR_BUF_INIT, out = VR_BUF_INIT;
    size_t len = strlen(text);
    for (size_t i = 0; i < len;) {
        char vis[VR_UTF8_VISIBLE_SIZE];
        size_t n = vr_utf8_visible(text + i, len - i, vis);
        if (*vis)
            vr_buf_puts(&body, vis);
        else if (text[i] == '\n' || text[i] == '\r' || text[i] == '\t')
            vr_buf_putc(&body, ' ');
        else
            vr_buf_append(&body, text + i, n);
        i += n ? n : 1;
    }
    const char *b = body.data ? body.data : "";
    size_t bl = strlen(b), fence = vr_longest_backticks(b) + 1;
    int pad = bl && (b[0] == '`' || b[bl - 1] == '`' || (b[0] == ' ' && b[bl - 1] == ' '));
    for (size_t k = 0; k < fence; k++)
        vr_buf_putc(&out, '`');
    vr_buf_printf(&out, "%s%s%s", pad ? " " : "", b, pad ? " " : "");
    for (size_t k = 0; k < fence; k++)
        vr_buf_putc(&out, '`');
    vr_buf_free(&body);
    return vr_buf_detach(&out);
}
