// The daemon ↔ Backend seam (backend.h) with a scripted backend: what the daemon launches
// (node, GPU type, attempt), how each kind of end changes the task, node health callbacks, and
// recovery after a restart (never launched → launched; ended → recorded; running → followed).
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "hase/service/backend.h"
#include "hase/service/daemon.h"
#include "service_fixture.h"
#include "testing.h"

namespace hase::service {
namespace {

class FakeBackend final : public Backend {
 public:
  const char* Name() const override { return "fake"; }
  bool RunsOn(const sched::Gpu&) const override { return true; }
  bool ReportsStarts() const override { return reports_starts; }
  Status Start(EndCallback on_end, NodeCallback on_node) override {
    std::lock_guard<std::mutex> l(mu);
    end = std::move(on_end);
    node = std::move(on_node);
    return Status::OK();
  }
  void SetStartCallback(StartCallback on_start) override { start = std::move(on_start); }
  void Stop() override {}
  Result<int64_t> Launch(const LaunchRequest& q) override {
    std::lock_guard<std::mutex> l(mu);
    launches.push_back(q);
    return 1000 + static_cast<int64_t>(launches.size());
  }
  std::vector<Result<Recovered>> Recover(const std::vector<LaunchRequest>& qs,
                                         const std::vector<int64_t>& handles) override {
    std::lock_guard<std::mutex> l(mu);
    std::vector<Result<Recovered>> out;
    for (size_t i = 0; i < qs.size(); ++i) {
      recovered_handles.push_back(handles[i]);
      auto it = script.find(qs[i].task_id);
      if (it == script.end()) {
        out.push_back(Status::NotFound("never launched"));
      } else {
        out.push_back(it->second);
      }
    }
    return out;
  }
  void Cancel(int64_t task_id, int attempt) override {
    std::lock_guard<std::mutex> l(mu);
    cancels.emplace_back(task_id, attempt);
  }

  std::mutex mu;
  EndCallback end;
  NodeCallback node;
  StartCallback start;
  bool reports_starts = false;  // set before the daemon starts
  std::vector<LaunchRequest> launches;
  std::vector<std::pair<int64_t, int>> cancels;
  std::map<int64_t, Recovered> script;  // Recover's answer per task id (absent: NotFound)
  std::vector<int64_t> recovered_handles;
};

TaskSpec Command(const std::string& key) {
  TaskSpec s;
  s.model = "resnet50";
  s.num_batches = 10;
  s.key = key;
  s.command = "run " + key;
  return s;
}

std::unique_ptr<Daemon> Make(const std::string& dir, FakeBackend*& fake, bool reports_starts = false) {
  DaemonOptions o;
  o.state_dir = dir;
  o.policy = "rr";
  o.tick_s = 0.02;
  o.store.synchronous_full = false;
  auto b = std::make_unique<FakeBackend>();
  fake = b.get();
  fake->reports_starts = reports_starts;
  auto d = Daemon::Create(hase::testing::SmallCluster(), hase::testing::SmallOracle(), o, nullptr, std::move(b));
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE((*d)->Start().ok());
  return std::move(*d);
}

// Bounded wait (2 s) for `pred`.
template <typename F>
bool WaitFor(F pred) {
  for (int i = 0; i < 400; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pred();
}

TEST(BackendSeam, LaunchesEndsNodesAndRecovery) {
  const std::string dir = hase::testing::FreshDir("seam");
  FakeBackend* fake = nullptr;
  auto d = Make(dir, fake);
  ASSERT_EQ(d->backend_name(), "fake");
  std::vector<int64_t> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(d->Submit(Command("t" + std::to_string(i)))->record.id);
  ASSERT_TRUE(WaitFor([&] {
    for (int64_t id : ids) {
      if (d->Get(id)->pid == 0) return false;
    }
    return true;
  }));
  {
    std::lock_guard<std::mutex> l(fake->mu);
    ASSERT_EQ(fake->launches.size(), 4u);
    for (const LaunchRequest& q : fake->launches) {
      const TaskRecord r = *d->Get(q.task_id);
      EXPECT_EQ(q.attempt, 1);
      EXPECT_EQ(q.node, r.node);
      EXPECT_EQ(q.gpu_index, r.gpu_index);
      EXPECT_EQ(q.gpu_type, d->cluster().types[d->cluster().gpus[r.gpu].type].name);
      EXPECT_EQ(q.command, r.spec.command);
      EXPECT_GT(r.pid, 1000);  // the handle Launch returned is journalled
    }
  }
  // Each kind of end.
  fake->end(ids[0], 1, TaskEnd{TaskEnd::Kind::kExited, 0, "", 1.8e9});
  fake->end(ids[1], 1, TaskEnd{TaskEnd::Kind::kExited, 3, "Slurm job 7 FAILED (NonZeroExitCode)", 1.8e9});
  fake->end(ids[2], 1, TaskEnd{TaskEnd::Kind::kCancelled, 143, "Slurm job 8 CANCELLED, cancelled outside hase", 1.8e9});
  fake->end(ids[3], 1, TaskEnd{TaskEnd::Kind::kLost, -1, "Slurm job 9 NODE_FAIL", 1.8e9});
  EXPECT_EQ(d->Get(ids[0])->state, TaskState::kSucceeded);
  EXPECT_EQ(d->Get(ids[1])->state, TaskState::kFailed);
  EXPECT_EQ(d->Get(ids[1])->exit_code, 3);
  EXPECT_EQ(d->Get(ids[1])->reason, "Slurm job 7 FAILED (NonZeroExitCode)");
  EXPECT_EQ(d->Get(ids[2])->state, TaskState::kCancelled);
  // Lost: re-queued, then placed and launched again as attempt 2.
  ASSERT_TRUE(WaitFor([&] { return d->Get(ids[3])->attempts == 2 && d->Get(ids[3])->pid > 0; }));
  {
    std::lock_guard<std::mutex> l(fake->mu);
    EXPECT_EQ(fake->launches.back().task_id, ids[3]);
    EXPECT_EQ(fake->launches.back().attempt, 2);
  }
  // A stale end (the old attempt) changes nothing.
  fake->end(ids[3], 1, TaskEnd{TaskEnd::Kind::kExited, 0, "", 1.8e9});
  EXPECT_EQ(d->Get(ids[3])->state, TaskState::kRunning);
  // Cancel through the daemon reaches the backend with the attempt.
  ASSERT_TRUE(d->Cancel(ids[3]).ok());
  {
    std::lock_guard<std::mutex> l(fake->mu);
    ASSERT_FALSE(fake->cancels.empty());
    EXPECT_EQ(fake->cancels.back(), std::make_pair(ids[3], 2));
  }
  // Node health from the backend.
  fake->node("b", NodeCondition::kDown, "Slurm node state DOWN");
  for (const GpuView& g : d->Gpus()) EXPECT_EQ(g.failed, g.node == "b") << g.node;
  fake->node("b", NodeCondition::kUsable, "Slurm node state IDLE");
  for (const GpuView& g : d->Gpus()) EXPECT_FALSE(g.failed) << g.node;

  // Restart with two tasks running: one the backend never launched, one that ended meanwhile.
  const int64_t x = d->Submit(Command("x"))->record.id;
  const int64_t y = d->Submit(Command("y"))->record.id;
  ASSERT_TRUE(WaitFor([&] { return d->Get(x)->pid > 0 && d->Get(y)->pid > 0; }));
  const int64_t y_handle = d->Get(y)->pid;
  d.reset();
  DaemonOptions o;
  o.state_dir = dir;
  o.policy = "rr";
  o.tick_s = 0.02;
  o.store.synchronous_full = false;
  auto b = std::make_unique<FakeBackend>();
  FakeBackend* fake2 = b.get();
  Backend::Recovered ended;
  ended.handle = y_handle;
  ended.end = TaskEnd{TaskEnd::Kind::kExited, 0, "", 0};
  fake2->script[y] = ended;
  auto d2 = Daemon::Create(hase::testing::SmallCluster(), hase::testing::SmallOracle(), o, nullptr, std::move(b));
  ASSERT_TRUE(d2.ok());
  ASSERT_TRUE((*d2)->Start().ok());
  EXPECT_EQ((*d2)->Get(y)->state, TaskState::kSucceeded);
  EXPECT_GT((*d2)->Get(y)->ended_s, 0);  // the daemon's own time when the backend has none
  ASSERT_TRUE(WaitFor([&] { return (*d2)->Get(x)->pid > 0; }));
  {
    std::lock_guard<std::mutex> l(fake2->mu);
    ASSERT_EQ(fake2->launches.size(), 1u);  // x again (never launched), y not
    EXPECT_EQ(fake2->launches[0].task_id, x);
    EXPECT_EQ(fake2->launches[0].attempt, 1);
    ASSERT_EQ(fake2->recovered_handles.size(), 2u);  // journalled handles handed to Recover
  }
  d2->reset();
  std::filesystem::remove_all(dir);
}

// Slurm gives another index than hase chose (GRES names a type, not an index): the start the
// backend reads back moves the task there, in the daemon's state, its views and the journal.
TEST(BackendSeam, AStartReadBackMovesTheTaskToTheGpuItRunsOn) {
  const std::string dir = hase::testing::FreshDir("seam_start");
  FakeBackend* fake = nullptr;
  auto d = Make(dir, fake);
  const int64_t id = d->Submit(Command("s"))->record.id;
  ASSERT_TRUE(WaitFor([&] { return d->Get(id)->pid > 0; }));
  TaskRecord r = *d->Get(id);
  ASSERT_EQ(r.node, "a");  // rr: the first GPU
  const int other_index = 1 - r.gpu_index;
  const int other_gpu = r.gpu == 0 ? 1 : 0;
  // A node or type hase does not have there: kept, not moved.
  fake->start(id, 1, TaskStart{"b", 0, 0});
  EXPECT_EQ(d->Get(id)->gpu, r.gpu);
  fake->start(id, 1, TaskStart{"a", other_index, 1.7e9 + 5});
  r = *d->Get(id);
  EXPECT_EQ(r.gpu, other_gpu);
  EXPECT_EQ(r.gpu_index, other_index);
  EXPECT_DOUBLE_EQ(r.started_s, 1.7e9 + 5);
  for (const GpuView& g : d->Gpus()) EXPECT_EQ(g.running, g.id == other_gpu ? 1 : 0) << g.label;
  auto rows = d->StoreForTest().LoadAll();
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->at(0).gpu_index, other_index);
  EXPECT_DOUBLE_EQ(rows->at(0).started_s, 1.7e9 + 5);
  // A stale start (another attempt) changes nothing.
  fake->start(id, 7, TaskStart{"a", r.gpu_index == 0 ? 1 : 0, 1.7e9 + 9});
  EXPECT_EQ(d->Get(id)->gpu, other_gpu);
  // The end carries the backend's own times (Slurm's EndTime; it ended while hase was away).
  fake->end(id, 1, TaskEnd{TaskEnd::Kind::kExited, 0, "", 1.7e9 + 65});
  r = *d->Get(id);
  EXPECT_EQ(r.state, TaskState::kSucceeded);
  EXPECT_DOUBLE_EQ(r.ended_s, 1.7e9 + 65);
  EXPECT_DOUBLE_EQ(r.ended_s - r.started_s, 60);
  // An end that brings its start (never reported while running) is applied first.
  const int64_t id2 = d->Submit(Command("s2"))->record.id;
  ASSERT_TRUE(WaitFor([&] { return d->Get(id2)->pid > 0; }));
  const TaskRecord r2 = *d->Get(id2);
  TaskEnd e{TaskEnd::Kind::kExited, 0, "", 1.7e9 + 100};
  e.start = TaskStart{r2.node, r2.gpu_index, 1.7e9 + 90};
  fake->end(id2, 1, e);
  EXPECT_DOUBLE_EQ(d->Get(id2)->started_s, 1.7e9 + 90);
  EXPECT_DOUBLE_EQ(d->Get(id2)->ended_s, 1.7e9 + 100);
  d.reset();
  std::filesystem::remove_all(dir);
}

TEST(BackendSeam, DrainLetsRunningTasksFinishAndPlacesNothingNew) {
  const std::string dir = hase::testing::FreshDir("seam_drain");
  FakeBackend* fake = nullptr;
  auto d = Make(dir, fake);
  std::vector<int64_t> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(d->Submit(Command("d" + std::to_string(i)))->record.id);
  ASSERT_TRUE(WaitFor([&] { return d->Get(ids[0])->pid > 0 && d->Get(ids[1])->pid > 0 && d->Get(ids[2])->pid > 0; }));
  std::vector<int64_t> on_a;
  for (int64_t id : ids) {
    if (d->Get(id)->node == "a") on_a.push_back(id);
  }
  ASSERT_FALSE(on_a.empty());
  // Slurm DRAIN (the backend's node callback): running tasks stay, nothing is cancelled.
  fake->node("a", NodeCondition::kDrained, "Slurm node state MIXED+DRAIN (maintenance)");
  for (int64_t id : on_a) EXPECT_EQ(d->Get(id)->state, TaskState::kRunning);
  {
    std::lock_guard<std::mutex> l(fake->mu);
    EXPECT_TRUE(fake->cancels.empty());
  }
  for (const GpuView& g : d->Gpus()) {
    EXPECT_EQ(g.drained, g.node == "a") << g.label;
    EXPECT_FALSE(g.failed) << g.label;
    if (g.node == "a") {
      EXPECT_NE(g.health_reason.find("MIXED+DRAIN"), std::string::npos) << g.health_reason;
    }
  }
  EXPECT_NE(d->MetricsText().find("hase_gpus{health=\"drained\"} 2"), std::string::npos);
  // New work goes only to b (2 slots, one taken): one runs there, the other waits (queued,
  // or bound to b's local queue by rr), never on a.
  const int64_t n1 = d->Submit(Command("n1"))->record.id;
  const int64_t n2 = d->Submit(Command("n2"))->record.id;
  ASSERT_TRUE(WaitFor([&] { return d->Get(n1)->pid > 0 || d->Get(n2)->pid > 0; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // a few passes
  int running = 0;
  for (int64_t id : {n1, n2}) {
    const TaskRecord r = *d->Get(id);
    running += r.state == TaskState::kRunning;
    if (r.gpu >= 0) {
      EXPECT_EQ(r.node, "b") << TaskStateName(r.state);
    }
  }
  EXPECT_EQ(running, 1);
  // The drained node's tasks finish normally; still nothing starts there.
  for (int64_t id : on_a) fake->end(id, 1, TaskEnd{TaskEnd::Kind::kExited, 0, "", 1.8e9});
  for (int64_t id : on_a) EXPECT_EQ(d->Get(id)->state, TaskState::kSucceeded);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (int64_t id : {n1, n2}) EXPECT_NE(d->Get(id)->node, "a");
  // Resume: used again.
  fake->node("a", NodeCondition::kUsable, "Slurm node state IDLE");
  for (const GpuView& g : d->Gpus()) EXPECT_FALSE(g.drained || g.failed) << g.label;
  const int64_t n3 = d->Submit(Command("n3"))->record.id;
  ASSERT_TRUE(WaitFor([&] { return d->Get(n3)->pid > 0; }));
  ASSERT_EQ(d->Get(n3)->node, "a");
  // Drain with requeue: what runs is stopped and placed anew (attempt 2).
  const TaskRecord victim = *d->Get(n3);
  Result<int> n = d->DrainGpu(victim.gpu, "swap", /*requeue=*/true);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1);
  {
    std::lock_guard<std::mutex> l(fake->mu);
    ASSERT_FALSE(fake->cancels.empty());
    EXPECT_EQ(fake->cancels.back(), std::make_pair(victim.id, 1));
  }
  ASSERT_TRUE(WaitFor([&] { return d->Get(victim.id)->attempts == 2 && d->Get(victim.id)->pid > 0; }));
  EXPECT_NE(d->Get(victim.id)->gpu, victim.gpu);
  EXPECT_TRUE(d->DrainGpu(99, "", false).status().IsNotFound());
  EXPECT_TRUE(d->DrainNode("zz", "", false).status().IsNotFound());
  d.reset();
  std::filesystem::remove_all(dir);
}

// A launch the backend has not seen start (a Slurm job still PENDING) would wait for the drain
// to end: draining its GPU cancels it and places the task anew; a started one runs on.
TEST(BackendSeam, DrainRePlacesALaunchThatHasNotStarted) {
  const std::string dir = hase::testing::FreshDir("seam_pending");
  FakeBackend* fake = nullptr;
  auto d = Make(dir, fake, /*reports_starts=*/true);
  const int64_t a = d->Submit(Command("p0"))->record.id;
  const int64_t b = d->Submit(Command("p1"))->record.id;
  ASSERT_TRUE(WaitFor([&] { return d->Get(a)->pid > 0 && d->Get(b)->pid > 0; }));
  ASSERT_EQ(d->Get(a)->node, "a");
  ASSERT_EQ(d->Get(b)->node, "a");
  EXPECT_EQ(d->Get(b)->reason, "launched as fake job " + std::to_string(d->Get(b)->pid) + "; not started yet");
  fake->start(a, 1, TaskStart{"a", d->Get(a)->gpu_index, 1.7e9});  // a runs; b pends
  EXPECT_EQ(d->Get(a)->reason, "");
  ASSERT_TRUE(d->DrainNode("a", "maintenance", false).ok());
  EXPECT_EQ(d->Get(a)->state, TaskState::kRunning);
  EXPECT_EQ(d->Get(a)->attempts, 1);
  ASSERT_TRUE(WaitFor([&] { return d->Get(b)->attempts == 2 && d->Get(b)->pid > 0; }));
  EXPECT_EQ(d->Get(b)->node, "b");
  // An end before any start was reported: the launch note does not outlive it.
  ASSERT_TRUE(WaitFor([&] { return !d->Get(b)->reason.empty(); }));
  fake->end(b, 2, TaskEnd{TaskEnd::Kind::kExited, 0, "", 1.7e9 + 3});
  EXPECT_EQ(d->Get(b)->state, TaskState::kSucceeded);
  EXPECT_EQ(d->Get(b)->reason, "");
  std::lock_guard<std::mutex> l(fake->mu);
  ASSERT_EQ(fake->cancels.size(), 1u);
  EXPECT_EQ(fake->cancels[0], std::make_pair(b, 1));
}

// DOWN: the node callback re-queues (and cancels) each task once; the NODE_FAIL end that
// follows finds it re-queued and changes nothing (attempts + 1, not + 2).
TEST(BackendSeam, ANodeDownRequeuesEachTaskOnce) {
  const std::string dir = hase::testing::FreshDir("seam_down");
  FakeBackend* fake = nullptr;
  auto d = Make(dir, fake);
  std::vector<int64_t> ids;
  for (int i = 0; i < 2; ++i) ids.push_back(d->Submit(Command("x" + std::to_string(i)))->record.id);
  ASSERT_TRUE(WaitFor([&] { return d->Get(ids[0])->pid > 0 && d->Get(ids[1])->pid > 0; }));
  std::vector<int64_t> on_a;
  for (int64_t id : ids) {
    if (d->Get(id)->node == "a") on_a.push_back(id);
  }
  ASSERT_FALSE(on_a.empty());
  fake->node("a", NodeCondition::kDown, "Slurm node state DOWN+NOT_RESPONDING");
  for (int64_t id : on_a) fake->end(id, 1, TaskEnd{TaskEnd::Kind::kLost, -1, "Slurm job NODE_FAIL", 1.8e9});
  for (int64_t id : on_a) {
    ASSERT_TRUE(WaitFor([&] { return d->Get(id)->attempts == 2 && d->Get(id)->pid > 0; }));
    EXPECT_EQ(d->Get(id)->node, "b");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (int64_t id : on_a) EXPECT_EQ(d->Get(id)->attempts, 2);
  std::lock_guard<std::mutex> l(fake->mu);
  for (int64_t id : on_a) {
    int launches = 0;
    for (const LaunchRequest& q : fake->launches) launches += q.task_id == id;
    EXPECT_EQ(launches, 2) << "task " << id;
  }
  for (const GpuView& g : d->Gpus()) EXPECT_EQ(g.failed, g.node == "a") << g.label;
}

}  // namespace
}  // namespace hase::service
