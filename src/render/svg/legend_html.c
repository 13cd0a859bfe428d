/* A chart's legend as an HTML list (legend_html.h). */
#include "render/svg/legend_html.h"

#include "render/svg/svg_text.h"

/* The swatch: 18x12 CSS px, hidden from screen readers (the label says
 * it all). Colours are the charts' constants, never input. */
static void swatch(vr_buf *b, const vr_legend_item *it)
{
    if (it->kind == VR_SWATCH_NONE)
        return;
    vr_buf_puts(b, "<svg class=\"vr-swatch\" xmlns=\"http://www.w3.org/2000/svg\" "
                   "viewBox=\"0 0 18 12\" width=\"18\" height=\"12\" aria-hidden=\"true\" "
                   "focusable=\"false\">");
    switch (it->kind) {
    case VR_SWATCH_LINE:
        vr_buf_printf(b, "<path d=\"M1 6h16\" fill=\"none\" stroke=\"%s\" stroke-width=\"3\"",
                      it->colour);
        if (it->dash)
            vr_buf_printf(b, " stroke-dasharray=\"%s\"", it->dash);
        vr_buf_puts(b, "/>");
        break;
    case VR_SWATCH_BOX:
        vr_buf_printf(b,
                      "<rect x=\"3\" y=\"0.5\" width=\"11\" height=\"11\" fill=\"%s\" "
                      "stroke=\"%s\" stroke-width=\"1\"/>",
                      it->colour, it->colour2 ? it->colour2 : it->colour);
        break;
    case VR_SWATCH_MARKS:
        vr_buf_printf(b, "<circle cx=\"5\" cy=\"6\" r=\"3.5\" fill=\"%s\"/>", it->colour);
        if (it->colour2)
            vr_buf_printf(b, "<rect x=\"10\" y=\"2.5\" width=\"7\" height=\"7\" fill=\"%s\"/>",
                          it->colour2);
        break;
    case VR_SWATCH_NONE:
        break;
    }
    vr_buf_puts(b, "</svg>");
}

void vr_legend_html(vr_buf *b, const vr_legend_item *items, size_t n, size_t label_max_cp)
{
    if (!n)
        return;
    vr_buf_puts(b, "<ul class=\"vr-legend\">");
    for (size_t i = 0; i < n; i++) {
        const vr_legend_item *it = &items[i];
        vr_buf_puts(b, "<li");
        if (it->cls)
            vr_buf_printf(b, " class=\"%s\"", it->cls);
        if (it->bytes >= 0)
            vr_buf_printf(b, " data-bytes=\"%lld\"", (long long)it->bytes);
        vr_buf_puts(b, ">");
        swatch(b, it);
        vr_buf_puts(b, "<span>");
        vr_svg_text(b, it->label, label_max_cp);
        vr_buf_puts(b, "</span></li>");
    }
    vr_buf_puts(b, "</ul>");
}
