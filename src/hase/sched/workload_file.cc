#include "hase/sched/workload_file.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "hase/sched/cluster_file.h"
#include "hase/sched/task_limits.h"
#include "hase/sched/yaml_reader.h"

namespace hase::sched {
namespace {

// The task fields, as YAML keys and CSV columns.
constexpr const char* kColumns[] = {"name",    "model",     "batch_size", "input_size", "input_shape",
                                    "num_batches", "samples", "arrival_s", "priority",   "memory_mib",
                                    "runtime", "team", "gpus", "parallel_efficiency", "split"};

// Fields of one task before checks. Absent optional → default.
struct RawTask {
  std::optional<std::string> name, model, runtime, team, input_shape;
  std::optional<int64_t> batch_size, input_size, num_batches, samples;
  std::optional<double> arrival_s, memory_mib, parallel_efficiency;
  std::optional<int> priority, gpus;
  std::optional<bool> split;
};

int64_t DefaultInputSize(const std::string& model) {
  return ModelFamily(model) == "yolo" ? 640 : 224;
}

Result<Task> Finish(const RawTask& r, size_t index, const std::string& at) {
  if (!r.model || r.model->empty()) {
    return Status::InvalidArgument("task without 'model'", at,
                                   "give a zoo name (resnet50) or an ONNX path");
  }
  Task t;
  t.id = static_cast<int>(index);
  t.name = r.name.value_or(fmt::format("t{}", index));
  t.model = *r.model;
  t.family = ModelFamily(t.model);
  t.batch_size = r.batch_size.value_or(1);
  t.input_size = r.input_size.value_or(DefaultInputSize(t.model));
  HASE_RETURN_IF_ERROR(CheckTaskField("batch_size", static_cast<double>(t.batch_size), at));
  HASE_RETURN_IF_ERROR(CheckTaskField("input_size", static_cast<double>(t.input_size), at));
  if (r.input_shape) {  // any input: "128" (tokens), "12x64", "3x640x640"; wins over input_size
    Result<std::vector<int64_t>> dims = ParseInputShapeText(*r.input_shape);
    if (!dims.ok()) {
      return Status::InvalidArgument("input_shape " + dims.status().message(), at,
                                     "the dims after the batch, as hase kernels --input-shape");
    }
    if (r.input_size && (dims->size() < 2 || dims->back() != *r.input_size || (*dims)[dims->size() - 2] != *r.input_size)) {
      return Status::InvalidArgument(fmt::format("input_size is {} but input_shape is {}; give one of them",
                                                 *r.input_size, *r.input_shape), at);
    }
    t.input_shape = *dims;
  }
  if (r.num_batches && r.samples) {
    return Status::InvalidArgument("give num_batches or samples, not both", at);
  }
  if (r.samples) {
    HASE_RETURN_IF_ERROR(CheckTaskField("samples", static_cast<double>(*r.samples), at));
    t.num_batches = (*r.samples + t.batch_size - 1) / t.batch_size;
  } else {
    t.num_batches = r.num_batches.value_or(1);
  }
  HASE_RETURN_IF_ERROR(CheckTaskField("num_batches", static_cast<double>(t.num_batches), at));
  const double arrival_s = r.arrival_s.value_or(0);
  HASE_RETURN_IF_ERROR(CheckTaskField("arrival_s", arrival_s, at));
  t.arrival_ms = arrival_s * 1000.0;
  t.priority = r.priority.value_or(0);
  t.runtime = r.runtime.value_or("");
  t.team = r.team.value_or("");
  HASE_RETURN_IF_ERROR(CheckTaskField("priority", t.priority, at));
  t.memory_mib = r.memory_mib.value_or(0);
  HASE_RETURN_IF_ERROR(CheckTaskField("memory_mib", t.memory_mib, at));
  t.gpus = r.gpus.value_or(1);
  HASE_RETURN_IF_ERROR(CheckTaskField("gpus", t.gpus, at));
  if (r.parallel_efficiency && t.gpus == 1) {
    return Status::InvalidArgument("parallel_efficiency is given but gpus is 1", at,
                                   "give gpus: K (K > 1) with it, or drop it");
  }
  t.parallel_efficiency = r.parallel_efficiency.value_or(1.0);
  t.split = r.split.value_or(false);
  if (t.split && t.gpus > 1) {
    return Status::InvalidArgument("split: true with gpus > 1", at,
                                   "a split task starts on one GPU or more as hase sees fit; drop gpus or split");
  }
  HASE_RETURN_IF_ERROR(CheckTaskField("parallel_efficiency", t.parallel_efficiency, at));
  return t;
}

// Stable order by arrival, then renumber ids.
std::vector<Task> SortByArrival(std::vector<Task> tasks) {
  std::stable_sort(tasks.begin(), tasks.end(),
                   [](const Task& a, const Task& b) { return a.arrival_ms < b.arrival_ms; });
  for (size_t i = 0; i < tasks.size(); ++i) tasks[i].id = static_cast<int>(i);
  return tasks;
}

template <typename T>
Result<std::optional<T>> Parse(const std::string& s, const char* key, const std::string& at) {
  if (s.empty()) return std::optional<T>();
  std::istringstream in(s);
  T v;
  in >> v;
  if (in.fail() || !in.eof()) {
    return Status::InvalidArgument(fmt::format("column '{}': cannot read '{}'", key, s), at);
  }
  return std::optional<T>(v);
}

std::string Trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r");
  const auto e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

Result<std::vector<Task>> ParseWorkloadYaml(std::string_view text, const std::string& where) {
  HASE_RETURN_IF_ERROR(yaml::CheckAliases(text, where));
  HASE_ASSIGN_OR_RETURN(YAML::Node root, yaml::Load(text, where));
  const YAML::Node list = root.IsMap() ? root["tasks"] : root;
  if (!list || !list.IsSequence()) {
    return Status::InvalidArgument("a workload file must hold a list 'tasks'",
                                   yaml::At(where, root), "see examples/workload.yaml");
  }
  std::vector<Task> tasks;
  size_t index = 0;
  for (const YAML::Node& e : list) {
    const std::string at = yaml::At(where, e);
    if (!e.IsMap()) return Status::InvalidArgument("a task must be a map", at);
    for (const auto& kv : e) {  // a misspelt key must not silently fall back to a default
      const std::string key = kv.first.as<std::string>("");
      if (std::find(std::begin(kColumns), std::end(kColumns), key) == std::end(kColumns)) {
        return Status::InvalidArgument(fmt::format("unknown task key '{}'", key),
                                       yaml::At(where, kv.first),
                                       fmt::format("keys: {}", fmt::join(kColumns, ", ")));
      }
    }
    RawTask r;
    HASE_ASSIGN_OR_RETURN(r.name, yaml::Field<std::string>(e, "name", where));
    HASE_ASSIGN_OR_RETURN(r.model, yaml::Field<std::string>(e, "model", where));
    HASE_ASSIGN_OR_RETURN(r.batch_size, yaml::Field<int64_t>(e, "batch_size", where));
    HASE_ASSIGN_OR_RETURN(r.input_size, yaml::Field<int64_t>(e, "input_size", where));
    HASE_ASSIGN_OR_RETURN(r.input_shape, yaml::Field<std::string>(e, "input_shape", where));
    HASE_ASSIGN_OR_RETURN(r.num_batches, yaml::Field<int64_t>(e, "num_batches", where));
    HASE_ASSIGN_OR_RETURN(r.samples, yaml::Field<int64_t>(e, "samples", where));
    HASE_ASSIGN_OR_RETURN(r.arrival_s, yaml::Field<double>(e, "arrival_s", where));
    HASE_ASSIGN_OR_RETURN(r.priority, yaml::Field<int>(e, "priority", where));
    HASE_ASSIGN_OR_RETURN(r.memory_mib, yaml::Field<double>(e, "memory_mib", where));
    HASE_ASSIGN_OR_RETURN(r.runtime, yaml::Field<std::string>(e, "runtime", where));
    HASE_ASSIGN_OR_RETURN(r.team, yaml::Field<std::string>(e, "team", where));
    HASE_ASSIGN_OR_RETURN(r.gpus, yaml::Field<int>(e, "gpus", where));
    HASE_ASSIGN_OR_RETURN(r.parallel_efficiency, yaml::Field<double>(e, "parallel_efficiency", where));
    HASE_ASSIGN_OR_RETURN(r.split, yaml::Field<bool>(e, "split", where));
    HASE_ASSIGN_OR_RETURN(Task t, Finish(r, index++, at));
    tasks.push_back(std::move(t));
  }
  if (tasks.empty()) return Status::InvalidArgument("the workload has no tasks", where);
  return SortByArrival(std::move(tasks));
}

Result<std::vector<Task>> ParseWorkloadCsv(std::string_view text, const std::string& where) {
  std::istringstream in{std::string(text)};
  std::string line;
  std::vector<std::string> header;
  std::vector<Task> tasks;
  int line_no = 0;
  size_t index = 0;
  auto split = [](const std::string& l) {
    std::vector<std::string> out;
    std::string cell;
    std::istringstream ls(l);
    while (std::getline(ls, cell, ',')) out.push_back(Trim(cell));
    if (!l.empty() && l.back() == ',') out.push_back("");
    return out;
  };
  while (std::getline(in, line)) {
    ++line_no;
    if (Trim(line).empty() || Trim(line)[0] == '#') continue;
    const std::string at = fmt::format("{}:{}", where, line_no);
    std::vector<std::string> cells = split(line);
    if (header.empty()) {
      header = cells;
      for (const std::string& h : header) {
        if (std::find(std::begin(kColumns), std::end(kColumns), h) == std::end(kColumns)) {
          return Status::Parse(fmt::format("unknown column '{}'", h), at,
                               fmt::format("columns: {}", fmt::join(kColumns, ", ")));
        }
      }
      if (std::find(header.begin(), header.end(), "model") == header.end()) {
        return Status::Parse("the header has no 'model' column", at);
      }
      continue;
    }
    if (cells.size() != header.size()) {
      return Status::Parse(
          fmt::format("{} cells, the header has {}", cells.size(), header.size()), at);
    }
    RawTask r;
    for (size_t i = 0; i < header.size(); ++i) {
      const std::string& h = header[i];
      const std::string& v = cells[i];
      if (h == "name") {
        if (!v.empty()) r.name = v;
      } else if (h == "model") {
        if (!v.empty()) r.model = v;
      } else if (h == "batch_size") {
        HASE_ASSIGN_OR_RETURN(r.batch_size, Parse<int64_t>(v, "batch_size", at));
      } else if (h == "input_size") {
        HASE_ASSIGN_OR_RETURN(r.input_size, Parse<int64_t>(v, "input_size", at));
      } else if (h == "input_shape") {
        if (!v.empty()) r.input_shape = v;
      } else if (h == "num_batches") {
        HASE_ASSIGN_OR_RETURN(r.num_batches, Parse<int64_t>(v, "num_batches", at));
      } else if (h == "samples") {
        HASE_ASSIGN_OR_RETURN(r.samples, Parse<int64_t>(v, "samples", at));
      } else if (h == "arrival_s") {
        HASE_ASSIGN_OR_RETURN(r.arrival_s, Parse<double>(v, "arrival_s", at));
      } else if (h == "priority") {
        HASE_ASSIGN_OR_RETURN(r.priority, Parse<int>(v, "priority", at));
      } else if (h == "memory_mib") {
        HASE_ASSIGN_OR_RETURN(r.memory_mib, Parse<double>(v, "memory_mib", at));
      } else if (h == "runtime") {
        if (!v.empty()) r.runtime = v;
      } else if (h == "team") {
        if (!v.empty()) r.team = v;
      } else if (h == "gpus") {
        HASE_ASSIGN_OR_RETURN(r.gpus, Parse<int>(v, "gpus", at));
      } else if (h == "split") {
        if (v == "true" || v == "1") r.split = true;
        else if (v == "false" || v == "0" || v.empty()) r.split = v.empty() ? std::nullopt : std::optional<bool>(false);
        else return Status::Parse(fmt::format("column 'split': cannot read '{}' (true or false)", v), at);
      } else if (h == "parallel_efficiency") {
        HASE_ASSIGN_OR_RETURN(r.parallel_efficiency, Parse<double>(v, "parallel_efficiency", at));
      }
    }
    HASE_ASSIGN_OR_RETURN(Task t, Finish(r, index++, at));
    tasks.push_back(std::move(t));
  }
  if (tasks.empty()) return Status::InvalidArgument("the workload has no tasks", where);
  return SortByArrival(std::move(tasks));
}

Result<std::vector<Task>> LoadWorkloadFile(const std::string& path) {
  HASE_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  const bool csv = path.size() >= 4 && path.substr(path.size() - 4) == ".csv";
  return csv ? ParseWorkloadCsv(text, path) : ParseWorkloadYaml(text, path);
}

}  // namespace hase::sched
