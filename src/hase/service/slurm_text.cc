#include "hase/service/slurm_text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>
#include <set>

#include "hase/base/iso_time.h"

namespace hase::service {
namespace {

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    const size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string_view::npos ? std::string_view::npos : p - start));
    if (p == std::string_view::npos) return out;
    start = p + 1;
  }
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool ToInt(std::string_view s, int64_t& v) {
  s = Trim(s);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

// A key as Slurm prints them: letters, digits, '_', '/', ':', '.' (CPUs/Task, AllocNode:Sid).
bool LooksLikeKey(std::string_view k) {
  if (k.empty() || !std::isalpha(static_cast<unsigned char>(k.front()))) return false;
  return std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '/' || c == ':' || c == '.';
  });
}

}  // namespace

std::map<std::string, std::string> ParseSlurmRecord(std::string_view line) {
  std::map<std::string, std::string> out;
  std::string* last = nullptr;
  for (std::string_view word : Split(Trim(line), ' ')) {
    if (word.empty()) continue;
    const size_t eq = word.find('=');
    if (eq != std::string_view::npos && LooksLikeKey(word.substr(0, eq))) {
      last = &(out[std::string(word.substr(0, eq))] = std::string(word.substr(eq + 1)));
    } else if (last) {
      *last += ' ';
      *last += word;
    }
  }
  return out;
}

Result<std::vector<SlurmGres>> ParseGres(std::string_view gres) {
  std::vector<SlurmGres> out;
  gres = Trim(gres);
  if (gres.empty() || gres == "(null)") return out;
  for (std::string_view item : Split(gres, ',')) {
    if (const size_t paren = item.find('('); paren != std::string_view::npos) item = item.substr(0, paren);
    std::vector<std::string_view> f = Split(item, ':');
    SlurmGres g;
    int64_t count = 1;
    if (f.size() == 1) {
      g.name = f[0];
    } else if (f.size() == 2) {
      g.name = f[0];
      if (!ToInt(f[1], count)) g.type = f[1], count = 1;  // "gpu:a100" = one
    } else if (f.size() == 3) {
      g.name = f[0];
      g.type = f[1];
      if (!ToInt(f[2], count)) return Status::Parse("bad gres count in '" + std::string(item) + "'", "Gres=");
    } else {
      return Status::Parse("bad gres '" + std::string(item) + "'", "Gres=", "expected NAME[:TYPE][:COUNT]");
    }
    if (g.name.empty() || count < 0) return Status::Parse("bad gres '" + std::string(item) + "'", "Gres=");
    g.count = static_cast<int>(count);
    out.push_back(std::move(g));
  }
  return out;
}

Result<std::vector<SlurmNode>> ParseScontrolNodes(std::string_view text) {
  std::vector<SlurmNode> out;
  int line_no = 0;
  for (std::string_view line : Split(text, '\n')) {
    ++line_no;
    if (Trim(line).empty()) continue;
    std::map<std::string, std::string> kv = ParseSlurmRecord(line);
    const std::string where = "scontrol show node line " + std::to_string(line_no);
    auto name = kv.find("NodeName");
    if (name == kv.end() || name->second.empty()) return Status::Parse("no NodeName=", where);
    SlurmNode n;
    n.name = name->second;
    n.state = kv["State"];
    Result<std::vector<SlurmGres>> g = ParseGres(kv["Gres"]);
    if (!g.ok()) return g.status().WithContext(where + " (node " + n.name + ")");
    n.gres = std::move(*g);
    if (const std::string& p = kv["Partitions"]; !p.empty() && p != "(null)") {
      for (std::string_view s : Split(p, ',')) n.partitions.emplace_back(s);
    }
    if (const std::string& r = kv["Reason"]; r != "(null)") n.reason = r;
    out.push_back(std::move(n));
  }
  return out;
}

bool SlurmNodeUsable(std::string_view state) {
  if (state.empty()) return false;
  if (state.find('*') != std::string_view::npos) return false;  // not responding (sinfo style)
  for (std::string_view flag : Split(state, '+')) {
    while (!flag.empty() && (flag.back() == '~' || flag.back() == '#' || flag.back() == '!' ||
                             flag.back() == '%' || flag.back() == '$' || flag.back() == '@' || flag.back() == '^' ||
                             flag.back() == '-')) {
      flag.remove_suffix(1);
    }
    for (std::string_view bad : {"DOWN", "DRAIN", "DRAINED", "DRAINING", "FAIL", "FAILING", "FUTURE",
                                 "POWERED_DOWN", "POWERING_DOWN", "POWER_DOWN", "NOT_RESPONDING", "NO_RESPOND",
                                 "MAINT", "MAINTENANCE", "REBOOT", "REBOOT_REQUESTED", "REBOOT_ISSUED",
                                 "UNKNOWN", "INVALID", "INVALID_REG"}) {
      std::string upper(flag);
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (upper == bad) return false;
    }
  }
  return true;
}

NodeCondition SlurmNodeCondition(std::string_view state) {
  if (SlurmNodeUsable(state)) return NodeCondition::kUsable;
  if (state.find('*') != std::string_view::npos) return NodeCondition::kDown;
  for (std::string_view flag : Split(state, '+')) {
    while (!flag.empty() && !std::isalpha(static_cast<unsigned char>(flag.back()))) flag.remove_suffix(1);
    std::string upper(flag);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper == "DOWN" || upper == "FAIL" || upper == "NOT_RESPONDING" || upper == "NO_RESPOND") {
      return NodeCondition::kDown;
    }
  }
  return NodeCondition::kDrained;
}

bool SlurmNodeUnsettled(std::string_view state) {
  if (state.empty()) return false;
  bool unsettled = state.find('*') != std::string_view::npos;
  for (std::string_view flag : Split(state, '+')) {
    while (!flag.empty() && !std::isalpha(static_cast<unsigned char>(flag.back()))) flag.remove_suffix(1);
    std::string upper(flag);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper == "NOT_RESPONDING" || upper == "NO_RESPOND" || upper == "UNKNOWN") {
      unsettled = true;
    } else if (!(upper == "IDLE" || upper == "ALLOCATED" || upper == "ALLOC" || upper == "MIXED" || upper == "MIX" ||
                 upper == "COMPLETING" || upper == "COMP" || upper == "PLANNED" || upper == "RESERVED" ||
                 upper == "CLOUD")) {
      return false;  // DOWN, FAIL, DRAIN, MAINT, ...: a real condition
    }
  }
  return unsettled;
}

Result<std::vector<SlurmJob>> ParseSqueue(std::string_view text) {
  std::vector<SlurmJob> out;
  int line_no = 0;
  for (std::string_view line : Split(text, '\n')) {
    ++line_no;
    if (Trim(line).empty()) continue;
    std::vector<std::string_view> f = Split(Trim(line), '|');
    const std::string where = "squeue line " + std::to_string(line_no);
    if (f.size() != 4) {
      return Status::Parse("expected 4 '|'-separated fields, got " + std::to_string(f.size()), where,
                           std::string("format ") + kSqueueFormat);
    }
    SlurmJob j;
    if (!ToInt(f[0], j.id)) {
      if (f[0].find_first_of("_+") != std::string_view::npos) continue;  // array / het job
      return Status::Parse("job id '" + std::string(f[0]) + "' is not a number", where);
    }
    j.name = f[1];
    j.state = Trim(f[2]);
    j.nodes = Trim(f[3]);
    if (j.nodes == "(null)") j.nodes.clear();
    out.push_back(std::move(j));
  }
  return out;
}

int ParseSlurmExitCode(std::string_view exit_code) {
  const size_t colon = exit_code.find(':');
  int64_t code = 0, sig = 0;
  if (colon == std::string_view::npos) return ToInt(exit_code, code) ? static_cast<int>(code) : -1;
  if (!ToInt(exit_code.substr(0, colon), code) || !ToInt(exit_code.substr(colon + 1), sig)) return -1;
  return sig > 0 ? static_cast<int>(128 + sig) : static_cast<int>(code);
}

std::optional<double> ParseSlurmTime(std::string_view text) {
  text = Trim(text);
  // Slurm writes exactly "YYYY-MM-DDTHH:MM:SS" in slurmctld's local zone; Unknown, None, N/A, "".
  if (text.size() != 19 || text[10] != 'T') return std::nullopt;
  std::optional<std::tm> tm = ParseIsoDateTime(text);
  if (!tm) return std::nullopt;
  const std::time_t t = std::mktime(&*tm);  // tm_isdst = -1: the zone rules say whether DST applies
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<double>(t);
}

Result<std::vector<SlurmJobGpus>> ParseSlurmJobGpus(std::string_view line) {
  std::vector<SlurmJobGpus> out;
  std::string node;
  for (std::string_view word : Split(Trim(line), ' ')) {
    if (word.rfind("Nodes=", 0) == 0) {
      node = std::string(word.substr(6));
      continue;
    }
    if (word.rfind("GRES=", 0) != 0 || node.empty()) continue;  // JOB_GRES= precedes any Nodes=
    std::set<int> idx;
    // gpu:t4:1(IDX:2),gpu:l4:2(IDX:0-1): every "(IDX:list)" of a gpu item.
    std::string_view rest = word.substr(5);
    for (size_t p = rest.find("(IDX:"); p != std::string_view::npos; p = rest.find("(IDX:", p + 1)) {
      // An IDX list may hold commas itself ("(IDX:0,2)"): the item starts after the last ','
      // outside parentheses.
      size_t start = 0;
      int depth = 0;
      for (size_t i = 0; i < p; ++i) {
        if (rest[i] == '(') ++depth;
        if (rest[i] == ')') --depth;
        if (rest[i] == ',' && depth == 0) start = i + 1;
      }
      if (rest.substr(start, 3) != "gpu") continue;
      const size_t close = rest.find(')', p);
      if (close == std::string_view::npos) {
        return Status::Parse("unterminated IDX list in '" + std::string(word) + "'", "scontrol show job -d");
      }
      for (std::string_view range : Split(rest.substr(p + 5, close - p - 5), ',')) {
        const size_t dash = range.find('-');
        int64_t lo = 0, hi = 0;
        const bool ok = dash == std::string_view::npos
                            ? ToInt(range, lo) && ToInt(range, hi)
                            : ToInt(range.substr(0, dash), lo) && ToInt(range.substr(dash + 1), hi);
        if (!ok || lo < 0 || hi < lo || hi > 4096) {
          return Status::Parse("bad GPU index range '" + std::string(range) + "' in '" + std::string(word) + "'",
                               "scontrol show job -d");
        }
        for (int64_t i = lo; i <= hi; ++i) idx.insert(static_cast<int>(i));
      }
    }
    if (!idx.empty()) out.push_back({node, std::vector<int>(idx.begin(), idx.end())});
    node.clear();
  }
  return out;
}

std::optional<TaskEnd> SlurmJobEnd(std::string_view state, std::string_view exit_code, std::string_view reason,
                                   int64_t job_id) {
  // "CANCELLED by 0" is how squeue/scontrol print a cancel with the user.
  const std::string_view base = state.substr(0, state.find(' '));
  const int code = exit_code.empty() ? -1 : ParseSlurmExitCode(exit_code);
  std::string why = "Slurm job " + std::to_string(job_id) + " " + std::string(base);
  if (!reason.empty() && reason != "None" && reason != "(null)") why += " (" + std::string(reason) + ")";
  TaskEnd e;
  if (base == "COMPLETED") {
    e.exit_code = code < 0 ? 0 : code;
    if (e.exit_code != 0) e.reason = why;
    return e;
  }
  if (base == "CANCELLED") {
    e.kind = TaskEnd::Kind::kCancelled;
    e.exit_code = code;
    e.reason = why + ", cancelled outside hase";
    return e;
  }
  if (base == "NODE_FAIL") {
    e.kind = TaskEnd::Kind::kLost;
    e.exit_code = code;
    e.reason = why;
    return e;
  }
  for (std::string_view failed : {"FAILED", "TIMEOUT", "OUT_OF_MEMORY", "DEADLINE", "BOOT_FAIL", "PREEMPTED"}) {
    if (base == failed) {
      e.exit_code = code > 0 ? code : 1;  // a failed job never reads as success
      e.reason = why;
      return e;
    }
  }
  return std::nullopt;
}

}  // namespace hase::service
