#!/usr/bin/env bash
# test/unit/run.sh: shardid's pure core outside the server.
#   1. the unit test, built with -fsanitize=address,undefined where the C
#      compiler ($CC, default cc) supports it, plainly where it does not;
#   2. the libFuzzer target for FUZZ_SECONDS (default 60), when clang with
#      libFuzzer is there (Debian packages clang-14 libclang-rt-14-dev,
#      which `make deps` installs); otherwise it says so and skips it.
# Needs a C compiler and nothing else.  Exits non-zero on any failure.
# test/run.sh runs it as one test; `make unit` runs it alone.
set -u
cd "$(dirname "$0")/../.." || exit 1
out=$(mktemp -d "${TMPDIR:-/tmp}/shardid-unit.XXXXXX")
trap 'rm -rf "$out"' EXIT
status=0
cc=${CC:-cc}

san="-fsanitize=address,undefined -fno-sanitize-recover=all"
if echo 'int main(void) { return 0; }' >"$out/probe.c" &&
	"$cc" $san -o "$out/probe" "$out/probe.c" >/dev/null 2>&1 && "$out/probe"; then
	echo "unit test ($cc, address and undefined behaviour sanitizers)"
else
	san=""
	echo "unit test ($cc; no sanitizers: this compiler cannot build with -fsanitize=address,undefined)"
fi
"$cc" -O1 -g -Wall -Wextra -Werror $san -o "$out/core_test" test/unit/core_test.c || exit 1
"$out/core_test" || status=1

clang=$(command -v clang-14 || command -v clang)
if [ -z "$clang" ] ||
	! "$clang" -fsanitize=fuzzer -o "$out/fuzz_probe" -x c - >/dev/null 2>&1 \
		<<<'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }'; then
	echo "fuzzing skipped: needs clang with libFuzzer (Debian packages clang-14 libclang-rt-14-dev; make deps)"
	exit $status
fi
echo "fuzzing for ${FUZZ_SECONDS:-60} s ($clang, libFuzzer, address and undefined behaviour sanitizers)"
"$clang" -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-o "$out/fuzz_core" test/unit/fuzz_core.c || exit 1
mkdir -p "$out/corpus"
(cd "$out" && ./fuzz_core -max_total_time="${FUZZ_SECONDS:-60}" -max_len=4096 -print_final_stats=1 corpus \
	>fuzz.log 2>&1)
fuzz_status=$?
grep -E "^(stat::number_of_executed_units|stat::new_units_added|#[0-9]+ +DONE)" "$out/fuzz.log"
if [ $fuzz_status != 0 ]; then
	tail -40 "$out/fuzz.log"
	status=1
fi
exit $status
