#include "hase/service/pod_status.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <string>

#include "hase/base/iso_time.h"

namespace hase::service {
namespace {

using nlohmann::json;

const json* Path(const json& j, std::initializer_list<const char*> keys) {
  const json* at = &j;
  for (const char* k : keys) {
    if (!at->is_object() || !at->contains(k)) return nullptr;
    at = &(*at)[k];
  }
  return at;
}

double TimeAt(const json& j, std::initializer_list<const char*> keys) {
  const json* v = Path(j, keys);
  return v && v->is_string() ? ParseRfc3339(v->get<std::string>()) : 0;
}

}  // namespace

double ParseRfc3339(std::string_view t) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  std::optional<std::tm> tm = ParseIsoDateTime(t);
  if (!tm || t.size() < 20) return 0;
  auto digits = [&](size_t at, size_t n, int& out) {
    if (at + n > t.size()) return false;
    out = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(t[i]))) return false;
      out = out * 10 + (t[i] - '0');
    }
    return true;
  };
  size_t at = 19;
  double frac = 0;
  if (at < t.size() && t[at] == '.') {
    double scale = 0.1;
    ++at;
    if (at >= t.size() || !std::isdigit(static_cast<unsigned char>(t[at]))) return 0;
    while (at < t.size() && std::isdigit(static_cast<unsigned char>(t[at]))) {
      frac += (t[at] - '0') * scale;
      scale /= 10;
      ++at;
    }
  }
  int offset_s = 0;
  if (at < t.size() && (t[at] == 'Z' || t[at] == 'z') && at + 1 == t.size()) {
  } else if (at + 6 == t.size() && (t[at] == '+' || t[at] == '-') && t[at + 3] == ':') {
    int oh, om;
    if (!digits(at + 1, 2, oh) || !digits(at + 4, 2, om)) return 0;
    offset_s = (oh * 3600 + om * 60) * (t[at] == '-' ? -1 : 1);
  } else {
    return 0;
  }
  const time_t epoch = timegm(&*tm);
  return static_cast<double>(epoch) - offset_s + frac;
}

PodTimes PodTimesOf(const json& pod) {
  PodTimes out;
  const json* list = Path(pod, {"status", "containerStatuses"});
  bool all_terminated = list && list->is_array() && !list->empty();
  if (list && list->is_array()) {
    for (const json& c : *list) {
      double start = TimeAt(c, {"state", "running", "startedAt"});
      const double term_start = TimeAt(c, {"state", "terminated", "startedAt"});
      const double finish = TimeAt(c, {"state", "terminated", "finishedAt"});
      if (start <= 0) start = term_start;
      if (start > 0) out.started_s = out.started_s > 0 ? std::min(out.started_s, start) : start;
      if (finish > 0) {
        out.ended_s = std::max(out.ended_s, finish);
      } else {
        all_terminated = false;
      }
    }
  }
  if (!all_terminated) out.ended_s = 0;
  if (out.started_s <= 0) out.started_s = TimeAt(pod, {"status", "startTime"});
  return out;
}

int FailedExitCode(const json& pod) {
  for (const char* list : {"containerStatuses", "initContainerStatuses"}) {
    const json* st = Path(pod, {"status", list});
    if (!st || !st->is_array()) continue;
    for (const json& c : *st) {
      const json* code = Path(c, {"state", "terminated", "exitCode"});
      if (code && code->is_number_integer() && code->get<int>() != 0) return code->get<int>();
    }
  }
  return 1;
}

}  // namespace hase::service
