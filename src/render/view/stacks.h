/*-*** stacks.h: the stacks a report shows, shortened as memory_viz does ***/
/*
 * PyTorch's memory_viz (_memory_viz.py's frame filter) leaves out of the
 * stacks it shows the frames that say nothing about who asked:
 * threading's, the nn.Module call wrappers', CPython's own (<frozen ...>,
 * <string>), and C++ noise (the unwinder, the dispatcher, the caching
 * allocator). The Markdown and the HTML show a stack through this one
 * filter: the Markdown its short form only, the HTML the short form with
 * the whole stack one click away.
 *
 * vr_stack_frame_kind: which kind of frame memory_viz leaves out `frame`
 * ("file:line in function") is, VR_FRAME_KEPT for one it shows;
 * vr_stack_frame_filtered: whether it leaves it out.
 *
 * vr_view_stacks: each device's top site gains, from its "stack" (the
 * results' stack: innermost first, at most 16 frames, "stack_skipped"
 * C++ frames left out before, "stack_depth" the whole stack's):
 * "stack_top" (its first VR_STACK_SHORT_FRAMES frames the filter keeps),
 * "stack_top_code" (the same as Markdown code spans: commands.h),
 * "stack_filtered" (how many of "stack" the filter left out, null for
 * none), "stack_filtered_kinds" (the kinds it left out, in words:
 * "threading, module call wrappers"), "stack_more" (frames of the whole stack after stack_top, null
 * for none), "stack_left_out" (stack_skipped, null for none),
 * "has_stack_top"; each count's "_one" (stack_filtered_one ...) says
 * whether it is 1. Ownership: decorates the view in place.
 */
#ifndef VR_VIEW_STACKS_H
#define VR_VIEW_STACKS_H

#include <cjson/cJSON.h>

/* A short stack's frames at most. */
#define VR_STACK_SHORT_FRAMES 12

typedef enum {
    VR_FRAME_KEPT,
    VR_FRAME_THREADING, /* threading.py */
    VR_FRAME_WRAPPER,   /* nn.Module's _call_impl, _wrapped_call_impl */
    VR_FRAME_CPYTHON,   /* <frozen ...>, <string> */
    VR_FRAME_CXX,       /* the unwinder, dispatcher, allocator, Register*.cpp */
} vr_frame_kind;

vr_frame_kind vr_stack_frame_kind(const char *frame);
int vr_stack_frame_filtered(const char *frame);

void vr_view_stacks(cJSON *view);

#endif
