#include "hase/sim/best_known.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <tuple>

namespace hase::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kEps = 1e-9;

class Search {
 public:
  Search(const sched::Cluster& cluster, const std::vector<sched::Task>& tasks,
         const std::vector<double>& memory, const TruthModel& truth,
         const sched::LatencyOracle* fallback, int64_t budget)
      : cluster_(cluster), tasks_(tasks), memory_(memory), budget_(budget) {
    const size_t n = tasks.size(), k = cluster.types.size();
    p_.assign(n * k, kInf);
    fastest_.assign(n, kInf);
    for (const sched::Task& t : tasks) {
      for (size_t j = 0; j < k; ++j) {
        double iso = kInf;
        const Result<TrueProfile> tp = truth.Profile(t, cluster.types[j]);
        if (tp.ok()) {
          iso = tp->isolated_ms;
        } else if (fallback) {
          const Result<sched::TaskProfile> op = fallback->Profile(t, cluster.types[j]);
          if (op.ok()) iso = op->isolated_ms;
        }
        if (iso > 0 && std::isfinite(iso)) p_[t.id * k + j] = iso;
      }
    }
    classes_.clear();
    std::map<std::pair<int, double>, int> by_key;
    for (const sched::Gpu& g : cluster.gpus) {
      auto [it, added] = by_key.emplace(std::make_pair(g.type, g.memory_mib),
                                        static_cast<int>(classes_.size()));
      if (added) classes_.push_back({g.type, g.memory_mib, {}});
      classes_[it->second].gpus.push_back(g.id);
    }
    for (const sched::Task& t : tasks) {
      for (const Class& c : classes_) {
        if (memory_[t.id] <= c.memory_mib + kEps) {
          fastest_[t.id] = std::min(fastest_[t.id], p_[t.id * k + c.type]);
        }
      }
    }
  }

  BestKnown Run() {
    const size_t n = tasks_.size();
    BestKnown out;
    std::vector<std::vector<int>> a = Eft();
    double ma = Makespan(a);
    out.construction = "eft-arrival";
    const double g = static_cast<double>(cluster_.gpus.size());
    if (static_cast<double>(n) * (static_cast<double>(n) + g) <= kMaxInsertionWork) {
      std::vector<std::vector<int>> b = LptInsertion();
      const double mb = Makespan(b);
      if (mb < ma - kEps) {
        a = std::move(b);
        ma = mb;
        out.construction = "lpt-insertion";
      }
    }
    sets_ = std::move(a);
    LocalSearch(&out);
    IteratedLocalSearch(&out);
    out.gpu_of_task.assign(n, -1);
    out.start_ms.assign(n, -1);
    for (size_t gpu = 0; gpu < sets_.size(); ++gpu) {
      double t = 0;
      for (int id : sets_[gpu]) {
        t = std::max(t, tasks_[id].arrival_ms);
        out.gpu_of_task[id] = static_cast<int>(gpu);
        out.start_ms[id] = t;
        t += P(id, static_cast<int>(gpu));
      }
      out.makespan_ms = std::max(out.makespan_ms, sets_[gpu].empty() ? 0.0 : t);
    }
    return out;
  }

 private:
  struct Class {
    int type;
    double memory_mib;
    std::vector<int> gpus;
  };

  double P(int task, int gpu) const {
    return p_[task * cluster_.types.size() + cluster_.gpus[gpu].type];
  }
  bool Fits(int task, int gpu) const {
    return std::isfinite(P(task, gpu)) && memory_[task] <= cluster_.gpus[gpu].memory_mib + kEps;
  }
  bool Before(int a, int b) const {  // run order on a GPU: arrival, then id
    const double x = tasks_[a].arrival_ms, y = tasks_[b].arrival_ms;
    return x != y ? x < y : a < b;
  }
  // Completion of GPU `gpu` running `set` (in run order) without `skip` and with `add`
  // (either may be -1). Counts its steps against the budget.
  double Completion(const std::vector<int>& set, int gpu, int skip, int add) {
    steps_ += static_cast<int64_t>(set.size()) + 1;
    double t = 0;
    bool added = add < 0;
    bool any = false;
    auto run = [&](int id) {
      t = std::max(t, tasks_[id].arrival_ms) + P(id, gpu);
      any = true;
    };
    for (int id : set) {
      if (!added && Before(add, id)) {
        run(add);
        added = true;
      }
      if (id != skip) run(id);
    }
    if (!added) run(add);
    return any ? t : 0;
  }
  void Insert(std::vector<int>& set, int id) {
    set.insert(std::upper_bound(set.begin(), set.end(), id,
                                [&](int a, int b) { return Before(a, b); }),
               id);
  }
  double Makespan(const std::vector<std::vector<int>>& sets) {
    double m = 0;
    for (size_t g = 0; g < sets.size(); ++g) {
      m = std::max(m, Completion(sets[g], static_cast<int>(g), -1, -1));
    }
    return m;
  }

  // (a) By arrival (then longest first), each task on the GPU of its earliest completion.
  std::vector<std::vector<int>> Eft() {
    std::vector<int> order(tasks_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      const double x = tasks_[a].arrival_ms, y = tasks_[b].arrival_ms;
      if (x != y) return x < y;
      if (fastest_[a] != fastest_[b]) return fastest_[a] > fastest_[b];
      return a < b;
    });
    std::vector<std::set<std::pair<double, int>>> ready(classes_.size());
    for (size_t c = 0; c < classes_.size(); ++c) {
      for (int g : classes_[c].gpus) ready[c].insert({0.0, g});
    }
    std::vector<std::vector<int>> sets(cluster_.gpus.size());
    for (int id : order) {
      double best = kInf;
      int best_c = -1;
      for (size_t c = 0; c < classes_.size(); ++c) {
        const auto [r, g] = *ready[c].begin();
        if (!Fits(id, g)) continue;
        const double end = std::max(r, tasks_[id].arrival_ms) + P(id, g);
        if (end < best - kEps ||
            (std::abs(end - best) <= kEps && g < ready[best_c].begin()->second)) {
          best = end;
          best_c = static_cast<int>(c);
        }
      }
      if (best_c < 0) continue;  // no GPU can host it
      const int g = ready[best_c].begin()->second;
      ready[best_c].erase(ready[best_c].begin());
      ready[best_c].insert({best, g});
      sets[g].push_back(id);
    }
    return sets;
  }

  // (b) Longest first, each task inserted (in run order) where the GPU's completion is lowest.
  std::vector<std::vector<int>> LptInsertion() {
    std::vector<int> order(tasks_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      if (fastest_[a] != fastest_[b]) return fastest_[a] > fastest_[b];
      return Before(a, b);
    });
    std::vector<std::vector<int>> sets(cluster_.gpus.size());
    for (int id : order) {
      if (!std::isfinite(fastest_[id])) continue;
      double best = kInf;
      int best_g = -1;
      for (const sched::Gpu& g : cluster_.gpus) {
        if (!Fits(id, g.id)) continue;
        const double c = Completion(sets[g.id], g.id, -1, id);
        if (c < best - kEps) {
          best = c;
          best_g = g.id;
        }
      }
      if (best_g >= 0) Insert(sets[best_g], id);
    }
    return sets;
  }

  void LocalSearch(BestKnown* out) {
    const int n_gpus = static_cast<int>(cluster_.gpus.size());
    std::vector<double> c(n_gpus);
    for (int g = 0; g < n_gpus; ++g) c[g] = Completion(sets_[g], g, -1, -1);
    while (true) {
      if (steps_ >= budget_) {
        out->budget_exhausted = true;
        return;
      }
      int crit = 0;
      for (int g = 1; g < n_gpus; ++g) {
        if (c[g] > c[crit]) crit = g;
      }
      const double m = c[crit];
      // Best move (target value, then GPU id, then task order).
      double best = m - kEps;
      int move_task = -1, move_to = -1, swap_task = -1;
      double best_crit = 0, best_other = 0;
      // A candidate leaving the critical GPU at `on_crit` and the other at `on_other`.
      auto offer = [&](double on_crit, double on_other, int j, int h, int i) {
        const double v = std::max(on_crit, on_other);
        if (v < best) {
          best = v;
          move_task = j;
          move_to = h;
          swap_task = i;
          best_crit = on_crit;
          best_other = on_other;
        }
      };
      for (int j : sets_[crit]) {
        const double without = Completion(sets_[crit], crit, j, -1);
        if (without >= best) continue;
        for (int h = 0; h < n_gpus; ++h) {
          if (h == crit || !Fits(j, h)) continue;
          // Inserting j cannot end h before its own end nor before h's current completion.
          if (std::max(c[h], tasks_[j].arrival_ms + P(j, h)) >= best) continue;
          offer(without, Completion(sets_[h], h, -1, j), j, h, -1);
        }
        if (steps_ >= budget_) break;
      }
      if (move_task < 0) {
        for (int j : sets_[crit]) {
          for (int h = 0; h < n_gpus && steps_ < budget_; ++h) {
            if (h == crit || !Fits(j, h)) continue;
            for (int i : sets_[h]) {
              if (!Fits(i, crit)) continue;
              if (P(i, crit) >= P(j, crit) && tasks_[i].arrival_ms <= tasks_[j].arrival_ms) {
                continue;  // i takes at least as long on the critical GPU: no gain there
              }
              const double a = Completion(SwapIn(sets_[crit], j, i), crit, -1, -1);
              if (a >= best) continue;
              offer(a, Completion(SwapIn(sets_[h], i, j), h, -1, -1), j, h, i);
            }
          }
        }
      }
      if (move_task < 0) return;  // local optimum
      sets_[crit].erase(std::find(sets_[crit].begin(), sets_[crit].end(), move_task));
      if (swap_task >= 0) {
        sets_[move_to].erase(std::find(sets_[move_to].begin(), sets_[move_to].end(), swap_task));
        Insert(sets_[crit], swap_task);
      }
      Insert(sets_[move_to], move_task);
      c[crit] = best_crit;
      c[move_to] = best_other;
      ++out->moves;
    }
  }

  // Iterated local search (Lourenço, Martin & Stützle 2003): from the best schedule so far,
  // kick — ruin and recreate (header) — then descend again; keep the result when its
  // makespan is lower.
  // Until the step budget is spent or kMaxKicks kicks in a row bring nothing. Seeded: the
  // same input gives the same schedule.
  void IteratedLocalSearch(BestKnown* out) {
    constexpr int kMaxKicks = 200;
    constexpr int kRuin = 4;
    std::mt19937_64 rng(20261201);
    std::vector<std::vector<int>> best = sets_;
    double best_m = Makespan(sets_);
    const int n_gpus = static_cast<int>(cluster_.gpus.size());
    if (n_gpus < 2) return;
    for (int idle = 0; idle < kMaxKicks && steps_ < budget_; ++idle) {
      std::vector<double> c(n_gpus);
      int crit = 0;
      for (int g = 0; g < n_gpus; ++g) {
        c[g] = Completion(sets_[g], g, -1, -1);
        if (c[g] > c[crit]) crit = g;
      }
      // Ruin: one task of the critical GPU and kRuin − 1 random others leave their GPUs.
      std::vector<int> removed;
      for (int r = 0; r < kRuin; ++r) {
        const int from = r == 0 ? crit : static_cast<int>(rng() % n_gpus);
        if (sets_[from].empty()) continue;
        const int j = sets_[from][rng() % sets_[from].size()];
        sets_[from].erase(std::find(sets_[from].begin(), sets_[from].end(), j));
        removed.push_back(j);
      }
      // Recreate: longest first, each where its GPU's completion ends lowest (ties: random).
      std::sort(removed.begin(), removed.end(), [&](int a, int b) {
        return fastest_[a] != fastest_[b] ? fastest_[a] > fastest_[b] : a < b;
      });
      for (int j : removed) {
        double best_c = kInf;
        int best_g = -1;
        const int offset = static_cast<int>(rng() % n_gpus);
        for (int k = 0; k < n_gpus; ++k) {
          const int g = (k + offset) % n_gpus;
          if (!Fits(j, g)) continue;
          const double cj = Completion(sets_[g], g, -1, j);
          if (cj < best_c - kEps) {
            best_c = cj;
            best_g = g;
          }
        }
        Insert(sets_[best_g], j);  // j came from a GPU that can host it: best_g >= 0
      }
      BestKnown scratch;
      LocalSearch(&scratch);
      const double m = Makespan(sets_);
      if (m < best_m - kEps) {
        best_m = m;
        best = sets_;
        out->moves += scratch.moves;
        ++out->kicks;
        idle = -1;
      } else {
        sets_ = best;
      }
      if (scratch.budget_exhausted) out->budget_exhausted = true;
    }
    sets_ = std::move(best);
  }

  // `set` with `out` replaced by `in`, in run order.
  std::vector<int> SwapIn(const std::vector<int>& set, int out, int in) {
    std::vector<int> s;
    s.reserve(set.size());
    for (int id : set) {
      if (id != out) s.push_back(id);
    }
    Insert(s, in);
    steps_ += static_cast<int64_t>(set.size());
    return s;
  }

  const sched::Cluster& cluster_;
  const std::vector<sched::Task>& tasks_;
  const std::vector<double>& memory_;
  const int64_t budget_;
  std::vector<double> p_;        // [task × types + type]: true isolated ms, +inf if none
  std::vector<double> fastest_;  // per task over the GPUs that can host it
  std::vector<Class> classes_;
  std::vector<std::vector<int>> sets_;  // per GPU, in run order
  int64_t steps_ = 0;
};

}  // namespace

Result<BestKnown> BestKnownSchedule(const sched::Cluster& cluster,
                                    const std::vector<sched::Task>& tasks,
                                    const std::vector<double>& memory_mib, const TruthModel& truth,
                                    const sched::LatencyOracle* fallback, int64_t budget) {
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].id != static_cast<int>(i)) {
      return Status::InvalidArgument("task ids must be 0..n-1 in order", tasks[i].name);
    }
  }
  if (memory_mib.size() != tasks.size()) {
    return Status::InvalidArgument("one memory need per task", "best-known schedule");
  }
  Search s(cluster, tasks, memory_mib, truth, fallback, budget);
  return s.Run();
}

}  // namespace hase::sim
