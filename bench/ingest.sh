#!/bin/sh
# Ingest rate: perfgate-controller ingest over a generated public-inbox v2
# archive of PG_BENCH_MESSAGES mails (default 50,000), next to git's own C
# tools over the same mails in the same run: `git mailsplit` of the
# equivalent mbox, then `git mailinfo` per message (the way git am reads a
# series).  git mailinfo costs one process per mail, so by default it runs
# on an evenly spaced sample of PG_BENCH_GIT_SAMPLE mails (default 2,000;
# "all" for every one) and its rate is the sample's.  perfgate does more
# per mail than mailinfo (MIME, series assembly, a durable store), so the
# ratio is a floor.
set -eu
build=${PG_BUILD:?run through make bench}
top=$(cd "$(dirname "$0")/.." && pwd)
n=${PG_BENCH_MESSAGES:-50000}
sample=${PG_BENCH_GIT_SAMPLE:-2000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pg-bench-ingest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
rate() { echo "$1 $2 $3" | awk '{ printf "%.0f", $1 / ($3 - $2) }'; }

python3 "$top/tests/intake/gen-archive.py" "$tmp/archive" "$n" --mbox "$tmp/all.mbox" >/dev/null
cat >"$tmp/c.json" <<EOC
{ "db": "$tmp/state/p.db", "data_dir": "$tmp/state", "profiles_dir": "$top/profiles",
  "profiles": ["demo.json"] }
EOC

t0=$(now)
"$build/perfgate-controller" --config "$tmp/c.json" --log-level warn ingest --inbox "$tmp/archive" \
	>"$tmp/ingest.out"
t1=$(now)
grep -q "^messages read: *$n\$" "$tmp/ingest.out" || { cat "$tmp/ingest.out"; exit 1; }
pg_rate=$(rate "$n" "$t0" "$t1")

mkdir "$tmp/split"
t0=$(now)
git mailsplit -o"$tmp/split" "$tmp/all.mbox" >/dev/null
t1=$(now)
split_s=$(echo "$t0 $t1" | awk '{ printf "%.3f", $2 - $1 }')
[ "$sample" = all ] && sample=$n
step=$(( n / sample ))
[ $step -ge 1 ] || step=1
ls "$tmp/split" | awk -v s=$step 'NR % s == 0' >"$tmp/sample"
m=$(wc -l <"$tmp/sample")
t0=$(now)
while read -r f; do
	git mailinfo "$tmp/msg" "$tmp/patch" <"$tmp/split/$f" >/dev/null
done <"$tmp/sample"
t1=$(now)
info_s=$(echo "$t0 $t1 $m $n" | awk '{ printf "%.3f", ($2 - $1) * $4 / $3 }')
git_rate=$(echo "$n $split_s $info_s" | awk '{ printf "%.0f", $1 / ($2 + $3) }')
echo "bench ingest: messages=$n perfgate=${pg_rate} msg/s" \
	"git_mailsplit+mailinfo=${git_rate} msg/s (mailinfo on $m of $n)" \
	"ratio=$(echo "$pg_rate $git_rate" | awk '{ printf "%.1f", $1 / $2 }')x"
