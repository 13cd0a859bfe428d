#!/usr/bin/env bash
# tests/categorize-paths.sh: the categorizer gives the same answers by
# either of its two ways of reading stacks. It reads every stack and frame
# in one scan into arrays indexed by id while the ids stay under a bound
# (PRELOAD_MAX_ID, 2^19), and every stack one by one (a query each, kept
# in a cache) when an id passes it (categorize.c). Real files never pass
# the bound in the suite, so tests/unit/vramreport_small_preload is the
# program built with a bound of 8: every real snapshot here has more
# stacks than that, and takes the other way (cs336-silmont-segments is
# decided by the roles of its C++ autograd frames: their innermost one).
# Every allocation's category, rule, frame and phases, the breakdown at
# the peak and the JSON report must be the same from both programs.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

small=$VR_BUILDDIR/tests/unit/vramreport_small_preload
[ -x "$small" ] || { fail "tests/unit/vramreport_small_preload is built" "$small"; finish; }
need sqlite3 || true

snapshots="cs336-bcrafton cs336-magma27-training cs336-silmont-forward-bf16 cs336-silmont-segments"
for name in $snapshots; do
    input=$VR_SRCDIR/tests/data/realdata/snapshot/$name.pickle
    for prog in big small; do
        bin=$VRAMREPORT
        [ $prog = small ] && bin=$small
        "$bin" import "$input" --db "$TMP/$name.$prog.db" --quiet 2>"$TMP/$name.$prog.err" ||
            fail "$name: import ($prog)" "$(cat "$TMP/$name.$prog.err")"
        sqlite3 "$TMP/$name.$prog.db" \
            "SELECT id, category, category_rule, frame_id, alloc_phase, free_phase
               FROM allocation ORDER BY id;
             SELECT * FROM peak_category ORDER BY 1, 2;" >"$TMP/$name.$prog.rows"
        "$bin" report --db "$TMP/$name.$prog.db" --format json -o - 2>/dev/null |
            grep -v '"generated' >"$TMP/$name.$prog.json" || true
    done
    # The other way must have been taken: stacks past the bound, and
    # allocations decided by a rule that reads them.
    past=$(sqlite3 "$TMP/$name.small.db" \
        "SELECT count(*) FROM allocation a JOIN mem_event e ON e.id = a.alloc_event_id
          WHERE e.stack_id > 8 AND a.category_rule LIKE 'snapshot-%'")
    if [ "${past:-0}" -gt 0 ]; then
        pass "$name: $past allocations decided from stacks past the bound"
    else
        fail "$name: allocations decided from stacks past the bound" "none"
    fi
    if cmp -s "$TMP/$name.big.rows" "$TMP/$name.small.rows"; then
        pass "$name: the same categories, rules, frames and phases by both ways"
    else
        fail "$name: the same categories by both ways" \
            "$(diff "$TMP/$name.big.rows" "$TMP/$name.small.rows" | head -5)"
    fi
    if [ -s "$TMP/$name.big.json" ] && cmp -s "$TMP/$name.big.json" "$TMP/$name.small.json"; then
        pass "$name: the same JSON report"
    else
        fail "$name: the same JSON report" \
            "$(diff "$TMP/$name.big.json" "$TMP/$name.small.json" | head -5)"
    fi
done
finish
