#include "hase/sim/lower_bound.h"

#include <glpk.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "hase/sched/gang.h"
#include "hase/sched/task.h"

namespace hase::sim {
namespace {

// Per type: the most whole GPUs of it on one node (a k-GPU task needs k of one type on one
// node; gang.h).
std::vector<int> MaxPerNode(const sched::Cluster& cluster) {
  std::map<std::pair<std::string, int>, int> n;
  std::vector<int> out(cluster.types.size(), 0);
  for (const sched::Gpu& g : cluster.gpus) {
    if (g.is_mig() || !cluster.types[g.type].mig_profile.empty()) continue;
    out[g.type] = std::max(out[g.type], ++n[{g.node, g.type}]);
  }
  return out;
}

// glp_simplex's return codes in words (GLPK reference manual, "glp_simplex").
std::string SimplexError(int rc) {
  switch (rc) {
    case GLP_EBADB: return "invalid initial basis (GLP_EBADB)";
    case GLP_ESING: return "singular basis matrix (GLP_ESING)";
    case GLP_ECOND: return "ill-conditioned basis matrix (GLP_ECOND)";
    case GLP_EBOUND: return "incorrect bounds (GLP_EBOUND)";
    case GLP_EFAIL: return "solver failure (GLP_EFAIL)";
    case GLP_EOBJLL: case GLP_EOBJUL: return "objective limit reached";
    case GLP_EITLIM: return "iteration limit (GLP_EITLIM)";
    case GLP_ETMLIM: return "time limit of " + std::to_string(kLpTimeLimitMs / 1000) + " s (GLP_ETMLIM)";
    case GLP_ENOPFS: return "no primal feasible solution (GLP_ENOPFS)";
    case GLP_ENODFS: return "no dual feasible solution (GLP_ENODFS)";
    default: return "code " + std::to_string(rc);
  }
}

}  // namespace

Result<LowerBound> MakespanLowerBound(const sched::Cluster& cluster,
                                      const std::vector<sched::Task>& tasks,
                                      const std::vector<double>& memory_mib,
                                      const TruthModel& truth, int max_lp_groups) {
  const size_t k_types = cluster.types.size();
  const std::vector<int> count = cluster.CountByType();
  std::vector<double> max_mem(k_types, 0), cap(k_types, 1.0);
  std::vector<int> max_tasks(k_types, 1);
  for (const sched::Gpu& g : cluster.gpus) {
    max_mem[g.type] = std::max(max_mem[g.type], g.memory_mib);
    max_tasks[g.type] = std::max(max_tasks[g.type], g.max_tasks);
  }
  const double kappa = truth.contention().kappa;
  for (size_t k = 0; k < k_types; ++k) {
    const double m = max_tasks[k];
    cap[k] = std::max(1.0, m / (1.0 + kappa * (m - 1.0)));
  }
  const std::vector<int> per_node = MaxPerNode(cluster);
  LowerBound lb;
  // Merge tasks with identical work vectors: key = (profile key, memory); work adds up.
  // Per group and type: {capacity work (iso × demand), time work (iso)}.
  std::map<std::pair<std::string, double>, std::vector<std::pair<double, double>>> groups;
  for (const sched::Task& t : tasks) {
    std::vector<std::pair<double, double>> w(k_types, {-1, -1});  // -1: cannot run there
    double fastest = std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < k_types; ++k) {
      if (memory_mib[t.id] > max_mem[k] + 1e-9) continue;
      if (t.gpus > 1 && t.gpus > per_node[k]) continue;
      Result<TrueProfile> p = truth.Profile(t, cluster.types[k]);
      if (!p.ok()) continue;
      if (t.gpus > 1) {
        // A k-GPU task holds k whole GPUs for its run: all their capacity and all their slots.
        const double run = sched::GangIsolatedMs(t, p->isolated_ms);
        w[k] = {t.gpus * run * cap[k], t.gpus * run * max_tasks[k]};
        fastest = std::min(fastest, run);
        continue;
      }
      w[k] = {p->isolated_ms * std::max(p->demand, 1e-3), p->isolated_ms};
      fastest = std::min(fastest, p->isolated_ms);
    }
    if (!std::isfinite(fastest)) continue;
    // A split task may run on many GPUs at once: no single-task term (the LP still counts it).
    if (!t.split) lb.longest_task_ms = std::max(lb.longest_task_ms, t.arrival_ms + fastest);
    const std::string key = t.gpus > 1 ? fmt::format("{}|gpus{}|e{}", sched::ProfileKey(t), t.gpus,
                                                     t.parallel_efficiency)
                                       : sched::ProfileKey(t);
    auto& acc = groups[{key, memory_mib[t.id]}];
    if (acc.empty()) acc.assign(k_types, {0.0, 0.0});
    for (size_t k = 0; k < k_types; ++k) {
      acc[k] = w[k].first < 0 ? std::make_pair(-1.0, -1.0)
                              : std::make_pair(acc[k].first + w[k].first,
                                               acc[k].second + w[k].second);
    }
  }
  if (groups.empty()) return lb;
  lb.lp_groups = static_cast<int>(groups.size());
  // The aggregate bound: both rows summed over types, every group on its cheapest type.
  auto aggregate = [&] {
    double cap_total = 0, slots_total = 0, work = 0, time = 0;
    for (size_t k = 0; k < k_types; ++k) {
      cap_total += count[k] * cap[k];
      slots_total += count[k] * static_cast<double>(max_tasks[k]);
    }
    for (const auto& [key, w] : groups) {
      double wmin = std::numeric_limits<double>::infinity(), tmin = wmin;
      for (size_t k = 0; k < k_types; ++k) {
        if (w[k].first < 0 || count[k] == 0) continue;
        wmin = std::min(wmin, w[k].first);
        tmin = std::min(tmin, w[k].second);
      }
      if (std::isfinite(wmin)) {
        work += wmin;
        time += tmin;
      }
    }
    lb.lp_solved = false;
    lb.lp_ms = std::max(cap_total > 0 ? work / cap_total : 0.0,
                        slots_total > 0 ? time / slots_total : 0.0);
    return lb;
  };
  if (lb.lp_groups > max_lp_groups) {
    aggregate();
    lb.lp_status = "LP too large: " + std::to_string(lb.lp_groups) + " task groups > " +
                   std::to_string(max_lp_groups);
    return lb;
  }
  glp_prob* lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MIN);
  // Rows: one per group (Σ_k y = 1); two per type: capacity (Σ w y − n cap C <= 0) and
  // time (Σ iso y − n m C <= 0: at most m tasks progress at once, each at most at rate 1).
  const int n_groups = static_cast<int>(groups.size());
  const int kt = static_cast<int>(k_types);
  glp_add_rows(lp, n_groups + 2 * kt);
  for (int r = 1; r <= n_groups; ++r) glp_set_row_bnds(lp, r, GLP_FX, 1.0, 1.0);
  for (int r = n_groups + 1; r <= n_groups + 2 * kt; ++r) glp_set_row_bnds(lp, r, GLP_UP, 0.0, 0.0);
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0};
  const int c_col = glp_add_cols(lp, 1);
  glp_set_col_bnds(lp, c_col, GLP_LO, 0.0, 0.0);
  glp_set_obj_coef(lp, c_col, 1.0);
  for (int k = 0; k < kt; ++k) {
    ia.push_back(n_groups + 1 + k);
    ja.push_back(c_col);
    ar.push_back(-count[k] * cap[k]);
    ia.push_back(n_groups + 1 + kt + k);
    ja.push_back(c_col);
    ar.push_back(-count[k] * static_cast<double>(max_tasks[k]));
  }
  int row = 1;
  for (const auto& [key, w] : groups) {
    for (int k = 0; k < kt; ++k) {
      if (w[k].first < 0 || count[k] == 0) continue;
      const int col = glp_add_cols(lp, 1);
      glp_set_col_bnds(lp, col, GLP_LO, 0.0, 0.0);
      ia.push_back(row);
      ja.push_back(col);
      ar.push_back(1.0);
      ia.push_back(n_groups + 1 + k);
      ja.push_back(col);
      ar.push_back(w[k].first);
      ia.push_back(n_groups + 1 + kt + k);
      ja.push_back(col);
      ar.push_back(w[k].second);
    }
    ++row;
  }
  glp_load_matrix(lp, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
  // Coefficients span many decades (ms of whole tasks next to GPU counts): scale the problem
  // and let the presolver build a well-conditioned basis (without it GLPK's primal simplex
  // failed with a singular basis on the 63-group Alibaba LP).
  const int term = glp_term_out(GLP_OFF);  // glp_scale_prob prints its statistics
  glp_scale_prob(lp, GLP_SF_AUTO);
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.tm_lim = kLpTimeLimitMs;
  parm.presolve = GLP_ON;
  int rc = glp_simplex(lp, &parm);
  if (rc != 0 && rc != GLP_ETMLIM) {  // retry once from an advanced basis, without presolve
    glp_adv_basis(lp, 0);
    parm.presolve = GLP_OFF;
    parm.meth = GLP_DUALP;
    rc = glp_simplex(lp, &parm);
  }
  glp_term_out(term);
  const int status = glp_get_status(lp);
  if (rc != 0 || status != GLP_OPT) {  // too slow or failed: a weaker bound, not an error
    glp_delete_prob(lp);
    aggregate();
    lb.lp_status = rc != 0 ? "glp_simplex failed: " + SimplexError(rc)
                           : "GLPK status " + std::to_string(status) + " (not optimal)";
    return lb;
  }
  lb.lp_ms = glp_get_obj_val(lp);
  glp_delete_prob(lp);
  return lb;
}

std::vector<double> FastestIsolatedMs(const sched::Cluster& cluster,
                                      const std::vector<sched::Task>& tasks,
                                      const std::vector<double>& memory_mib,
                                      const TruthModel& truth) {
  std::vector<double> max_mem(cluster.types.size(), 0);
  for (const sched::Gpu& g : cluster.gpus) {
    max_mem[g.type] = std::max(max_mem[g.type], g.memory_mib);
  }
  const std::vector<int> per_node = MaxPerNode(cluster);
  std::vector<double> out(tasks.size(), 0);
  for (const sched::Task& t : tasks) {
    double fastest = std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < cluster.types.size(); ++k) {
      const double need = static_cast<size_t>(t.id) < memory_mib.size() ? memory_mib[t.id] : 0;
      if (need > max_mem[k] + 1e-9) continue;
      if (t.gpus > 1 && t.gpus > per_node[k]) continue;
      const Result<TrueProfile> p = truth.Profile(t, cluster.types[k]);
      if (p.ok()) fastest = std::min(fastest, sched::GangIsolatedMs(t, p->isolated_ms));
    }
    if (std::isfinite(fastest) && static_cast<size_t>(t.id) < out.size()) out[t.id] = fastest;
  }
  return out;
}

}  // namespace hase::sim
