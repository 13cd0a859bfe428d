#!/usr/bin/env bash
# The schema's migrations are the files of schemas/migrations/, listed by
# the build (vr_embed), never by hand: the list comes out in the order of
# their numbers, and a folder whose numbers have a gap, a number twice or
# a .sql file not named NNN-what.sql fails the build with a message that
# names the file. The built binary's schema version is the last number.
set -e
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
cd "$TMP"

EMBED=$VR_BUILDDIR/vr_embed
[ -x "$EMBED" ] || { fail "vr_embed is built ($EMBED)"; finish; }

# embed NAME FILE...: a source tree whose schemas/migrations holds FILEs,
# embedded into NAME.c (stderr in NAME.err); its exit status.
embed() {
    name=$1
    shift
    rm -rf "src-$name"
    mkdir -p "src-$name/schemas/migrations"
    for f in "$@"; do
        echo "-- $f" >"src-$name/schemas/migrations/$f"
    done
    echo "-- not a migration" >"src-$name/schemas/migrations/README"
    "$EMBED" "$name.c" "src-$name" --migrations schemas/migrations 2>"$name.err"
}

if embed good 002-second.sql 010-tenth.sql 001-first.sql 003-third.sql 004-a.sql 005-b.sql \
    006-c.sql 007-d.sql 008-e.sql 009-f.sql; then
    pass "ten migrations, found in any order: embedded"
else
    fail "ten migrations, found in any order: embedded" "$(cat good.err)"
fi
got=$(sed -n '/vr_migrations\[\] = {/,/^};/p' good.c | grep -o 'schemas/migrations/[^"]*' | tr '\n' ' ')
want="schemas/migrations/001-first.sql schemas/migrations/002-second.sql schemas/migrations/003-third.sql schemas/migrations/004-a.sql schemas/migrations/005-b.sql schemas/migrations/006-c.sql schemas/migrations/007-d.sql schemas/migrations/008-e.sql schemas/migrations/009-f.sql schemas/migrations/010-tenth.sql "
[ "$got" = "$want" ] && pass "listed by number (10 after 9), the other file not taken" \
    || fail "listed by number (10 after 9), the other file not taken" "got $got"
grep -q 'vr_migration_count = 10;' good.c && pass "the count is the last number" \
    || fail "the count is the last number" "$(grep vr_migration_count good.c)"

# refused NAME DESC PATTERN FILE...: the build fails, saying PATTERN.
refused() {
    name=$1 desc=$2 pattern=$3
    shift 3
    if embed "$name" "$@"; then
        fail "$desc: the build fails"
    elif grep -q -- "$pattern" "$name.err"; then
        pass "$desc: the build fails ($(head -n 1 "$name.err"))"
    else
        fail "$desc: the build fails, saying so" "$(cat "$name.err")"
    fi
}
refused gap "a gap (no 002)" "003-third.sql: no migration 2 before it" \
    001-first.sql 003-third.sql
refused late "a first migration numbered 2" "002-second.sql: no migration 1 before it" \
    002-second.sql 003-third.sql
refused twice "two migrations numbered 2" "two migrations numbered 2" \
    001-first.sql 002-second.sql 002-other.sql
refused misnamed "a migration without its number" "first.sql: a migration is named NNN-what.sql" \
    001-first.sql first.sql
refused short "a number of two digits" "02-second.sql: a migration is named NNN-what.sql" \
    001-first.sql 02-second.sql
refused none "no migration at all" "no migration"

# The tree's own: every file of schemas/migrations, 1 to the last without
# a gap, and a new database gets that version.
last=$(ls "$VR_SRCDIR/schemas/migrations" | grep -c '^[0-9][0-9][0-9]-.*\.sql$')
"$VRAMREPORT" import "$VR_SRCDIR/tests/cli/data/tiny.pt.trace.json" --db new.db -q ||
    fail "an import into a new database"
[ "$(sqlite3 new.db 'PRAGMA user_version')" = "$last" ] \
    && pass "a new database has the version of the last of the $last migrations" \
    || fail "a new database has the version of the last of the $last migrations" \
        "user_version $(sqlite3 new.db 'PRAGMA user_version')"

finish
