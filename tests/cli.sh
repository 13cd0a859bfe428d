#!/usr/bin/env bash
# tests/cli.sh: golden tests of the command line, in the manner of
# zstd's tests/cli-tests.
#
# Each tests/cli/cases/NAME.sh runs with bash in a fresh scratch directory
# (its cwd), with the environment
#   VRAMREPORT  the binary under test
#   DATA        $VR_SRCDIR/tests/data
#   CLI_DATA    $VR_SRCDIR/tests/cli/data
# and what it does is compared with its expectations, where present:
#   NAME.sh.stdout.exact   its standard output, byte for byte
#   NAME.sh.stderr.exact   its standard error, byte for byte
#   NAME.sh.exit           its exit status (default 0)
# Cases copy their inputs into the scratch directory and name them by
# relative paths, so that outputs do not depend on where the tree is.
#
#   tests/cli.sh [CASE...]                       run all cases (or those named)
#   tests/cli.sh --set-exact-output [CASE...]
#       write every case's .stdout.exact and .stderr.exact (and .exit when
#       not 0) from what it does now. Read the diff before committing it:
#       the expectations were checked by hand.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

CASES=$VR_SRCDIR/tests/cli/cases
set_exact=0
if [ "${1:-}" = --set-exact-output ]; then
    set_exact=1
    shift
fi

DATA=$VR_SRCDIR/tests/data
CLI_DATA=$VR_SRCDIR/tests/cli/data
export VRAMREPORT DATA CLI_DATA

if [ $# -gt 0 ]; then
    cases=
    for c in "$@"; do
        c=${c##*/}
        c=${c%.sh}
        cases="$cases $CASES/$c.sh"
    done
else
    cases=$(ls "$CASES"/*.sh 2>/dev/null || true)
fi
[ -n "$cases" ] || fail "cases found in $CASES"

[ -x "$VRAMREPORT" ] && pass "the binary is there: $VRAMREPORT" \
    || fail "the binary is there: $VRAMREPORT"

show_diff() { # EXPECTED ACTUAL
    diff -u "$1" "$2" 2>&1 | head -n 60 | sed 's/^/#   /' || true
}

for case in $cases; do
    name=$(basename "$case" .sh)
    if [ ! -f "$case" ]; then
        fail "$name: no such case" "$case"
        continue
    fi
    dir=$TMP/$name
    mkdir -p "$dir"
    rc=0
    (cd "$dir" && exec bash "$case") >"$TMP/$name.stdout" 2>"$TMP/$name.stderr" </dev/null || rc=$?

    if [ "$set_exact" = 1 ]; then
        cp "$TMP/$name.stdout" "$case.stdout.exact"
        cp "$TMP/$name.stderr" "$case.stderr.exact"
        if [ "$rc" -ne 0 ]; then
            echo "$rc" >"$case.exit"
        else
            rm -f "$case.exit"
        fi
        pass "$name: expectations written (exit $rc)"
        continue
    fi

    if crashed "$rc" "$TMP/$name.stderr"; then
        fail "$name: no crash" "exit $rc"
        sed 's/^/#   /' "$TMP/$name.stderr" | head -n 20
    fi
    want=0
    [ -f "$case.exit" ] && want=$(tr -d ' \n' <"$case.exit")
    if [ "$rc" = "$want" ]; then
        pass "$name: exit status $want"
    else
        fail "$name: exit status $want" "exit $rc"
        sed 's/^/#   stderr: /' "$TMP/$name.stderr" | head -n 10
    fi
    for stream in stdout stderr; do
        exp=$case.$stream.exact
        [ -f "$exp" ] || continue
        if cmp -s "$exp" "$TMP/$name.$stream"; then
            pass "$name: $stream as expected"
        else
            fail "$name: $stream as expected"
            show_diff "$exp" "$TMP/$name.$stream"
        fi
    done
    rm -rf "$dir"
done

finish
