#!/usr/bin/env bash
# bench-compare: the bench program (./bench) at an earlier revision and at
# the working tree, run alternately on this machine, one table per figure.
#
#   BASE=e9194a2 RUNS=5 ONLY=asks scripts/bench-compare.sh [extra bench flags...]
#   make bench-compare BASE=e9194a2 RUNS=5 ONLY=asks ARGS='-secs 5'
#
# BASE is checked out with `git worktree add --detach` into a temporary
# directory (removed on exit) and its bench built there; the head bench is
# built from the working tree as it is, uncommitted changes included. Each
# bench runs from its own tree (the waiters figure builds that tree's
# cmd/bridge). Runs alternate base, head, head, base, base, head, ... so a
# drift in the machine's load weighs on both builds alike.
#
# SAME_BENCH=1 builds the base with the head's bench program (bench/*.go and
# the fake platforms adapters/*/fake*/*.go, tests left out) copied into its tree: the same measurements of the base's
# bridge, for figures the base's own bench did not have (it must compile
# against the base's packages; a file importing a package the base lacks is
# left out, so it must add its figures from an init, as clickteams.go does).
#
# ONLY is passed as -only to both, but only if both builds have that flag;
# otherwise both run every figure and a warning says so. Names one build
# does not know are reported (that build skips them). Extra arguments go to
# both builds unchanged: give only flags both have.
#
# The raw outputs stay in OUT (default: a new /tmp/bench-compare.* directory).
# Each figure line ("floor ...:", "(c) ...:", and its indented follow-ups)
# becomes one table: every number on it is a row, named by the two words
# before it and the word after it (or, printed as "N µs in X", by where it
# is: "_ µs in X"); a row is left out when every value printed for it
# (by either build, in any run) is the same: targets, counts fixed by the flags.
set -euo pipefail

GO=${GO:-go}
RUNS=${RUNS:-5}
ONLY=${ONLY:-}
BASE=${BASE:-}
TABLE=${TABLE:-}
SAME_BENCH=${SAME_BENCH:-}
if [ -z "$BASE" ] && [ -z "$TABLE" ]; then
  echo "usage: BASE=<rev> [RUNS=5] [ONLY=asks,...] [OUT=dir] $0 [bench flags...]" >&2
  exit 2
fi
if [ -n "$TABLE" ]; then
  # reprint the tables of an earlier comparison from its raw output
  OUT=$TABLE
  RUNS=$(ls "$OUT"/base.*.txt | wc -l)
  BASE=${BASE:-base}
fi
case $RUNS in '' | *[!0-9]* | 0) echo "RUNS must be a positive integer" >&2; exit 2 ;; esac

if [ -z "$TABLE" ]; then
for c in redis-server redis-cli; do
  command -v $c >/dev/null || { echo "$c not found: the bench needs it (make deps, or apt-get install redis-server redis-tools)" >&2; exit 2; }
done
top=$(git rev-parse --show-toplevel)
base_rev=$(git -C "$top" rev-parse --verify --quiet "$BASE^{commit}") || { echo "unknown revision: $BASE" >&2; exit 2; }
head_desc="$(git -C "$top" rev-parse --short HEAD)$(git -C "$top" diff --quiet HEAD -- 2>/dev/null || echo '+dirty')"
OUT=${OUT:-$(mktemp -d /tmp/bench-compare.XXXXXX)}
mkdir -p "$OUT"

tmp=$(mktemp -d /tmp/bench-compare-src.XXXXXX)
cleanup() {
  git -C "$top" worktree remove --force "$tmp/base" >/dev/null 2>&1 || true
  rm -rf "$tmp"
  git -C "$top" worktree prune >/dev/null 2>&1 || true
}
trap cleanup EXIT INT TERM

echo "== building bench at $BASE (${base_rev:0:12}) and at the working tree ($head_desc)"
git -C "$top" worktree add --detach --quiet "$tmp/base" "$base_rev"
if [ -n "$SAME_BENCH" ]; then
  echo "== SAME_BENCH: the base is measured by the working tree's bench program"
  find "$tmp/base/bench" -maxdepth 1 -name '*.go' ! -name '*_test.go' -delete
  find "$top/bench" -maxdepth 1 -name '*.go' ! -name '*_test.go' -exec cp {} "$tmp/base/bench/" \;
  # the fake platforms it drives are part of it: the base's copies (tests
  # left out) are replaced by the working tree's
  for d in "$top"/adapters/*/fake*/; do
    d=${d#"$top"/}; d=${d%/}
    [ -d "$tmp/base/$d" ] || continue
    find "$tmp/base/$d" -maxdepth 1 -name '*.go' ! -name '*_test.go' -delete
    find "$top/$d" -maxdepth 1 -name '*.go' ! -name '*_test.go' -exec cp {} "$tmp/base/$d/" \;
  done
  # a file that imports a package of this module the base does not have
  # (a surface added since) is left out: the figures it adds are not the base's
  mod=$(sed -n 's/^module //p' "$top/go.mod")
  for f in "$tmp/base/bench/"*.go; do
    for p in $(grep -o "\"$mod/[^\"]*\"" "$f" | tr -d '"' | sort -u); do
      if [ ! -d "$tmp/base/${p#"$mod"/}" ]; then
        echo "   left out bench/$(basename "$f"): the base has no ${p#"$mod"/}"
        rm -f "$f"
        break
      fi
    done
  done
fi
(cd "$tmp/base" && "$GO" build -o "$tmp/bench-base" ./bench)
(cd "$top" && "$GO" build -o "$tmp/bench-head" ./bench)

# The flags each build has, from its -h output (the flag package prints
# "  -name" lines), and the default of -only (the figures it knows).
flags_of() { "$1" -h 2>&1 | sed -n 's/^  -\([a-zA-Z0-9_-]*\).*/\1/p'; }
figures_of() {
  "$1" -h 2>&1 | awk '/^  -only/ { getline; d = ""; o = ""
    if (match($0, /default "[^"]*"/)) d = substr($0, RSTART + 9, RLENGTH - 10)
    if (match($0, /opt-in: [^)]*/)) o = "," substr($0, RSTART + 8, RLENGTH - 8)
    print d o }'
}
only_args=()
if [ -n "$ONLY" ]; then
  if flags_of "$tmp/bench-base" | grep -qx only && flags_of "$tmp/bench-head" | grep -qx only; then
    only_args=(-only "$ONLY")
    for b in base head; do
      known=",$(figures_of "$tmp/bench-$b"),"
      IFS=, read -ra want <<<"$ONLY"
      for f in "${want[@]}"; do
        [[ $known == *",$f,"* ]] || echo "warning: the $b build does not know figure '$f' (it knows ${known:1:${#known}-2}); it prints nothing for it" >&2
      done
    done
  else
    echo "warning: ONLY ignored: the base or the head build has no -only flag, so both run every figure" >&2
  fi
fi

echo "== $RUNS runs each, alternating; raw output in $OUT"
for ((i = 1; i <= RUNS; i++)); do
  if ((i % 2)); then order="base head"; else order="head base"; fi
  for b in $order; do
    if [ "$b" = base ]; then dir=$tmp/base; else dir=$top; fi
    log="$OUT/$b.$i.txt"
    start=$(date +%s)
    if (cd "$dir" && "$tmp/bench-$b" "${only_args[@]}" "$@") >"$log" 2>&1; then st=ok; else st="FAILED (exit $?; see $log)"; fi
    echo "   run $i $b: $(($(date +%s) - start)) s, $st"
  done
done
echo "base=$BASE base_rev=$base_rev head=$head_desc only=$ONLY same_bench=${SAME_BENCH:-}" >"$OUT/builds"
fi

# One table per figure. Pass 1 turns each log into "figure<TAB>metric<TAB>value"
# rows; pass 2 prints them grouped by figure and metric.
extract() {
  awk -v OFS='\t' '
    function isnum(t) { return t ~ /^[(+~]*-?[0-9]+(\.[0-9]+)?(x|%|\/s|s)?[,;:)]*$/ }
    # a name with its numbers as N, so a figure is the same figure in every run
    function norm(t,   n, w, k, o) { n = split(t, w, " "); o = ""; for (k = 1; k <= n; k++) o = o (o == "" ? "" : " ") (isnum(w[k]) ? "N" : w[k]); return o }
    function word(t) { if (isnum(t)) return "N"; gsub(/[,;:()]/, "", t); return t }
    # a word that names nothing on its own: a number, a unit, an empty word
    function weak(t) { return t == "" || t == "N" || t ~ /^(ms|s|B|MB|KB|bytes|in|at)$/ }
    function name(t) { return index(t, ":") ? substr(t, 1, index(t, ":") - 1) : t }
    /^askbridge bench/ { next }
    /^[^ ]/ && index($0, ":") { fig = norm(name($0)); emit(fig, $0); next }
    /^    [^ ]/ && fig != "" { line = $0; sub(/^ +/, "", line); emit(fig " / " norm(name(line)), line); next }
    # every number on the line is one value, named by the two words before
    # it and the word after it ("p99 _ ms", "Slack: _ asks/s")
    function emit(f, s,   n, w, k, v, label, seen, nx, p1, p2, unit, inw) {
      n = split(s, w, " "); delete seen
      for (k = 1; k <= n; k++) {
        if (!isnum(w[k])) continue
        v = w[k]; gsub(/^[(+~]+|[,;:)]+$/, "", v)
        nx = ""; unit = 0
        if (v ~ /(x|%|\/s|s)$/) { match(v, /(x|%|\/s|s)$/); nx = substr(v, RSTART); v = substr(v, 1, RSTART - 1) }
        else if (k < n) { nx = " " word(w[k + 1]); unit = 1 }
        p1 = k > 1 ? word(w[k - 1]) : ""; p2 = k > 2 ? word(w[k - 2]) : ""
        label = (weak(p2) || weak(p1) ? "" : p2 " ") (p1 == "" ? "" : p1 " ") "_" nx
        # "121 µs in redis-server": named by where it is, not by the words
        # before it ("..., fake Slack), 121 µs in redis-server")
        if (unit && k + 3 <= n && w[k + 2] == "in" && !isnum(w[k + 3])) {
          inw = word(w[k + 3])
          if ((inw == "the" || inw == "this") && k + 4 <= n) inw = inw " " word(w[k + 4])
          label = "_" nx " in " inw
        }
        if (++seen[label] > 1) label = label " #" seen[label]
        print f, label, v
      }
    }' "$1"
}

{
  for ((i = 1; i <= RUNS; i++)); do
    for b in base head; do
      extract "$OUT/$b.$i.txt" | awk -v b="$b" -v i="$i" -F'\t' -v OFS='\t' '{ print NR, b, i, $1, $2, $3 }'
    done
  done
} >"$OUT/rows.tsv"

echo
[ -f "$OUT/builds" ] && cat "$OUT/builds"
echo "$RUNS runs each, alternating; ratio = median(head) / median(base)"
sort -t$'\t' -k1,1n -s "$OUT/rows.tsv" | awk -F'\t' -v runs="$RUNS" '
  function median(s,   a, n, t, i, j) {
    n = split(s, a, " "); if (n == 0) return ""
    for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  function lo(s,   a, n, i, m) { n = split(s, a, " "); m = a[1] + 0; for (i = 2; i <= n; i++) if (a[i] + 0 < m) m = a[i] + 0; return n ? m : "" }
  function hi(s,   a, n, i, m) { n = split(s, a, " "); m = a[1] + 0; for (i = 2; i <= n; i++) if (a[i] + 0 > m) m = a[i] + 0; return n ? m : "" }
  {
    key = $4 SUBSEP $5
    if (!(key in order)) { order[key] = ++nk; keys[nk] = key; if (!($4 in figseen)) { figseen[$4] = 1; figs[++nf] = $4 } }
    vals[key, $2] = vals[key, $2] (vals[key, $2] == "" ? "" : " ") $6
    if (first[key] == "") first[key] = $6; else if (first[key] != $6) varies[key] = 1
    count[key]++
  }
  END {
    for (f = 1; f <= nf; f++) {
      printed = 0
      for (k = 1; k <= nk; k++) {
        split(keys[k], p, SUBSEP); if (p[1] != figs[f] || (!(keys[k] in varies) && count[keys[k]] > 1)) continue
        if (!printed) { printf "\n%s\n  %-32s %-5s %-44s %-19s %-9s %s\n", figs[f], "value", "build", "runs", "min–max", "median", "ratio"; printed = 1 }
        mb = median(vals[keys[k], "base"]); mh = median(vals[keys[k], "head"])
        r = (mb != "" && mh != "" && mb + 0 != 0) ? sprintf("%.3f", mh / mb) : "n/a"
        printf "  %-32s %-5s %-44s %-19s %-9s\n", p[2], "base", vals[keys[k], "base"], (mb == "" ? "-" : lo(vals[keys[k], "base"]) "–" hi(vals[keys[k], "base"])), mb
        printf "  %-32s %-5s %-44s %-19s %-9s %s\n", "", "head", vals[keys[k], "head"], (mh == "" ? "-" : lo(vals[keys[k], "head"]) "–" hi(vals[keys[k], "head"])), mh, r
      }
    }
  }'
echo
echo "raw output: $OUT"
