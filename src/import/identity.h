/*-*** identity.h: a snapshot's device is a trace's device (docs/schema.md) ***/
/*
 * A snapshot does not name its rank, so its devices start as its own. At
 * the end of every import (in its transaction), vr_identity_join() weighs
 * each snapshot device against each trace device of the same platform and
 * index, one of the two being the new source's, by the allocations both
 * files recorded (schemas/identity.sql); when exactly one trace device
 * passes a rule, the snapshot's rows move to it and device_join says why.
 * Import order does not matter: the pair is weighed when its second file
 * arrives.
 */
#ifndef VR_IDENTITY_H
#define VR_IDENTITY_H

#include <stdint.h>

#include "db/db.h"
#include "util/error.h"

int vr_identity_join(vr_db *db, int64_t source_id, vr_error *err);

#endif
