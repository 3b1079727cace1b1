#include "hase/sim/table_truth.h"

#include <sstream>

#include <fmt/format.h>

#include "hase/sched/cluster_file.h"

namespace hase::sim {
namespace {

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) {
    const auto b = cell.find_first_not_of(" \t\r");
    const auto e = cell.find_last_not_of(" \t\r");
    out.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
  }
  if (!line.empty() && line.back() == ',') out.push_back("");
  return out;
}

Result<double> Number(const std::string& s, const std::string& at) {
  std::istringstream in(s);
  double v;
  in >> v;
  if (s.empty() || in.fail() || !in.eof()) {
    return Status::Parse(fmt::format("not a number: '{}'", s), at);
  }
  return v;
}

}  // namespace

Result<TableTruth> TableTruth::Load(const std::string& path, const GpuCatalog& catalog,
                                    sched::ContentionModel contention) {
  HASE_ASSIGN_OR_RETURN(std::string text, sched::ReadTextFile(path));
  return Parse(text, path, catalog, contention);
}

Result<TableTruth> TableTruth::Parse(const std::string& text, const std::string& where,
                                     const GpuCatalog& catalog,
                                     sched::ContentionModel contention) {
  TableTruth t;
  t.where_ = where;
  t.contention_ = contention;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  enum { kNone, kLatency, kPairs } section = kNone;
  int demand_col = -1, runtime_col = -1;  // optional latency columns, -1 = absent
  size_t columns = 0;                     // cells in the latency header
  while (std::getline(in, line)) {
    ++line_no;
    const std::string at = fmt::format("{}:{}", where, line_no);
    std::vector<std::string> c = SplitCsv(line);
    if (c.empty() || (c.size() == 1 && c[0].empty()) || c[0].rfind("#", 0) == 0) continue;
    if (c[0] == "model") {
      if (c.size() < 5 || c[1] != "batch_size" || c[2] != "input_size" || c[3] != "gpu_type" ||
          c[4] != "latency_ms") {
        return Status::Parse("latency header must be model,batch_size,input_size,gpu_type,"
                             "latency_ms[,demand][,memory_mib][,runtime]", at);
      }
      demand_col = runtime_col = -1;
      for (size_t i = 5; i < c.size(); ++i) {
        if (c[i] == "demand") {
          demand_col = static_cast<int>(i);
        } else if (c[i] == "runtime") {
          runtime_col = static_cast<int>(i);
        } else if (c[i] != "memory_mib") {
          return Status::Parse("unknown latency column '" + c[i] + "'", at,
                               "optional columns: demand, memory_mib, runtime");
        }
      }
      columns = c.size();
      section = kLatency;
      continue;
    }
    if (c[0] == "victim") {
      if (c.size() != 4 || c[1] != "other" || c[2] != "gpu_type" || c[3] != "slowdown") {
        return Status::Parse("pair header must be victim,other,gpu_type,slowdown", at);
      }
      section = kPairs;
      continue;
    }
    if (section == kNone) return Status::Parse("data before a header row", at);
    if (section == kLatency) {
      // A five-column header also takes a sixth cell as the demand (the format before the
      // header named its optional columns).
      const bool legacy_demand = columns == 5 && c.size() == 6;
      if (c.size() != columns && !legacy_demand) {
        return Status::Parse(fmt::format("expected {} cells (as the header)", columns), at);
      }
      const int dcol = legacy_demand ? 5 : demand_col;
      Result<const GpuSpec*> g = catalog.Find(c[3]);
      if (!g.ok()) return g.status().WithContext(at);
      const int64_t batch = c[1].empty() ? -1 : static_cast<int64_t>(std::stoll(c[1]));
      const int64_t input = c[2].empty() ? -1 : static_cast<int64_t>(std::stoll(c[2]));
      HASE_ASSIGN_OR_RETURN(double ms, Number(c[4], at));
      double demand = 1.0;
      if (dcol >= 0 && !c[dcol].empty()) {
        HASE_ASSIGN_OR_RETURN(demand, Number(c[dcol], at));
      }
      const std::string runtime = runtime_col >= 0 ? c[runtime_col] : "";
      if (!(ms > 0) || !(demand >= 0 && demand <= 1)) {
        return Status::InvalidArgument("latency_ms must be > 0 and demand in [0, 1]", at);
      }
      t.latency_[{c[0], batch, input, (*g)->id, runtime}] = TrueProfile{ms, demand};
    } else {
      if (c.size() != 4) return Status::Parse("expected 4 cells", at);
      Result<const GpuSpec*> g = catalog.Find(c[2]);
      if (!g.ok()) return g.status().WithContext(at);
      HASE_ASSIGN_OR_RETURN(double s, Number(c[3], at));
      if (!(s >= 1)) return Status::InvalidArgument("slowdown must be >= 1", at);
      t.slowdown_[{c[0], c[1], (*g)->id}] = s;
    }
  }
  if (t.latency_.empty()) return Status::InvalidArgument("the table has no latency rows", where);
  return t;
}

Result<TrueProfile> TableTruth::Profile(const sched::Task& task,
                                        const sched::GpuType& type) const {
  auto it = latency_.end();
  for (const std::string& rt : {task.runtime, std::string()}) {
    if (it == latency_.end()) it = latency_.find({task.model, task.batch_size, task.input_size, type.name, rt});
    if (it == latency_.end()) it = latency_.find({task.model, task.batch_size, -1, type.name, rt});
    if (it == latency_.end()) it = latency_.find({task.model, -1, -1, type.name, rt});
    if (task.runtime.empty()) break;
  }
  if (it == latency_.end()) {
    return Status::NotFound(
        fmt::format("no measured latency for {} (batch {}, input {}) on {}", task.model,
                    task.batch_size, task.input_size, type.name),
        where_, "add a row to the truth table");
  }
  TrueProfile p = it->second;
  p.isolated_ms *= static_cast<double>(task.num_batches);
  return p;
}

double TableTruth::Slowdown(const sched::Task& victim, double victim_demand,
                           const CoRunners& others, double background,
                           const sched::GpuType& type) const {
  double measured = contention_.Slowdown(victim_demand, background);
  double co = 0;
  bool all = true;
  for (const auto& [task, demand] : others) {
    co += demand;
    auto it = slowdown_.find({victim.model, task->model, type.name});
    if (it == slowdown_.end()) {
      all = false;
    } else {
      measured += it->second - 1.0;
    }
  }
  return all ? measured : contention_.Slowdown(victim_demand, background + co);
}

}  // namespace hase::sim
