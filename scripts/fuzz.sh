#!/usr/bin/env bash
# Builds the libFuzzer targets in build-asan/ (clang, ASan + UBSan: the build the sanitizer
# test pass of scripts/test.sh uses too, so one build serves both) and runs each for SECONDS
# (default 30), two at a time (one per core), from seed corpora made of the test fixtures;
# prints each target's executions and fails on any finding (the crashing input is kept in
# build-asan/fuzz/findings/).
# Usage: scripts/fuzz.sh [SECONDS]   (needs build/bin/shardc for the PEF seeds)
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-30}
TARGETS=(IrParser Npy Npz Pef Onnx Target Rules Strategy Checkpoint)

scripts/configure-asan.sh
cmake --build build-asan --target "${TARGETS[@]/#/fuzz-}"
work=build-asan/fuzz

seeds=$work/seeds
rm -rf "$seeds" $work/findings
mkdir -p "${TARGETS[@]/#/$seeds/}" $work/findings
# Copies the files named on stdin into seeds/$1, numbered (fixtures share file names).
seed() {
  local n=0 f
  while IFS= read -r f; do
    cp "$f" "$seeds/$1/$((n++))-$(basename "$f")"
  done
}
find test -name '*.ir' -size -64k | seed IrParser
find unittests/fixtures/npy test/import/Inputs -name '*.npy' -size -64k | seed Npy
find test/import/Inputs -name 'model.onnx' -size -1M | seed Onnx
find test unittests -name '*.npz' -size -1M | seed Npz
find targets -name '*.yaml' | seed Target
find rules test/dataflow/Inputs -name '*.yaml' | seed Rules
find test/search/Inputs test/partition/Inputs/strategies -name '*.strategy' -o -name '*.txt' |
  seed Strategy
# A checkpoint's progress.json as `shardc run --checkpoint-dir` writes it.
cat >"$seeds/Checkpoint/progress.json" <<'JSON'
{
  "step": 8,
  "epoch": 1,
  "position": 12,
  "batch": 4,
  "shuffle": true,
  "data_seed": 7,
  "pef_checksum": "00f1e2d3c4b5a697",
  "arguments": ["run", "--pef", "t.pef", "--data", "x=x.npy"]
}
JSON
# PEF payloads, each after the length of its weights block (the target adds the header, a block
# of zeros and the checksum): an inference, a training and a partitioned PEF of the small GPT.
n=0
while read -r model flags; do
  name=p$((++n))
  # shellcheck disable=SC2086
  build/bin/shardc compile "test/import/Inputs/$model" $flags --output-folder $work/pefs \
    --pef-name "$name" >/dev/null
  python3 -c "import struct, sys; b = open(sys.argv[1], 'rb').read(); n, w = struct.unpack_from('<QQ', b, 16); open(sys.argv[2], 'wb').write(struct.pack('<I', w) + b[32:32 + n])" \
    "$work/pefs/$name/$name.pef" "$seeds/Pef/$name"
done <<'LIST'
gpt/model.onnx --inference -b 2
gpt_loss/model.onnx -b 2 --optimizer adam
gpt/model.onnx --inference -b 4 --data-parallel -ws 2
LIST

# The partitioned compile's strategy file seeds the strategy parser too.
cp $work/pefs/p3/p3.strategy "$seeds/Strategy/"

# Runs target $1; its exit status is the fuzzer's.
fuzz() {
  ASAN_OPTIONS=detect_leaks=1 build-asan/bin/fuzz-$1 "$seeds/$1" -max_total_time="$SECONDS_EACH" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=$work/findings/$1- \
    >"$work/fuzz-$1.log" 2>&1
}
report() {
  local log=$work/fuzz-$1.log
  if (($2 == 0)); then
    echo "fuzz-$1: $(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$') executions in ${SECONDS_EACH} s, no finding"
  else
    echo "fuzz-$1: FINDING (see $log and $work/findings/)"
    tail -30 "$log"
    status=1
  fi
}
status=0
for ((i = 0; i < ${#TARGETS[@]}; i += 2)); do
  a=${TARGETS[i]} b=${TARGETS[i + 1]:-}
  fuzz "$a" & pa=$!
  ra=0
  if [[ -n $b ]]; then
    fuzz "$b" & pb=$!
    rb=0
    wait $pb || rb=$?
  fi
  wait $pa || ra=$?
  report "$a" $ra
  [[ -z $b ]] || report "$b" $rb
done
exit $status
