// `hase serve --config cluster.yaml [--listen 127.0.0.1:8080] [--state DIR] ...`: the scheduler
// daemon (REST API, /metrics, /healthz, Kubernetes extender) over a durable journal.
// `--backend slurm` discovers the cluster from Slurm (--config then optional) and runs tasks
// as Slurm jobs (service/slurm_backend.h); `--kube-api` makes Kubernetes the backend (binds
// the pods kube-scheduler sends the extender: service/kube_backend.h).
// Library: src/hase/service/ (daemon.h, api_server.h, extender.h); docs/service.md.
#include <algorithm>
#include <arpa/inet.h>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <pthread.h>

#include <fmt/format.h>

#include "cli/command.h"
#include "hase/predict/latency_calibration.h"
#include "hase/sched/registry.h"

// The cluster loader and the predictor oracle come from the scheduler issue; until they are
// on main this subcommand reports itself unavailable instead of breaking the build.
#if __has_include("hase/sched/cluster_file.h") && __has_include("hase/sim/predictor_oracle.h")
#define HASE_SERVE_AVAILABLE 1
#include "hase/hw/gpu_catalog.h"
#include "hase/sched/cluster_file.h"
#include "hase/sched/team_config.h"
#include "hase/service/mig_telemetry.h"
#include "hase/service/api_server.h"
#include "hase/service/daemon.h"
#include "hase/service/extender.h"
#include "hase/service/instance_lock.h"
#include "hase/service/latency_table.h"
#include "hase/service/kube_backend.h"
#include "hase/service/slurm_backend.h"
#include "hase/service/slurm_cluster.h"
#include "hase/sim/predictor_oracle.h"
#include "hase/telemetry/dcgm_scraper.h"
#include "hase/telemetry/gpu_load_table.h"
#include "hase/telemetry/http_get.h"
#include "hase/telemetry/prom_load_source.h"
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#endif

namespace hase::cli {
namespace {

struct ServeFlags {
  std::string config;
  std::string teams;  // --teams FILE ("" = the --config file's teams keys, if any)
  std::string listen = "127.0.0.1:8080";
  std::string state = "hase-state";
  std::string policy = "hase";
  std::string objective = "balanced";
  std::vector<std::string> dcgm;  // URL or URL=NODE
  std::string prometheus;         // Prometheus base URL (instead of --dcgm)
  std::string selector;           // PromQL label matchers for --prometheus
  double prometheus_window_s = 30;
  std::vector<std::string> gpu_node;  // UUID=NODE
  std::string log_level = "info";
  double scrape_interval_s = 10;
  double scrape_timeout_s = 2;
  double stale_after_s = 90;
  double load_max_age_s = 300;
  double outside_lease_s = 3600;
  bool executor = false;
  std::string executor_node;
  std::string kube_api;
  std::string kube_token_file;
  std::string kube_ca;
  std::string kube_pod_selector;
  double kube_timeout = 2.0;
  double kube_bind_budget = 4.0;
  std::string catalog;
  std::string models = DefaultModelsDir();
  std::string precision;  // empty = the runtime's default
  std::string runtime = DefaultRuntime().name;
  std::string calibration;  // --calibration: "" = the saved one if any, "none", or a file
  std::string latency_table;
  std::string sync = "full";
  std::string token_file;           // bearer tokens (api_auth.h)
  std::string audit_log;            // JSON lines naming who changed what ("" = the decision log)
  std::string extender_token_file;  // path tokens of /extender/<token>/
  std::string tls_cert, tls_key;
  size_t max_connections = 256;
  double request_deadline_s = 10;
  std::string backend = "local";
  std::string slurm_partition;
  std::vector<std::string> slurm_gres_types;  // TYPE=CATALOG
  std::string slurm_output;
  std::string slurm_job_prefix = "hase";
  double slurm_poll_s = 0.5;
  double slurm_node_poll_s = 5;
  bool standby = false;  // wait as hot standby while another daemon holds --state
  double lease_s = 5;    // instance lease (instance_lock.h)
};

#ifdef HASE_SERVE_AVAILABLE
int Run(const ServeFlags& f) {
  // Signals are waited for on one thread; block them before any other thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);  // re-read --token-file (api_auth.h)
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  // Who may connect, before anything starts (docs/service.md, Threat model).
  const size_t colon = f.listen.rfind(':');
  if (colon == std::string::npos) {
    return Fail(Status::InvalidArgument("--listen '" + f.listen + "' is not HOST:PORT"));
  }
  const std::string host = f.listen.substr(0, colon);
  int port = -1;
  try {
    size_t used = 0;
    const std::string digits = f.listen.substr(colon + 1);
    port = std::stoi(digits, &used);
    if (used != digits.size()) port = -1;
  } catch (const std::exception&) {
    port = -1;
  }
  if (port < 0 || port > 65535) {
    return Fail(Status::InvalidArgument("--listen '" + f.listen + "': port must be 0 to 65535", "--listen",
                                        "e.g. 127.0.0.1:8080 (port 0: any free port)"));
  }
  {  // a dotted-quad that is not an IPv4 address (999.1.1.1) is a typo, not a host name
    const bool dotted = !host.empty() && host.find_first_not_of("0123456789.") == std::string::npos;
    in_addr v4{};
    if (host.empty() || (dotted && ::inet_pton(AF_INET, host.c_str(), &v4) != 1)) {
      return Fail(Status::InvalidArgument("--listen '" + f.listen + "': '" + host + "' is not an IPv4 address",
                                          "--listen", "e.g. 127.0.0.1:8080, or a host name"));
    }
  }
  service::ApiServerOptions ao;
  if (!f.token_file.empty()) {
    auto t = service::LoadApiTokens(f.token_file);
    if (!t.ok()) return Fail(t.status().WithContext("--token-file"));
    ao.token_entries = *t;
    ao.token_file = f.token_file;
  }
  const bool no_tokens = ao.token_entries.empty();
  if (!f.extender_token_file.empty()) {
    auto t = service::LoadTokenFile(f.extender_token_file);
    if (!t.ok()) return Fail(t.status().WithContext("--extender-token-file"));
    ao.extender_tokens = *t;
  }
  if (!service::IsLoopbackHost(host) && no_tokens) {
    return Fail(Status::InvalidArgument(
        "refusing to listen on " + host + " without --token-file" +
            (f.executor ? ": with --executor anyone who reaches the port could run commands as this user" : ""),
        "--listen", "listen on 127.0.0.1, or give --token-file FILE (docs/service.md, Threat model)"));
  }
  if (f.executor && no_tokens) {
    std::fprintf(stderr, "hase serve: warning: --executor without --token-file: every local user can run "
                         "commands as this user through %s\n", f.listen.c_str());
  }
  ao.tls_cert = f.tls_cert;
  ao.tls_key = f.tls_key;
  ao.limits.max_connections = f.max_connections;
  ao.limits.request_deadline_s = f.request_deadline_s;

  auto catalog = GpuCatalog::Load(f.catalog);
  if (!catalog.ok()) return Fail(catalog.status());
  auto resolve = [&](std::string_view name) -> std::optional<std::string> {
    auto g = catalog->Find(name);
    if (!g.ok()) return std::nullopt;
    return (*g)->id;
  };
  if (f.executor && f.backend != "local") {
    return Fail(Status::InvalidArgument("--executor runs tasks here; it cannot be combined with --backend " + f.backend));
  }
  if (f.config.empty() && f.backend != "slurm") {
    return Fail(Status::InvalidArgument("--config is required", "hase serve", "or discover the cluster: --backend slurm"));
  }
  if (!f.kube_api.empty() && (f.executor || f.backend == "slurm")) {
    return Fail(Status::InvalidArgument(
        "--kube-api makes Kubernetes the backend (the kubelet runs the pods hase binds); it cannot be combined with " +
            std::string(f.executor ? "--executor" : "--backend slurm"),
        "hase serve", "run one hase serve per backend"));
  }
  std::unique_ptr<service::Backend> backend;
  Result<sched::Cluster> cluster = Status::Internal("no cluster");
  if (!f.kube_api.empty()) {
    // Checked before anything listens: a bad --kube-api is one clear error at start.
    service::KubeBackendOptions ko;
    if (!(f.kube_bind_budget > 0 && f.kube_bind_budget <= 60) || !(f.kube_timeout > 0 && f.kube_timeout <= 60)) {
      return Fail(Status::InvalidArgument("--kube-timeout and --kube-bind-budget must be in (0, 60] seconds", "hase serve",
                                          "kube-scheduler's extender httpTimeout is 5 s by default: keep the budget below it"));
    }
    ko.client = {f.kube_api, f.kube_token_file, f.kube_ca, f.kube_timeout, std::min(1.0, f.kube_timeout)};
    ko.bind_budget_s = f.kube_bind_budget;
    ko.watcher.label_selector = f.kube_pod_selector;
    auto kube = service::KubeBackend::Create(ko);
    if (!kube.ok()) return Fail(kube.status());
    backend = std::move(kube).value();
  }
  if (f.backend == "slurm") {
    service::SlurmOptions so;
    so.partition = f.slurm_partition;
    so.job_prefix = f.slurm_job_prefix;
    so.output_dir = f.slurm_output.empty() ? "" : std::filesystem::absolute(f.slurm_output).string();
    so.poll_interval_s = f.slurm_poll_s;
    so.node_poll_interval_s = f.slurm_node_poll_s;
    std::map<std::string, std::string> overrides;
    for (const std::string& m : f.slurm_gres_types) {
      const size_t eq = m.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == m.size()) {
        return Fail(Status::InvalidArgument("--slurm-gres-type '" + m + "' is not GRES_TYPE=CATALOG_TYPE",
                                            "hase serve", "e.g. --slurm-gres-type a100=A100-SXM4-80GB"));
      }
      overrides[m.substr(0, eq)] = m.substr(eq + 1);
    }
    auto nodes = service::ReadSlurmNodes(so);
    if (!nodes.ok()) {
      return Fail(Status::IO(nodes.status().message(), "--backend slurm",
                             "Slurm's CLI must work here: check SLURM_CONF and `scontrol ping`"));
    }
    auto inv = service::SlurmInventoryFromNodes(*nodes, f.slurm_partition, overrides, resolve);
    if (!inv.ok()) return Fail(inv.status());
    cluster = f.config.empty() ? sched::ParseClusterYaml(inv->cluster_yaml, "slurm (scontrol show node)", *catalog)
                               : sched::LoadClusterFile(f.config, *catalog);
    if (!cluster.ok()) return Fail(cluster.status());
    auto gres = service::MatchClusterToSlurm(*cluster, *inv);
    if (!gres.ok()) return Fail(gres.status());
    for (const std::string& s : inv->skipped) std::fprintf(stderr, "hase serve: slurm: skipped %s\n", s.c_str());
    if (!so.output_dir.empty()) std::filesystem::create_directories(so.output_dir);
    backend = std::make_unique<service::SlurmBackend>(so, *std::move(gres));
  } else {
    cluster = sched::LoadClusterFile(f.config, *catalog);
    if (!cluster.ok()) return Fail(cluster.status());
  }

  // Teams (docs/teams.md): --teams FILE, else the cluster file's own keys.
  sched::TeamConfig teams;
  if (!f.teams.empty() || !f.config.empty()) {
    const std::string from = f.teams.empty() ? f.config : f.teams;
    auto t = sched::LoadTeamConfig(from);
    if (!t.ok()) return Fail(t.status());
    if (!f.teams.empty() && !t->enabled()) {
      return Fail(Status::InvalidArgument("--teams " + f.teams + " lists no teams", "hase serve",
                                          "give it a 'teams:' list (docs/teams.md)"));
    }
    if (t->enabled()) {
      if (Status s = t->CheckAgainst(*cluster); !s.ok()) return Fail(s.WithContext(from));
    }
    teams = *std::move(t);
  }
  if (Status st = service::CheckTokenTeams(ao.token_entries, teams, f.token_file); !st.ok()) {
    return Fail(st.WithContext("--token-file"));
  }

  std::shared_ptr<const sched::LatencyOracle> oracle;
  if (!f.latency_table.empty()) {
    auto t = service::LoadLatencyTable(f.latency_table, resolve);
    if (!t.ok()) return Fail(t.status());
    oracle = *t;
  } else {
    sim::PredictorOracleOptions po;
    po.models_dir = f.models;
    if (Status s = sim::SetRuntimeAndPrecision(f.runtime, f.precision, po); !s.ok()) return Fail(s);
    {
      auto cal = LoadCalibrationFlag(f.calibration);
      if (!cal.ok()) return Fail(cal.status());
      po.calibration = std::make_shared<const LatencyCalibration>(std::move(*cal));
    }
    oracle = std::make_shared<sim::PredictorOracle>(*catalog, po);
  }

  // Live load: dcgm-exporter scraped directly, or Prometheus's HTTP API.
  if (!f.dcgm.empty() && !f.prometheus.empty()) {
    return Fail(Status::InvalidArgument("--dcgm and --prometheus both given", "hase serve",
                                        "read load from one source: the exporters, or the Prometheus that scrapes them"));
  }
  if (!f.selector.empty() && f.prometheus.empty()) {
    return Fail(Status::InvalidArgument("--selector needs --prometheus", "hase serve"));
  }
  telemetry::NodeMap nodes;
  for (const sched::Gpu& g : cluster->gpus) nodes.nodes.insert(g.node);
  nodes.mig = service::DeclaredMigInstances(*cluster);  // MIG series → instances, for /healthz
  for (const std::string& t : f.gpu_node) {
    auto un = telemetry::ParseUuidNode(t);
    if (!un.ok()) return Fail(un.status());
    if (!nodes.nodes.count(un->second)) {
      return Fail(Status::InvalidArgument("--gpu-node " + t + ": no node '" + un->second + "' in " + f.config));
    }
    nodes.uuid_to_node[un->first] = un->second;
  }
  std::unique_ptr<telemetry::LoadSource> scraper;
  if (!f.dcgm.empty()) {
    telemetry::DcgmScraperOptions so;
    for (const std::string& t : f.dcgm) {
      size_t eq = t.find('=');
      so.targets.push_back({t.substr(0, eq), eq == std::string::npos ? "" : t.substr(eq + 1)});
      auto u = telemetry::ParseHttpUrl(so.targets.back().url);
      if (!u.ok()) return Fail(u.status().WithContext("--dcgm"));
      if (so.targets.back().node.empty()) so.targets.back().node = u->host;
    }
    so.interval_s = f.scrape_interval_s;
    so.timeout_s = f.scrape_timeout_s;
    so.stale_after_s = f.stale_after_s;
    so.resolver = resolve;
    so.nodes = nodes;
    scraper = std::make_unique<telemetry::DcgmScraper>(so);
  } else if (!f.prometheus.empty()) {
    auto u = telemetry::ParseHttpUrl(f.prometheus);
    if (!u.ok()) return Fail(u.status().WithContext("--prometheus"));
    telemetry::PromLoadSourceOptions po;
    po.base_url = f.prometheus;
    po.selector = f.selector;
    po.window_s = f.prometheus_window_s;
    po.interval_s = f.scrape_interval_s;
    po.timeout_s = std::max(f.scrape_timeout_s, 1.0);
    po.stale_after_s = f.stale_after_s;
    po.resolver = resolve;
    po.nodes = nodes;
    auto prom = std::make_unique<telemetry::PromLoadSource>(po);
    // One query round now, so a bad --selector or URL is one clear line at start-up, in
    // Prometheus's own words (the daemon would otherwise only say so on /healthz).
    if (Status st = prom->RefreshOnce(); !st.ok()) {
      if (st.IsInvalidArgument()) return Fail(st.WithContext("--prometheus"));
      std::fprintf(stderr, "hase serve: warning: %s (continuing; /healthz says degraded)\n", st.ToString().c_str());
    }
    scraper = std::move(prom);
  }

  auto log = std::make_shared<spdlog::logger>("hase", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  log->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc);
  // The default logger (backends' warnings) stamps ISO 8601 UTC too, not local time.
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc);
  log->set_level(spdlog::level::from_str(f.log_level));
  log->flush_on(spdlog::level::info);

  // One active daemon per --state (instance_lock.h): refuse, or wait as hot standby. Taken
  // before the journal is opened; everything above (cluster, oracle, telemetry) is ready, so a
  // standby that takes over only recovers the journal and binds.
  if (!(f.lease_s >= 1 && f.lease_s <= 600)) {
    return Fail(Status::InvalidArgument("--lease must be in [1, 600] seconds", "hase serve"));
  }
  service::InstanceLockOptions lo;
  lo.listen = f.listen;
  lo.lease_s = f.lease_s;
  lo.renew_s = std::max(0.2, f.lease_s / 5);
  Result<std::unique_ptr<service::InstanceLock>> instance = Status::Internal("no lock");
  if (!f.standby) {
    instance = service::InstanceLock::Acquire(f.state, lo);
  } else {
    bool stopped = false;
    instance = service::InstanceLock::WaitAndAcquire(
        f.state, lo,
        [&](const service::LeaseHolder& h) {
          std::printf("hase serve: standby: %s is held by %s; waiting to take over\n", f.state.c_str(),
                      h.Describe(telemetry::WallClockSeconds()).c_str());
          std::fflush(stdout);
        },
        [&] {
          timespec zero{0, 0};
          stopped = sigtimedwait(&signals, nullptr, &zero) > 0;
          return stopped;
        });
    if (stopped) {
      std::printf("hase serve: standby stopped by a signal before taking over\n");
      return 0;
    }
    if (instance.ok()) {
      std::printf("hase serve: standby: took over %s\n", f.state.c_str());
      std::fflush(stdout);
    }
  }
  if (!instance.ok()) return Fail(instance.status());
  // Another daemon took the lease (this one was stopped or cut off for longer than --lease):
  // stop at once, writing nothing, as kill -9 would; the journal then has one writer.
  (*instance)->StartRenewing([](const service::LeaseHolder& other) {
    std::fprintf(stderr, "hase serve: error: lost the instance lease to %s; exiting without writing the journal\n",
                 other.Describe(telemetry::WallClockSeconds()).c_str());
    std::fflush(stderr);
    std::_Exit(3);
  });
  ao.more_health = [lock = instance->get()]() -> std::vector<std::string> {
    const std::string e = lock->health();
    if (e.empty()) return {};
    return {"instance lease: renewal failed (a standby may take over): " + e};
  };

  service::DaemonOptions o;
  o.state_dir = f.state;
  o.policy = f.policy;
  {
    const Result<sched::Objective> objective = sched::ParseObjective(f.objective, "--objective");
    if (!objective.ok()) return Fail(objective.status());
    o.objective = *objective;
  }
  o.store.synchronous_full = f.sync != "normal";
  // Fencing: no journal write (so no placement, launch or cancel) unless the lease surely holds.
  o.store.write_gate = [lock = instance->get()] { return lock->CheckHeld(); };
  o.load_max_age_s = f.load_max_age_s;
  o.outside_lease_s = f.outside_lease_s;
  // dcgm-exporter collects every 30 s; a Prometheus window covers window seconds.
  o.load_settle_s = std::max(30.0, f.prometheus.empty() ? 0.0 : f.prometheus_window_s);
  o.executor = f.executor;
  o.executor_node = f.executor_node;
  if (f.latency_table.empty()) o.default_runtime = FindRuntime(f.runtime)->name;
  o.logger = log;
  o.catalog = std::make_shared<const GpuCatalog>(*catalog);  // what-if GPU types (POST /v1/whatif)
  o.teams = std::move(teams);
  auto daemon = service::Daemon::Create(*std::move(cluster), oracle, o, scraper.get(), std::move(backend));
  if (!daemon.ok()) return Fail(daemon.status());
  if (Status st = (*daemon)->Start(); !st.ok()) return Fail(st);
  if (scraper) scraper->Start();

  service::Extender extender(**daemon);
  if (!f.audit_log.empty()) {
    try {
      ao.audit = std::make_shared<spdlog::logger>("audit", std::make_shared<spdlog::sinks::basic_file_sink_mt>(f.audit_log));
    } catch (const std::exception& e) {
      return Fail(Status::IO(std::string("cannot open the audit log: ") + e.what(), f.audit_log, "--audit-log"));
    }
    ao.audit->set_pattern("{\"time\":\"%Y-%m-%dT%H:%M:%S.%eZ\",\"event\":%v}", spdlog::pattern_time_type::utc);
    ao.audit->flush_on(spdlog::level::info);
  }
  service::ApiServer api(**daemon, extender, ao);
  auto bound = api.Bind(host, port);
  if (!bound.ok()) return Fail(bound.status());
  (*instance)->set_listen(host + ":" + std::to_string(*bound));
  const std::string policy_label = f.policy == "hase" ? "hase, objective " + f.objective : f.policy;
  std::printf("hase serve: listening on %s:%d (%s, policy %s, %zu GPUs, state %s, backend %s, %s)\n", host.c_str(), *bound,
              f.tls_cert.empty() ? "http" : "https", policy_label.c_str(), (*daemon)->cluster().gpus.size(), f.state.c_str(),
              (*daemon)->backend_name().empty() ? "none" : (*daemon)->backend_name().c_str(),
              no_tokens ? "no tokens: loopback clients only" : "bearer tokens required");
  std::fflush(stdout);

  std::thread waiter([&] {
    for (int sig = 0; sigwait(&signals, &sig) == 0;) {
      if (sig != SIGHUP) break;
      // Token rotation without a restart: the new file, or the old tokens and the reason.
      Result<size_t> n = api.ReloadTokens();
      if (n.ok()) {
        log->warn("SIGHUP: {} tokens in force from {}", *n, f.token_file);
      } else {
        log->error("SIGHUP: token file not reloaded, the previous tokens stay in force: {}", n.status().ToString());
      }
    }
    api.Stop();
  });
  api.Run();
  pthread_kill(waiter.native_handle(), SIGTERM);  // release the waiter if Run ended first
  waiter.join();
  if (scraper) scraper->Stop();
  (*daemon)->Stop();
  return 0;
}
#endif

}  // namespace

Command AddServeCommand(CLI::App& parent) {
  auto flags = std::make_shared<ServeFlags>();
  Command c;
  c.app = parent.add_subcommand("serve", "Run the scheduler daemon (REST API, Kubernetes extender)");
  CLI::App& a = *c.app;
  a.add_option("--config", flags->config,
               "Cluster file (the `hase simulate --cluster` schema); optional with --backend slurm");
  a.add_option("--teams", flags->teams,
               "YAML with teams / fair_share / preemption keys (docs/teams.md); default: those of --config");
  a.add_option("--listen", flags->listen, "HOST:PORT to serve on (port 0: any free port)");
  a.add_option("--state", flags->state, "Directory of the journal (hase.db) and executor files");
  a.add_flag("--standby", flags->standby,
             "When another hase serve holds --state, wait as hot standby and take over when it ends (else: refuse)");
  a.add_option("--lease", flags->lease_s,
               "Seconds without renewal after which a holder of --state on another host counts as dead (NFS)");
  a.add_option("--objective", flags->objective, "hase: what its queue order trades, makespan (longest first), jct (shortest first) or balanced (long tasks first, the rest shortest first)")->capture_default_str();
  a.add_option("--policy", flags->policy, "Placement policy: " + fmt::format("{}", fmt::join(sched::PolicyNames(), ", ")));
  a.add_option("--dcgm", flags->dcgm, "dcgm-exporter URL to scrape, URL=NODE to name its node (repeatable)");
  a.add_option("--prometheus", flags->prometheus,
               "Prometheus base URL to read DCGM load from (instead of --dcgm), e.g. http://prometheus:9090");
  a.add_option("--selector", flags->selector, "PromQL label matchers for --prometheus, e.g. '{job=\"dcgm-exporter\"}'");
  a.add_option("--prometheus-window", flags->prometheus_window_s, "Seconds of samples --prometheus averages over")
      ->capture_default_str();
  a.add_option("--gpu-node", flags->gpu_node, "UUID=NODE: the node of a GPU whose Hostname label is not a node name (repeatable)");
  a.add_option("--log-level", flags->log_level, "Decision log on stderr: debug (also each request and wait), info, warn, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();
  a.add_option("--scrape-interval", flags->scrape_interval_s, "Seconds between DCGM scrapes or Prometheus queries");
  a.add_option("--scrape-timeout", flags->scrape_timeout_s, "Seconds before a scrape times out");
  a.add_option("--stale-after", flags->stale_after_s, "DCGM readings older than this make /healthz degraded (s)");
  a.add_option("--load-max-age", flags->load_max_age_s, "DCGM readings older than this are ignored (s)");
  a.add_option("--outside-lease", flags->outside_lease_s,
               "Seconds a task run outside hase (no command) holds its GPU without POST /v1/tasks/{id}/complete or "
               "/heartbeat; then it fails and frees the GPU (0: never)")
      ->check(
          [](const std::string& v) -> std::string {
            try {
              size_t used = 0;
              const double s = std::stod(v, &used);
              if (used == v.size() && s >= 0 && s <= 1e9) return "";
            } catch (const std::exception&) {
            }
            return "must be 0 (no lease) or a number of seconds up to 1e9, not '" + v + "'";
          },
          "SECONDS")
      ->capture_default_str();
  a.add_flag("--executor", flags->executor, "Run task commands here (standalone mode; the local backend)");
  a.add_option("--backend", flags->backend, "Where tasks run: local (with --executor; without it tasks run elsewhere and are reported through the API) or slurm (sbatch)")
      ->check(CLI::IsMember({"local", "slurm"}));
  a.add_option("--slurm-partition", flags->slurm_partition, "Slurm partition to discover and submit to (default: Slurm's)");
  a.add_option("--slurm-gres-type", flags->slurm_gres_types,
               "GRES_TYPE=CATALOG_TYPE when the catalog does not know a Slurm GPU type (repeatable)");
  a.add_option("--slurm-output", flags->slurm_output, "Directory (seen by the nodes) for job output; default Slurm's");
  a.add_option("--slurm-job-prefix", flags->slurm_job_prefix, "Job names are PREFIX-<task>-<attempt> (one per hase)");
  a.add_option("--slurm-poll", flags->slurm_poll_s, "Seconds between job state polls (squeue)");
  a.add_option("--slurm-node-poll", flags->slurm_node_poll_s, "Seconds between node state polls (scontrol)");
  a.add_option("--executor-node", flags->executor_node, "Node this executor runs (default: every node)");
  a.add_option("--kube-api", flags->kube_api,
               "Kubernetes as the backend (binds the pods kube-scheduler sends the extender, watches them, deletes them on cancel): the API URL (http://127.0.0.1:8001 = kubectl proxy) or in-cluster");
  a.add_option("--kube-token-file", flags->kube_token_file, "Bearer token file for --kube-api (in-cluster: the service account's)");
  a.add_option("--kube-ca", flags->kube_ca, "CA bundle for an https --kube-api (in-cluster: the service account's)");
  a.add_option("--kube-pod-selector", flags->kube_pod_selector, "Label selector of the pods the watcher lists (default: all)");
  a.add_option("--kube-timeout", flags->kube_timeout,
               "Read/write timeout of one Kubernetes API call, s (connect: at most 1 s)")
      ->capture_default_str();
  a.add_option("--kube-bind-budget", flags->kube_bind_budget,
               "Most time one extender /bind spends on API calls, s; keep it below kube-scheduler's extender "
               "httpTimeout (5 s by default)")
      ->capture_default_str();
  a.add_option("--catalog", flags->catalog, "GPU catalog YAML (default: built in)");
  a.add_option("--models", flags->models, "Directory of zoo .onnx models for the predictor oracle");
  a.add_option("--precision", flags->precision, "Arithmetic for the predictor oracle: tf32, tf32-conv, fp32, fp16, tensor (default: the runtime's)");
  a.add_option("--calibration", flags->calibration,
               "Calibration file (hase calibrate), or 'none' (default: the saved one when it exists)");
  a.add_option("--runtime", flags->runtime, "Inference runtime of tasks that name none: ort-cuda, ort-cuda-graph, pytorch-eager, tensorrt")->capture_default_str();
  a.add_option("--latency-table", flags->latency_table, "CSV model,gpu_type,per_batch_ms,demand,memory_mib instead of the predictor");
  a.add_option("--sync", flags->sync, "Journal durability: full (power-safe, default) or normal (crash-safe)")
      ->check(CLI::IsMember({"full", "normal"}));
  a.add_option("--token-file", flags->token_file,
               "Bearer tokens, one a line (mode 600): needed for every change, and for every read when --listen is not loopback");
  a.add_option("--audit-log", flags->audit_log,
               "Append one JSON line per change and per refused request, naming the token (who, team) and what; "
               "default: 'audit' lines in the decision log");
  a.add_option("--extender-token-file", flags->extender_token_file,
               "Tokens kube-scheduler puts in its urlPrefix: /extender/<token>/filter|prioritize|bind");
  a.add_option("--tls-cert", flags->tls_cert, "PEM certificate chain: serve HTTPS (with --tls-key)");
  a.add_option("--tls-key", flags->tls_key, "PEM private key of --tls-cert");
  a.add_option("--max-connections", flags->max_connections,
               "Open connections; over it the oldest idle or slow one is closed")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  a.add_option("--request-deadline", flags->request_deadline_s,
               "Seconds a request's line, headers and body may take to arrive")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
#ifdef HASE_SERVE_AVAILABLE
  c.run = [flags] { return Run(*flags); };
#else
  c.run = [] { return Fail(Status::Unsupported("hase serve needs sched/cluster_file.h and sim/predictor_oracle.h")); };
#endif
  return c;
}

}  // namespace hase::cli
