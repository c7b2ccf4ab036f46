// ONNX Runtime (the npm package onnxruntime-node, CPU execution provider, graph optimization
// "all") timing one model, for the benchmarks that set shardc beside it:
//   node bench/ort_run.js MODEL.onnx THREADS STEPS NAME=FILE.npy ...
// prints one JSON line: {"version", "threads", "median_ms", "first_ms"}. The package is found
// through NODE_PATH (npm install --ignore-scripts onnxruntime-node, then
// NODE_PATH=DIR/node_modules).
"use strict";
const fs = require("fs");
const ort = require("onnxruntime-node");

// A .npy file (version 1 or 2, little-endian, C order) as an ort.Tensor.
function readNpy(path) {
  const buf = fs.readFileSync(path);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLen;
  const header = buf.toString("latin1", major === 1 ? 10 : 12, start);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(path + ": Fortran order");
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1]
    .split(",").map((s) => s.trim()).filter((s) => s.length).map(Number);
  const data = buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + buf.length);
  const kinds = { "<f4": ["float32", Float32Array], "<i8": ["int64", BigInt64Array],
                  "<i4": ["int32", Int32Array] };
  if (!kinds[descr]) throw new Error(path + ": dtype " + descr + " not supported here");
  const [type, Array] = kinds[descr];
  return new ort.Tensor(type, new Array(data.slice(0)), shape);
}

async function main() {
  const [model, threads, steps, ...specs] = process.argv.slice(2);
  const feeds = {};
  for (const spec of specs) {
    const eq = spec.indexOf("=");
    feeds[spec.slice(0, eq)] = readNpy(spec.slice(eq + 1));
  }
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ["cpu"], graphOptimizationLevel: "all",
    intraOpNumThreads: Number(threads), interOpNumThreads: 1,
  });
  const times = [];
  for (let i = 0; i < Number(steps) + 1; ++i) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const first = times.shift();
  times.sort((a, b) => a - b);
  const version = require("onnxruntime-node/package.json").version;
  console.log(JSON.stringify({ version, threads: Number(threads),
                               median_ms: times[Math.floor(times.length / 2)], first_ms: first }));
}

main().catch((e) => { console.error("ort_run.js: " + e.message); process.exit(1); });
