// Task: one inference job waiting to be placed on a GPU.
//
// A task runs `num_batches` batches of `model` at `batch_size` × input_size × input_size on one
// GPU. It arrives at `arrival_ms` (simulated or wall time, ms from the start of the workload).
// `sched` never looks inside the model: runtime and memory come from a LatencyOracle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hase/base/status.h"

namespace hase::sched {

struct Task {
  int id = 0;               // dense index in its workload (0..n-1); GPU states refer to it
  std::string name;         // workload's name for it ("t17"); reports print it
  std::string model;        // zoo name ("resnet50") or ONNX path
  std::string family;       // model family ("resnet", "yolo", "vgg", …); colours the Gantt chart
  int64_t batch_size = 1;   // samples per batch
  int64_t input_size = 224; // square input side, pixels (H = W); 0 = the model's own (the
                            // static dims its ONNX declares), when input_shape is empty too
  std::vector<int64_t> input_shape;  // dims of the model's first input after the batch, e.g.
                                     // {3, 640, 640}; wins over input_size when not empty
  int64_t num_batches = 1;  // batches to run, >= 1
  double arrival_ms = 0;    // when the task enters the queue, ms
  int priority = 0;         // higher runs first among waiting tasks; ties by arrival then id
  double memory_mib = 0;    // GPU memory the task needs, MiB; 0 = derive from the model
                            // (the oracle's TaskProfile::memory_mib)
  std::string runtime;      // inference runtime the task runs under ("pytorch-eager";
                            // predict/runtime_profile.h); empty = the oracle's default. `sched`
                            // only passes it on: the oracle validates and prices it.
  std::string team;         // the team it belongs to (team_config.h); "" = the config's
                            // default team. Policies ignore it; quotas and fair share read it.
  // GPUs the task needs at once, >= 1 (gang.h): k > 1 runs on k GPUs of one type on one node,
  // all started together, held alone (no co-location) for the whole run; memory_mib is then
  // per GPU. Its runtime on k GPUs is GangIsolatedMs (a data-parallel split of the batches).
  int gpus = 1;
  // k > 1 only: the fraction of linear speed-up the split keeps, 0 < e <= 1 (1: independent
  // inference batches, nothing exchanged; a tensor-parallel model states what its all-reduces
  // cost). GangIsolatedMs divides by it.
  double parallel_efficiency = 1.0;
  // May its batches be split over several GPUs (of any types and nodes) that can take them now,
  // sized to each GPU's predicted per-batch time (gang.h DecideSplit)? Only policies with
  // Policy::Options::split_batches (hase) do; gpus must be 1.
  bool split = false;
};

// "resnet50" → "resnet", "yolov8n" → "yolo", "mobilenet_v3_small" → "mobilenet",
// "models/vgg16.onnx" → "vgg": the leading letters of the file stem; "other" if none.
std::string ModelFamily(const std::string& model);

// The part of a task its latency depends on: "model|batch|input", plus "|runtime" when the
// task names one. Oracles cache by it. input is the side N for a {3, N, N} input (input_shape or
// input_size), "CxHxW" for any other input_shape, and 0 for the model's own.
std::string ProfileKey(const Task& task);

// The input dims after the batch a task is priced at: input_shape, else {3, input_size,
// input_size}; empty when both say "the model's own" (input_size 0).
std::vector<int64_t> InputDims(const Task& task);

// "3x640x640" for {3, 640, 640}; "" for none.
std::string InputShapeText(const std::vector<int64_t>& dims);
// The inverse, as `hase kernels --input-shape`, REST's and the workload files' input_shape: 1-4
// dims after the batch joined by 'x', each 1-65536. InvalidArgument (message only) otherwise.
Result<std::vector<int64_t>> ParseInputShapeText(const std::string& text);

}  // namespace hase::sched
