# tests/lib.sh: helpers shared by the shell test suites. Source it after
# `set -eu`; it sets up
#   VRAMREPORT   the binary under test (absolute path)
#   VR_SRCDIR    the source tree (absolute)
#   VR_BUILDDIR  the build tree (absolute)
#   TMP          a scratch directory, removed when the script exits
#   PYTHON       python3 (its resolved path)
# and gives
#   pass DESC / fail DESC [DETAIL...]   record one result
#   check DESC CMD...                   run CMD; ok when it exits 0 (its
#                                       output is shown on failure)
#   tap_lines FILE                      record results a helper wrote as
#                                       "PASS<TAB>desc" / "FAIL<TAB>desc<TAB>detail"
#   crashed RC ERRFILE                  true when RC/stderr show a crash
#   need TOOL                           fails (never skips) when TOOL is missing
#   vr_run NAME ARGS...                 runs $VRAMREPORT: exit status in $rc,
#                                       stdout in NAME.out, stderr in NAME.err
#   json_get FILE EXPR                  a Python expression over the JSON
#                                       report FILE, as `d`
#   finish                              print the summary (and the time the
#                                       script took) and exit
# Output is TAP-ish: "ok N - desc", "not ok N - desc", "# N passed, N failed".

LC_ALL=C
export LC_ALL
unset GREP_OPTIONS 2>/dev/null || true

vr_lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)
: "${VR_SRCDIR:=$(cd "$vr_lib_dir/.." && pwd)}"
: "${VR_BUILDDIR:=$VR_SRCDIR}"
: "${VRAMREPORT:=$VR_BUILDDIR/vramreport}"
# The tests change directory: make every path absolute.
vr_abs() {
    case $1 in
    /*) printf '%s\n' "$1" ;;
    *) printf '%s/%s\n' "$(pwd)" "$1" ;;
    esac
}
VR_SRCDIR=$(vr_abs "$VR_SRCDIR")
VR_BUILDDIR=$(vr_abs "$VR_BUILDDIR")
VRAMREPORT=$(vr_abs "$VRAMREPORT")
export VRAMREPORT VR_SRCDIR VR_BUILDDIR
# tests/vrtest.py: the Python helpers the tests' programs share.
PYTHONPATH=$VR_SRCDIR/tests${PYTHONPATH:+:$PYTHONPATH}
export PYTHONPATH
# The scripts' own programs (tests/py/SCRIPT/*.py) import each other: no
# __pycache__ is written into the source tree.
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE

TMP=$(mktemp -d "${TMPDIR:-/tmp}/vrtest.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# python3 through its real path: a version manager's shim can cost a
# second a call. Missing python3 leaves PYTHON=python3, and checks fail.
PYTHON=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || PYTHON=python3
[ -n "$PYTHON" ] || PYTHON=python3

T_N=0
T_PASS=0
T_FAIL=0

pass() {
    T_N=$((T_N + 1))
    T_PASS=$((T_PASS + 1))
    printf 'ok %d - %s\n' "$T_N" "$1"
}

# fail DESC [DETAIL...]: each detail line is printed as a "#" comment.
fail() {
    T_N=$((T_N + 1))
    T_FAIL=$((T_FAIL + 1))
    printf 'not ok %d - %s\n' "$T_N" "$1"
    shift
    for d in "$@"; do
        printf '%s\n' "$d" | sed 's/^/#   /'
    done
}

check() {
    vr_desc=$1
    shift
    if "$@" >"$TMP/.check.out" 2>&1; then
        pass "$vr_desc"
    else
        fail "$vr_desc" "command failed (exit $?): $*"
        head -n 30 "$TMP/.check.out" | sed 's/^/#   /'
    fi
}

# Results written by a helper program, one a line.
tap_lines() {
    while IFS= read -r vr_line || [ -n "$vr_line" ]; do
        case $vr_line in
        PASS"	"*) pass "${vr_line#PASS	}" ;;
        FAIL"	"*)
            vr_rest=${vr_line#FAIL	}
            case $vr_rest in
            *"	"*) fail "${vr_rest%%	*}" "${vr_rest#*	}" ;;
            *) fail "$vr_rest" ;;
            esac
            ;;
        '') ;;
        # A check script that dies part-way must not pass with the checks
        # it never reached: Python's uncaught exception is a failure.
        'Traceback (most recent call last):')
            fail "the check script stopped on a Python exception (its traceback follows)"
            printf '#   %s\n' "$vr_line" ;;
        *) printf '#   %s\n' "$vr_line" ;;
        esac
    done <"$1"
}

# crashed RC ERRFILE: a signal, or a sanitizer's report.
crashed() {
    [ "$1" -ge 128 ] && return 0
    grep -q -e 'AddressSanitizer' -e 'runtime error' -e 'LeakSanitizer' -e 'ThreadSanitizer' \
        -e 'UndefinedBehaviorSanitizer' "$2" 2>/dev/null && return 0
    return 1
}

# A tool the suite needs: missing is a failure, not a skip.
need() {
    if command -v "$1" >/dev/null 2>&1; then
        pass "$1 is available"
        return 0
    fi
    fail "$1 is available" "$1 not found in PATH: install it (CI does)"
    return 1
}

# Counting occurrences of a fixed string in a file.
count_str() {
    grep -o -F -e "$1" "$2" 2>/dev/null | wc -l | tr -d ' '
}

vr_run() {
    vr_name=$1
    shift
    rc=0
    "$VRAMREPORT" "$@" >"$vr_name.out" 2>"$vr_name.err" || rc=$?
}

json_get() {
    "$PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1], encoding="utf-8")); print(eval(sys.argv[2]))' "$1" "$2" 2>&1 || true
}

finish() {
    printf '# %d passed, %d failed\n' "$T_PASS" "$T_FAIL"
    # the script's wall time (bash's SECONDS): .ci/run lists the slowest
    printf '# took %d s\n' "${SECONDS:-0}"
    if [ "$T_FAIL" -eq 0 ] && [ "$T_N" -gt 0 ]; then
        exit 0
    fi
    exit 1
}
