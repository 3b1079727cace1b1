#!/usr/bin/env node
'use strict';
// usage: node tools/ort/optimized_ops.js MODEL.onnx [--level L] [--materialize HASE_MATERIALIZE]
//                                        [--keep DIR]
// Optimises MODEL with onnxruntime-node (CPU execution provider, default level "extended") and
// prints the optimised graph as JSON on stdout:
//   {"model": MODEL, "level": L, "ort_version": "1.30.0",
//    "ops": {"FusedConv": 33, ...},                     // node count per op_type, sorted by name
//    "kernels": {"FusedConv(Relu)": 33, ...},           // same, fused activation in brackets
//    "nodes": [{"name", "op_type", "domain", "inputs", "outputs"[, "activation"]}, ...],
//                                                       // topological order
//    "optimize_ms": 123.4}                              // InferenceSession.create wall time
// A weight-free model (models/*.onnx) needs --materialize with the path of the hase_materialize
// binary: it first writes a full-weight copy into a temporary folder (removed afterwards unless
// --keep DIR is given, which keeps all files in DIR).
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const { optimize, readOps } = require('./ort_reference');

async function main(argv) {
  const pos = [];
  let level = 'extended';
  let materialize = null;
  let keep = null;
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--level') level = argv[++i];
    else if (a === '--materialize') materialize = argv[++i];
    else if (a === '--keep') keep = argv[++i];
    else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
    else pos.push(a);
  }
  if (pos.length !== 1) {
    throw new Error('usage: optimized_ops.js MODEL.onnx [--level L] [--materialize BIN] [--keep DIR]');
  }
  const model = pos[0];
  if (!fs.existsSync(model)) throw new Error(`${model}: no such file`);
  const dir = keep || fs.mkdtempSync(path.join(os.tmpdir(), 'hase-ort-'));
  fs.mkdirSync(dir, { recursive: true });
  const stem = path.basename(model, '.onnx');
  try {
    let runnable = model;
    if (materialize) {
      runnable = path.join(dir, `${stem}.full.onnx`);
      execFileSync(materialize, [model, runnable], { stdio: ['ignore', 'ignore', 'inherit'] });
    }
    const out = path.join(dir, `${stem}.ort-${level}.onnx`);
    const ms = await optimize(runnable, out, level);
    const { ops, kernels, nodes } = readOps(out);
    const version = require('onnxruntime-node/package.json').version;
    process.stdout.write(JSON.stringify({
      model, level, ort_version: version, ops, kernels, nodes, optimize_ms: Number(ms.toFixed(1)),
    }) + '\n');
  } finally {
    if (!keep) fs.rmSync(dir, { recursive: true, force: true });
  }
}

main(process.argv.slice(2)).catch((e) => {
  console.error(`optimized_ops.js: ${e.message}`);
  process.exit(1);
});
