#!/usr/bin/env node
'use strict';
// usage: node tools/ort/make_reference.js HASE_MATERIALIZE [OUT.json] [--level L] [MODEL.onnx ...]
// Writes the committed reference tests/data/ort_cpu_ops.json: for every models/*.onnx (or the
// models given), the node types of onnxruntime-node's optimised graph (CPU execution provider,
// level "extended" unless --level), so that tests can check hase's ort-cpu profile without node.
// Each model is materialised with HASE_MATERIALIZE (random weights) in a temporary folder first.
// With models named, only their entries of an existing OUT.json are rewritten.
// Schema (version 1):
//   {"schema": "hase.ort_reference.v1", "command": how to regenerate, "ort_version", "level",
//    "models": {"resnet50": {"file": "models/resnet50.onnx", "num_nodes": 89,
//                            "ops": {op_type: count}, "kernels": {"FusedConv(Relu)": count},
//                            "sequence": ["FusedConv(Relu)", "MaxPool", ...]}}}   // topological
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const { kernelName, optimize, readOps } = require('./ort_reference');

async function main(argv) {
  const root = path.resolve(__dirname, '..', '..');
  let level = 'extended';
  const pos = [];
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === '--level') level = argv[++i];
    else pos.push(argv[i]);
  }
  if (pos.length < 1) throw new Error('usage: make_reference.js HASE_MATERIALIZE [OUT.json] [--level L] [MODEL.onnx ...]');
  const bin = pos[0];
  const outFile = pos[1] && pos[1].endsWith('.json') ? pos[1] : path.join(root, 'tests', 'data', 'ort_cpu_ops.json');
  let models = pos.slice(pos[1] && pos[1].endsWith('.json') ? 2 : 1);
  // Models named on the command line update their entries of an existing reference; the others
  // are kept as they are.
  const keep = models.length > 0 && fs.existsSync(outFile) ? JSON.parse(fs.readFileSync(outFile)).models : {};
  if (models.length === 0) {
    models = fs.readdirSync(path.join(root, 'models')).filter((f) => f.endsWith('.onnx')).sort()
      .map((f) => path.join(root, 'models', f));
  }
  const result = {
    schema: 'hase.ort_reference.v1',
    command: 'cmake --build build --target hase_materialize && ' +
      `node tools/ort/make_reference.js build/tools/hase_materialize${level === 'extended' ? '' : ' --level ' + level}`,
    ort_version: require('onnxruntime-node/package.json').version,
    execution_provider: 'cpu',
    level,
    models: {},
  };
  for (const model of models) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hase-ref-'));
    try {
      const stem = path.basename(model, '.onnx');
      const full = path.join(dir, `${stem}.onnx`);
      execFileSync(bin, [model, full], { stdio: ['ignore', 'ignore', 'pipe'] });
      const out = path.join(dir, `${stem}.opt.onnx`);
      const ms = await optimize(full, out, level);
      const { ops, kernels, nodes } = readOps(out);
      result.models[stem] = {
        file: path.relative(root, path.resolve(model)),
        num_nodes: nodes.length,
        ops,
        kernels,
        sequence: nodes.map(kernelName),
      };
      console.error(`${stem}: ${nodes.length} nodes, ${ms.toFixed(0)} ms  ${JSON.stringify(kernels)}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  fs.mkdirSync(path.dirname(outFile), { recursive: true });
  // One model per line block; sequences on one line each keep diffs readable.
  const lines = ['{'];
  const head = { ...result };
  delete head.models;
  for (const [k, v] of Object.entries(head)) lines.push(`  ${JSON.stringify(k)}: ${JSON.stringify(v)},`);
  lines.push('  "models": {');
  for (const [name, m] of Object.entries(keep)) {
    if (!(name in result.models)) result.models[name] = m;
  }
  const names = Object.keys(result.models).sort();
  names.forEach((name, i) => {
    const m = result.models[name];
    lines.push(`    ${JSON.stringify(name)}: {`);
    lines.push(`      "file": ${JSON.stringify(m.file)},`);
    lines.push(`      "num_nodes": ${m.num_nodes},`);
    lines.push(`      "ops": ${JSON.stringify(m.ops)},`);
    lines.push(`      "kernels": ${JSON.stringify(m.kernels)},`);
    lines.push(`      "sequence": ${JSON.stringify(m.sequence)}`);
    lines.push(`    }${i + 1 < names.length ? ',' : ''}`);
  });
  lines.push('  }', '}');
  fs.writeFileSync(outFile, lines.join('\n') + '\n');
  console.error(`wrote ${outFile}`);
}

main(process.argv.slice(2)).catch((e) => {
  console.error(`make_reference.js: ${e.message}`);
  process.exit(1);
});
