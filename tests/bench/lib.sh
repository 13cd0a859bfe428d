# tests/bench/lib.sh - what the benchmark scripts share (sourced, after
# their arguments are read).
#
# bench_setup PREFIX TOOL: resolves vramreport ($VRAMREPORT, else
# ./vramreport) into $vr, makes the temporary folder $tmp (removed at the
# end unless $keep is 1), and builds TOOL.c (a generator of this folder)
# and rusage.c into it with $CC (default cc). $benchdir is this folder.
# Then, for the figures:
#   field NAME FILE   NAME=... of FILE's last "wall_s=" line (rusage's)
#   kb2mib KB         KiB as whole MiB
#   fmin A B, fmax A B   the smaller, the larger (an empty A: B)
bench_setup() {
    benchdir=$(cd "$(dirname "$0")" && pwd) || die "cannot locate the source tree"
    CC=${CC:-cc}
    vr=${VRAMREPORT:-./vramreport}
    case $vr in /*) ;; *) vr=$(pwd)/$vr ;; esac
    [ -x "$vr" ] || die "vramreport not found or not executable: $vr (set VRAMREPORT)"
    command -v python3 >/dev/null 2>&1 || die "python3 is needed to check the results"
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/vramreport-$1.XXXXXX") || die "mktemp failed"
    trap bench_cleanup EXIT
    trap 'exit 130' INT TERM
    log "building $2 and rusage with $CC"
    $CC -std=c11 -O2 -o "$tmp/$2" "$benchdir/$2.c" || die "cannot build $2"
    $CC -std=c11 -O2 -o "$tmp/rusage" "$benchdir/rusage.c" || die "cannot build rusage"
}

bench_cleanup() { if [ "$keep" = 1 ]; then log "kept $tmp"; else rm -rf "$tmp"; fi; }

field() { grep '^wall_s=' "$2" | tail -n 1 | tr ' ' '\n' | sed -n "s/^$1=//p"; }
kb2mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
fmin() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }'; }
fmax() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b + 0 > a + 0) ? b : a }'; }
