/* The keys of an allocator snapshot's dicts (snapshot.h, vr_snap_keys):
 * which are known, per kind of dict, and what the model does with the
 * others: counts them and names the first few distinct ones. Owned by the
 * snapshot model (snapshot.c), for both forms. */
#include <stdio.h>
#include <string.h>

#include "import/readers/snapshot/snapshot.h"

/* What PyTorch writes (docs/formats/allocator-snapshot.md; newer
 * versions' keys included even where not read: compile_context and
 * user_metadata of trace entries, the fx_* of frames augmented with FX
 * traces). NULL-terminated. */
static const char *const root_keys[] = {"segments",
                                        "device_traces",
                                        "allocator_settings",
                                        "external_annotations",
                                        "host_segments",
                                        "host_traces",
                                        NULL};
static const char *const segment_keys[] = {"device",
                                           "address",
                                           "total_size",
                                           "allocated_size",
                                           "active_size",
                                           "requested_size",
                                           "stream",
                                           "segment_type",
                                           "segment_pool_id",
                                           "is_expandable",
                                           "frames",
                                           "blocks",
                                           NULL};
static const char *const block_keys[] = {"address", "size", "requested_size", "state", "frames",
                                         "history", NULL};
static const char *const history_keys[] = {"addr", "real_size", "frames", NULL};
static const char *const entry_keys[] = {
    "action",  "addr",   "device_free",     "size",          "stream",
    "time_us", "frames", "compile_context", "user_metadata", NULL};
static const char *const frame_keys[] = {
    "filename",          "line", "name", "fx_node_op", "fx_node_name", "fx_node_target",
    "fx_original_trace", NULL};

static const struct {
    const char *name; /* as the names say where a key was */
    const char *const *keys;
} elements[] = {
    [VR_SNAP_ROOT] = {"root", root_keys},          [VR_SNAP_SEGMENT] = {"segment", segment_keys},
    [VR_SNAP_BLOCK] = {"block", block_keys},       [VR_SNAP_HISTORY] = {"history", history_keys},
    [VR_SNAP_ENTRY] = {"trace_entry", entry_keys}, [VR_SNAP_FRAME] = {"frame", frame_keys},
};

static int known(const char *const *keys, const char *key, size_t len)
{
    for (size_t i = 0; keys[i]; i++)
        if (keys[i][0] == key[0] && strlen(keys[i]) == len && memcmp(keys[i], key, len) == 0)
            return 1;
    return 0;
}

void vr_snap_keys_unknown(vr_snap_keys *k, vr_snap_element e, const char *key, size_t len)
{
    k->count++;
    char name[VR_SNAP_KEY_NAME_MAX];
    if (key)
        snprintf(name, sizeof name, "%s.%.*s", elements[e].name, (int)(len < 48 ? len : 48), key);
    else
        snprintf(name, sizeof name, "%s.(a key that is not text)", elements[e].name);
    for (size_t i = 0; i < k->nnames; i++)
        if (strcmp(k->names[i], name) == 0)
            return;
    if (k->nnames == VR_SNAP_KEY_NAMES) {
        k->more = 1;
        return;
    }
    memcpy(k->names[k->nnames++], name, sizeof name);
}

int vr_snap_keys_known(vr_snap_element e, const char *key, size_t len)
{
    return len > 0 && known(elements[e].keys, key, len);
}

void vr_snap_keys_check(vr_snap_keys *k, vr_snap_element e, const vr_pk_value *dict)
{
    if (!dict || dict->kind != VR_PK_DICT)
        return;
    for (size_t i = 0; i < dict->len; i++) {
        const vr_pk_value *key = dict->items[2 * i];
        if (key->kind != VR_PK_STR)
            vr_snap_keys_unknown(k, e, NULL, 0);
        else if (key->len == 0 || !known(elements[e].keys, key->s, key->len))
            vr_snap_keys_unknown(k, e, key->s, key->len);
    }
}

int vr_snap_keys_record(const vr_snap_keys *k, vr_import_ctx *ctx, vr_error *err)
{
    if (!k->count)
        return 0;
    if (vr_reader_tally(ctx, "unknown_key", k->count, err) < 0)
        return -1;
    char text[VR_SNAP_KEY_NAMES * (VR_SNAP_KEY_NAME_MAX + 2) + 8] = "";
    size_t used = 0;
    for (size_t i = 0; i < k->nnames; i++)
        used +=
            (size_t)snprintf(text + used, sizeof text - used, "%s%s", i ? ", " : "", k->names[i]);
    snprintf(text + used, sizeof text - used, "%s", k->more ? ", ..." : "");
    sqlite3_stmt *st = vr_db_stmt(ctx->db, "schemas/import.sql", "insert_meta", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":source", ctx->source_id, err) < 0 ||
        vr_db_bind_text(st, ":key", "unknown_keys", 12, err) < 0 ||
        vr_db_bind_text(st, ":value", text, strlen(text), err) < 0)
        return -1;
    return vr_db_step_done(ctx->db, st, err);
}
