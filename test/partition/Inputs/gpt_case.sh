#!/bin/sh
# Compiles the GPT-style fixture (batch 4) with the given partitioning flags, runs it, and
# compares its outputs with the unpartitioned run of the same program (made on first use).
# usage: gpt_case.sh SHARDC PYTHON DIR inference|training NAME "LAUNCHER" [compile flags...]
# LAUNCHER is "" (devices as threads) or an mpirun prefix such as "mpirun -np 4".
set -eu
shardc=$1 python=$2 dir=$3 mode=$4 name=$5 launch=$6
shift 6
# -b is one replica's batch: with -ws N the replicas share the fixture's batch of 4.
batch=4 prev=
for a in "$@"; do
  if [ "$prev" = -ws ]; then batch=$((4 / a)); fi
  prev=$a
done
here=$(dirname "$0")
inputs=$here/../../import/Inputs
mkdir -p "$dir"
if [ ! -f "$dir/idx.npy" ]; then
  "$python" -c "
import numpy as np
for n in ('idx', 'targets'):
    a = np.load('$inputs/gpt_loss/' + n + '.npy')
    np.save('$dir/' + n + '.npy', np.concatenate([a, a[:, ::-1]]))"
fi
if [ "$mode" = inference ]; then
  fixture=$inputs/gpt
  common="--inference"
  run="--input idx=$dir/idx.npy"
  out=logits
else
  fixture=$inputs/gpt_loss
  common="--optimizer adam --learning-rate 0.01"
  run="--steps 3 --input idx=$dir/idx.npy --input targets=$dir/targets.npy"
  out=loss
fi
if [ ! -f "$dir/ref-$mode/o/$out.npy" ]; then
  "$shardc" compile "$fixture/model.onnx" $common -b 4 --output-folder "$dir" --pef-name "ref-$mode" >/dev/null
  "$shardc" run --pef "$dir/ref-$mode/ref-$mode.pef" $run --output-dir "$dir/ref-$mode/o" \
    --save-weights "$dir/ref-$mode/w.npz"
fi
"$shardc" compile "$fixture/model.onnx" $common -b "$batch" --output-folder "$dir" --pef-name "$name" "$@" >/dev/null
$launch "$shardc" run --pef "$dir/$name/$name.pef" $run --output-dir "$dir/$name/o" \
  --save-weights "$dir/$name/w.npz"
"$python" "$here/../../Inputs/compare_npy.py" "$dir/$name/o/$out.npy" "$dir/ref-$mode/o/$out.npy" --max-rel 1e-4
# The key bias gets no gradient but rounding noise, which Adam scales up to steps of the
# learning rate (softmax ignores a constant added to every score); the train tests skip it too.
# Adam amplifies rounding differences of near-zero gradients elsewhere too (its first steps
# move every element by about the learning rate, whatever the gradient's size), so the weights
# are held to 1e-2 of each array's largest value; the losses of the later steps, which depend
# on every update, are held to 1e-4.
"$python" "$here/../../Inputs/compare_npy.py" "$dir/$name/w.npz" "$dir/ref-$mode/w.npz" \
  --max-rel 1e-2 --skip gpt.h.0.attn.c_attn.bias:32:64 --skip gpt.h.1.attn.c_attn.bias:32:64
