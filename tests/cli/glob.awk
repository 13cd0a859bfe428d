# tests/cli/glob.awk: does a case's output match its .glob expectation?
#
#   LC_ALL=C awk -f glob.awk EXPECTED.glob ACTUAL
#
# Line by line, as zstd's tests/cli-tests match their .glob files:
#   - a line that is "..." alone matches any number of lines (none too);
#   - within a line, "*" matches any run of characters (none too), and
#     "\*" a "*" itself; every other character matches only itself.
# Exit 0 on a match. Otherwise exit 1 and say where it failed: the furthest
# expected line the output reached, what the output held there.

function line_match(p, s,    parts, n, i, pos, k, last) {
    gsub(/\\\*/, "\001", p)          # "\*": a literal star, kept out of split
    n = split(p, parts, /[*]/)
    for (i = 1; i <= n; i++)
        gsub(/\001/, "*", parts[i])
    if (n == 1)
        return parts[1] == s
    if (substr(s, 1, length(parts[1])) != parts[1])
        return 0
    pos = length(parts[1]) + 1
    for (i = 2; i < n; i++) {        # the middle pieces, leftmost first
        if (parts[i] == "")
            continue
        k = index(substr(s, pos), parts[i])
        if (!k)
            return 0
        pos += k - 1 + length(parts[i])
    }
    last = length(s) - length(parts[n]) + 1
    return last >= pos && substr(s, last) == parts[n]
}

# The furthest expected line reached, for the message.
function reached(pi, ai) {
    if (pi > far_pi || (pi == far_pi && ai > far_ai)) {
        far_pi = pi
        far_ai = ai
    }
}

FILENAME == ARGV[1] { P[++np] = $0; next }
{ A[++na] = $0 }

END {
    # Wildcard matching over lines, "..." the wildcard: on a mismatch, go
    # back to the last "..." and let it take one more line.
    pi = 1; ai = 1; star = 0; mark = 0; far_pi = 0; far_ai = 0
    while (ai <= na) {
        if (pi <= np && P[pi] == "...") {
            star = pi++
            mark = ai
        } else if (pi <= np && line_match(P[pi], A[ai])) {
            pi++
            ai++
        } else {
            reached(pi, ai)
            if (!star)
                break
            pi = star + 1
            ai = ++mark
        }
    }
    if (ai > na) {
        while (pi <= np && P[pi] == "...")
            pi++
        if (pi > np)
            exit 0
        reached(pi, ai)
    }
    if (far_pi > np)
        printf "line %d of the output: %s\nexpected: the end of the output (the .glob has %d lines)\n",
               far_ai, A[far_ai], np
    else if (far_ai > na)
        printf "%s\nexpected (line %d of the .glob): %s\n",
               na ? "the output ended after line " na : "the output is empty",
               far_pi, P[far_pi]
    else
        printf "line %d of the output: %s\nexpected (line %d of the .glob): %s\n",
               far_ai, A[far_ai], far_pi, P[far_pi]
    exit 1
}
