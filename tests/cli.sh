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
#   NAME.sh.stdout.glob    its standard output, line by line, where a line
#   NAME.sh.stderr.glob    "..." alone matches any number of lines and "*"
#                          in a line any run of characters ("\*": a star);
#                          tests/cli/glob.awk, tests/cli/README
#   NAME.sh.exit           its exit status (default 0)
# A stream has one expectation, .exact or .glob. Cases copy their inputs
# into the scratch directory and name them by relative paths, so that
# outputs do not depend on where the tree is. Before the cases, the glob
# matcher is run on pairs that must match and pairs that must not, so it
# cannot pass everything unseen.
#
#   tests/cli.sh [CASE...]                       run all cases (or those named)
#   tests/cli.sh --set-exact-output [CASE...]
#       write every case's .stdout.exact and .stderr.exact (and .exit when
#       not 0) from what it does now; a stream with a .glob keeps it (edit
#       it by hand). Read the diff before committing it: the expectations
#       were checked by hand.
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

GLOB_AWK=$VR_SRCDIR/tests/cli/glob.awk

# glob_match GLOB ACTUAL: 0 when ACTUAL matches; else says where it failed.
glob_match() {
    LC_ALL=C awk -f "$GLOB_AWK" "$1" "$2"
}

# The matcher itself: WANT (match or differ), the .glob's lines, the
# output's (printf formats).
glob_selftest() { # WANT DESCRIPTION GLOB OUTPUT
    printf "$3" >"$TMP/self.glob"
    printf "$4" >"$TMP/self.out"
    got=differ
    glob_match "$TMP/self.glob" "$TMP/self.out" >"$TMP/self.why" && got=match
    if [ "$got" = "$1" ]; then
        pass "glob matcher: $2: $1"
    else
        fail "glob matcher: $2: $1" "it says $got"
        sed 's/^/#   /' "$TMP/self.why"
    fi
}
glob_selftest match 'the same lines' 'a\nb\n' 'a\nb\n'
glob_selftest differ 'one line other' 'a\nb\n' 'a\nc\n'
glob_selftest differ 'a line more' 'a\n' 'a\nb\n'
glob_selftest differ 'a line less' 'a\nb\n' 'a\n'
glob_selftest differ 'no output' 'a\n' ''
glob_selftest match '"..." takes lines' 'a\n...\nz\n' 'a\nb\nc\nz\n'
glob_selftest match '"..." takes none' 'a\n...\nz\n' 'a\nz\n'
glob_selftest differ '"..." is not the line after it' 'a\n...\nz\n' 'a\nb\n'
glob_selftest match '"..." last takes the rest' 'a\n...\n' 'a\nb\nc\n'
glob_selftest match 'after "...", a later match' '...\nb\nc\n' 'b\nx\nb\nc\n'
glob_selftest match '"*" takes characters' 'peak * at 300 us\n' 'peak 15.0 GiB at 300 us\n'
glob_selftest match '"*" takes none' 'a*b\n' 'ab\n'
glob_selftest differ '"*" is within one line' 'a*b\n' 'a\nb\n'
glob_selftest differ 'the text around "*" counts' 'peak * at 300 us\n' 'peak 15.0 GiB at 301 us\n'
glob_selftest differ 'a piece twice needs two' '*aa*aa*\n' 'aaa\n'
glob_selftest match '"\*" is a star' 'a \\*b\\* c\n' 'a *b* c\n'
glob_selftest differ '"\*" is only a star' 'a \\*b\\* c\n' 'a bb c\n'
glob_selftest differ 'no other wildcard' 'a?c [x]\n' 'abc x\n'

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
        for stream in stdout stderr; do
            [ -f "$case.$stream.glob" ] || cp "$TMP/$name.$stream" "$case.$stream.exact"
        done
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
        glob=$case.$stream.glob
        if [ -f "$exp" ] && [ -f "$glob" ]; then
            fail "$name: $stream has one expectation" "both $exp and $glob"
        elif [ -f "$glob" ]; then
            if glob_match "$glob" "$TMP/$name.$stream" >"$TMP/$name.why"; then
                pass "$name: $stream matches its glob"
            else
                fail "$name: $stream matches its glob"
                sed 's/^/#   /' "$TMP/$name.why"
            fi
        elif [ -f "$exp" ]; then
            if cmp -s "$exp" "$TMP/$name.$stream"; then
                pass "$name: $stream as expected"
            else
                fail "$name: $stream as expected"
                show_diff "$exp" "$TMP/$name.$stream"
            fi
        fi
    done
    rm -rf "$dir"
done

finish
