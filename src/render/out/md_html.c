/* Markdown to HTML through cmark-gfm (md_html.h). */
#include "render/out/md_html.h"

#include <stdlib.h>

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>

#include "util/alloc.h"

char *vr_md_html(const char *md, size_t len)
{
    cmark_mem mem = {vr_xcalloc, vr_xrealloc, free};
    cmark_gfm_core_extensions_ensure_registered();
    cmark_parser *p = cmark_parser_new_with_mem(CMARK_OPT_DEFAULT, &mem);
    cmark_syntax_extension *table = cmark_find_syntax_extension("table");
    if (table)
        cmark_parser_attach_syntax_extension(p, table);
    cmark_parser_feed(p, md, len);
    cmark_node *doc = cmark_parser_finish(p);
    char *html = cmark_render_html_with_mem(doc, CMARK_OPT_DEFAULT,
                                            cmark_parser_get_syntax_extensions(p), &mem);
    cmark_node_free(doc);
    cmark_parser_free(p);
    return html;
}
