#!/bin/sh
# Run each benchmark program built from bench/*.c and print its figures.
# A benchmark prints lines "bench NAME: key=value ..." (ratios against a
# reference measured in the same process where possible) and exits 0.
set -u
if [ $# -eq 0 ]; then
	echo "bench: no benchmarks built"
	exit 0
fi
failed=0
for b in "$@"; do
	# run.sh itself and the generators the benchmarks call (*_gen.sh).
	case $(basename "$b") in
	run.sh|*_gen.sh) continue ;;
	esac
	echo "== $(basename "$b")"
	if ! "$b"; then
		echo "bench: $(basename "$b") failed" >&2
		failed=$((failed + 1))
	fi
done
[ "$failed" -eq 0 ]
