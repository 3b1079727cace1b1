#include "hase/service/latency_table.h"

#include <fstream>
#include <sstream>
#include <vector>

namespace hase::service {

Result<std::shared_ptr<const sched::LatencyOracle>> LoadLatencyTable(
    const std::string& path, const std::function<std::optional<std::string>(std::string_view)>& resolve) {
  std::ifstream f(path);
  if (!f) return Status::IO("cannot read latency table", path);
  auto table = std::make_shared<sched::TableOracle>();
  std::string line;
  int line_no = 0;
  bool profiles = false;  // rows in profiles.csv's 8 columns
  while (std::getline(f, line)) {
    ++line_no;
    const std::string where = path + ":" + std::to_string(line_no);
    size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#') continue;
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, ',')) {
      size_t s = c.find_first_not_of(" \t\r"), e = c.find_last_not_of(" \t\r");
      cols.push_back(s == std::string::npos ? "" : c.substr(s, e - s + 1));
    }
    // A header row: this file's own, or `hase simulate`'s profiles.csv (the oracle's table of a
    // run: model,batch_size,input_size,gpu_type,latency_ms,demand,memory_mib,runtime).
    if (!cols.empty() && cols[0] == "model") {
      profiles = cols.size() == 8 && cols[1] == "batch_size" && cols[4] == "latency_ms";
      if (!profiles && cols.size() != 5) {
        return Status::Parse("a header must be model,gpu_type,per_batch_ms,demand,memory_mib or hase simulate's "
                             "profiles.csv header", where);
      }
      continue;
    }
    if (profiles && cols.size() == 8) {  // one shape per row: the model|batch|input key
      cols = {cols[0] + "|" + cols[1] + "|" + cols[2], cols[3], cols[4], cols[5], cols[6]};
    }
    if (cols.size() != 5) {
      return Status::Parse("expected 5 columns (model,gpu_type,per_batch_ms,demand,memory_mib), got " +
                               std::to_string(cols.size()),
                           where);
    }
    double ms = 0, demand = 0, mem = 0;
    try {
      ms = std::stod(cols[2]);
      demand = std::stod(cols[3]);
      mem = std::stod(cols[4]);
    } catch (const std::exception&) {
      return Status::Parse("per_batch_ms, demand and memory_mib must be numbers", where);
    }
    if (!(ms > 0) || !(demand > 0 && demand <= 1) || !(mem >= 0)) {
      return Status::Parse("need per_batch_ms > 0, 0 < demand <= 1, memory_mib >= 0", where);
    }
    std::optional<std::string> type = resolve ? resolve(cols[1]) : std::optional<std::string>(cols[1]);
    if (!type) return Status::NotFound("unknown GPU type '" + cols[1] + "'", where, "run `hase gpus` for the names");
    table->Set(cols[0], *type, ms, demand, mem);
  }
  return std::shared_ptr<const sched::LatencyOracle>(table);
}

}  // namespace hase::service
