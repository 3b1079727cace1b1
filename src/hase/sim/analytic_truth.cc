#include "hase/sim/analytic_truth.h"

#include <cmath>
#include <numbers>

namespace hase::sim {
namespace {

uint64_t Fnv1a(uint64_t h, const std::string& s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h ^= 0xff;  // separator, so ("ab","c") != ("a","bc")
  h *= 1099511628211ull;
  return h;
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

double Uniform01(uint64_t x) {  // (0, 1)
  return (static_cast<double>(x >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

}  // namespace

double HashedNormal(uint64_t seed, const std::string& a, const std::string& b,
                    const std::string& c) {
  uint64_t h = Fnv1a(Fnv1a(Fnv1a(14695981039346656037ull ^ SplitMix64(seed), a), b), c);
  const double u1 = Uniform01(SplitMix64(h));
  const double u2 = Uniform01(SplitMix64(h ^ 0x5851f42d4c957f2dull));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

Result<TrueProfile> AnalyticTruth::Profile(const sched::Task& task,
                                           const sched::GpuType& type) const {
  HASE_ASSIGN_OR_RETURN(sched::TaskProfile p, oracle_->Profile(task, type));
  TrueProfile t;
  const double z = HashedNormal(options_.seed, task.model, type.name);
  t.isolated_ms = p.isolated_ms * std::exp(options_.sigma * z);
  t.demand = p.demand;
  return t;
}

double AnalyticTruth::Slowdown(const sched::Task& victim, double victim_demand,
                              const CoRunners& others, double background,
                              const sched::GpuType& type) const {
  const sched::ContentionModel& model = oracle_->contention();
  double co = 0;
  for (const auto& [task, demand] : others) co += demand;
  const double s = model.Slowdown(victim_demand, background + co);
  if (options_.pair_sigma == 0 || co <= 0) return s;
  const double e_bg = model.Slowdown(victim_demand, background) - 1.0;
  double f = 0;
  for (const auto& [task, demand] : others) {
    const double z = HashedNormal(options_.seed ^ 0x7a11ull, victim.model, task->model, type.name);
    f += demand / co * std::exp(options_.pair_sigma * z);
  }
  return 1.0 + e_bg + (s - 1.0 - e_bg) * f;
}

}  // namespace hase::sim
