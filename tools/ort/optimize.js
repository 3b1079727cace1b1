#!/usr/bin/env node
'use strict';
// usage: node tools/ort/optimize.js MODEL.onnx OUT.onnx [--level extended|basic|all|layout|disabled]
// Runs onnxruntime-node's graph optimiser (CPU execution provider; default level "extended") on
// MODEL (weights must be present: use hase_materialize on a weight-free models/*.onnx first) and
// writes the optimised model to OUT (initializers >= 1 KiB in OUT.data). Prints the session
// creation time (load + optimise + write) in ms on stdout.
const { optimize } = require('./ort_reference');

function main(argv) {
  const pos = [];
  let level = 'extended';
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === '--level') level = argv[++i];
    else if (argv[i].startsWith('--level=')) level = argv[i].slice(8);
    else pos.push(argv[i]);
  }
  if (pos.length !== 2) {
    console.error('usage: optimize.js MODEL.onnx OUT.onnx [--level extended|basic|all|layout|disabled]');
    process.exit(2);
  }
  optimize(pos[0], pos[1], level).then(
    (ms) => console.log(`optimize_ms ${ms.toFixed(1)}`),
    (e) => { console.error(`optimize.js: ${pos[0]}: ${e.message}`); process.exit(1); });
}

main(process.argv.slice(2));
