'use strict';
// Shared helpers for tools/ort/*.js: run onnxruntime-node's graph optimiser on the CPU execution
// provider and read the optimised graph back (npm onnx-proto, protobufjs-generated onnx.proto).

const fs = require('fs');
const ort = require('onnxruntime-node');
const { onnx } = require('onnx-proto');

const LEVELS = ['disabled', 'basic', 'extended', 'layout', 'all'];

// Optimises `model` (a path to a loadable model: weights present) and writes the optimised graph
// to `out`. Initializers of at least 1 KiB go to `${out}.data` (ORT's
// session.optimized_model_external_initializers_* config entries) so that `out` stays small and
// quick to read back. Returns the wall time of InferenceSession.create in ms (load + optimise +
// write), measured with process.hrtime.
async function optimize(model, out, level = 'extended') {
  if (!LEVELS.includes(level)) throw new Error(`unknown level '${level}' (one of ${LEVELS.join(', ')})`);
  if (!fs.existsSync(model)) throw new Error(`${model}: no such file`);
  const path = require('path');
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: level,
    optimizedModelFilePath: out,
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    extra: {
      session: {
        optimized_model_external_initializers_file_name: path.basename(out) + '.data',
        optimized_model_external_initializers_min_size_in_bytes: '1024',
      },
    },
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  await session.release();
  return ms;
}

// "FusedConv(Relu)" for a fused node with an activation attribute, else the op_type.
function kernelName(n) {
  return n.activation ? `${n.op_type}(${n.activation})` : n.op_type;
}

// {key: count} sorted by key.
function countBy(items, key) {
  const counts = {};
  for (const it of items) counts[key(it)] = (counts[key(it)] || 0) + 1;
  const sorted = {};
  for (const k of Object.keys(counts).sort()) sorted[k] = counts[k];
  return sorted;
}

// Reads an ONNX file (graph only; external data is not touched) and returns
// {ops: {op_type: count}, kernels: {"FusedConv(Relu)": count}, (both sorted by name)
//  nodes: [{name, op_type, domain, inputs, outputs[, activation]}]} in
// file order, which for ORT-written files is topological order (Graph::ToGraphProto walks the
// graph in topological order).
function readOps(file) {
  const m = onnx.ModelProto.decode(fs.readFileSync(file));
  const nodes = m.graph.node.map((n) => {
    const node = {
      name: n.name || '',
      op_type: n.opType,
      domain: n.domain || '',
      inputs: n.input.slice(),
      outputs: n.output.slice(),
    };
    // Fused ORT kernels (FusedConv, FusedGemm, ...) name their activation in an attribute.
    const act = n.attribute.find((a) => a.name === 'activation');
    if (act) node.activation = Buffer.from(act.s).toString();
    return node;
  });
  return { ops: countBy(nodes, (n) => n.op_type), kernels: countBy(nodes, kernelName), nodes };
}

module.exports = { LEVELS, kernelName, optimize, readOps };
