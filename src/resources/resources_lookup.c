#include "resources/resources.h"

#include <string.h>

const char *vr_resource_get(const char *name, size_t *len)
{
    for (const vr_resource *r = vr_resources; r->name; r++)
        if (strcmp(r->name, name) == 0) {
            if (len)
                *len = r->len;
            return r->data;
        }
    return NULL;
}
