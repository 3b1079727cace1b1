#include "hase/service/task_store.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "hase/service/task_json.h"
#include "service_fixture.h"

namespace hase::service {
namespace {

TEST(TaskStore, InsertDedupeUpdateReopen) {
  const std::string dir = hase::testing::FreshDir("store");
  TaskSpec spec;
  spec.key = "client-1";
  spec.model = "resnet50";
  spec.batch_size = 8;
  spec.num_batches = 100;
  {
    auto store = TaskStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto a = (*store)->Insert(spec, 10.0);
    ASSERT_TRUE(a.ok());
    EXPECT_TRUE(a->created);
    EXPECT_EQ(a->record.id, 1);
    auto again = (*store)->Insert(spec, 11.0);
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(again->created);
    EXPECT_EQ(again->record.id, 1);
    EXPECT_DOUBLE_EQ(again->record.submitted_s, 10.0);
    TaskSpec other = spec;
    other.key = "";
    auto b = (*store)->Insert(other, 12.0);
    auto c = (*store)->Insert(other, 13.0);  // no key: two tasks
    ASSERT_TRUE(b.ok() && c.ok());
    EXPECT_EQ(c->record.id, 3);
    TaskRecord r = a->record;
    r.state = TaskState::kRunning;
    r.gpu = 2;
    r.node = "b";
    r.gpu_index = 0;
    r.started_s = 20;
    r.predicted_end_s = 21.5;
    r.attempts = 1;
    ASSERT_TRUE((*store)->Update(r).ok());
    TaskRecord done = c->record;
    done.state = TaskState::kSucceeded;
    ASSERT_TRUE((*store)->Update(done).ok());
  }
  auto store = TaskStore::Open(dir);
  ASSERT_TRUE(store.ok());
  auto unfinished = (*store)->LoadUnfinished();
  ASSERT_TRUE(unfinished.ok());
  ASSERT_EQ(unfinished->size(), 2u);
  const TaskRecord& r = (*unfinished)[0];
  EXPECT_EQ(r.state, TaskState::kRunning);
  EXPECT_EQ(r.node, "b");
  EXPECT_EQ(r.gpu, 2);
  EXPECT_DOUBLE_EQ(r.predicted_end_s, 21.5);
  EXPECT_EQ(r.spec.key, "client-1");
  EXPECT_EQ(r.spec.num_batches, 100);
  EXPECT_EQ((*unfinished)[1].id, 2);
  std::filesystem::remove_all(dir);
}

// Issue #15 (6c): a full disk. SQLite's max_page_count makes the file "full" for real
// (SQLITE_FULL); once there is room again inserts and updates work (no transaction left open).
TEST(TaskStore, FullDatabaseIsAnIOErrorAndRecovers) {
  const std::string dir = hase::testing::FreshDir("store_full");
  auto store = TaskStore::Open(dir);
  ASSERT_TRUE(store.ok());
  TaskSpec spec;
  spec.model = "resnet50";
  spec.command = std::string(3000, 'x');  // rows of ~3 KB: the file grows every insert or two
  auto first = (*store)->Insert(spec, 1.0);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE((*store)->SetMaxPageCountForTest(1).ok());  // clamped to the current size
  Status failed;
  int accepted = 0;
  for (int i = 0; i < 100 && failed.ok(); ++i) {
    auto r = (*store)->Insert(spec, 2.0 + i);
    if (r.ok()) ++accepted; else failed = r.status();
  }
  ASSERT_FALSE(failed.ok()) << "never full after " << accepted << " inserts";
  EXPECT_TRUE(failed.IsIO());
  EXPECT_NE(failed.message().find("database or disk is full"), std::string::npos) << failed.ToString();
  ASSERT_TRUE((*store)->SetMaxPageCountForTest(1 << 20).ok());
  auto after = (*store)->Insert(spec, 500.0);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  TaskRecord r = after->record;
  r.state = TaskState::kRunning;
  EXPECT_TRUE((*store)->Update(r).ok());
  auto rows = (*store)->LoadAll();
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), static_cast<size_t>(accepted + 2));
  EXPECT_EQ(rows->back().state, TaskState::kRunning);
  std::filesystem::remove_all(dir);
}

TEST(TaskStore, NotAJournalIsAnError) {
  const std::string dir = hase::testing::FreshDir("badstore");
  {
    std::FILE* f = std::fopen((dir + "/hase.db").c_str(), "wb");
    std::fputs("this is not sqlite, just text padding the header........................", f);
    std::fclose(f);
  }
  auto store = TaskStore::Open(dir);
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(store.status().IsParse()) << store.status().ToString();
  std::filesystem::remove_all(dir);
}

TEST(TaskJson, SpecValidationAndSamples) {
  using nlohmann::json;
  auto s = TaskSpecFromJson(json{{"model", "resnet50"}, {"batch_size", 8}, {"samples", 801}});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->num_batches, 101);  // ceil(801 / 8)
  EXPECT_TRUE(TaskSpecFromJson(json{{"batch_size", 8}}).status().IsInvalidArgument());
  EXPECT_TRUE(TaskSpecFromJson(json{{"model", "m"}, {"batch_size", 0}}).status().IsInvalidArgument());
  EXPECT_TRUE(TaskSpecFromJson(json{{"model", "m"}, {"samples", 5}, {"num_batches", 2}}).status().IsInvalidArgument());
  EXPECT_TRUE(TaskSpecFromJson(json{{"model", 3}}).status().IsInvalidArgument());
  EXPECT_TRUE(TaskSpecFromJson(json::array()).status().IsInvalidArgument());
  // Typed: a string where an integer is required is refused (Kubernetes annotations, which are
  // strings, are converted by the extender before they get here).
  auto str = TaskSpecFromJson(json{{"model", "m"}, {"batch_size", "16"}});
  ASSERT_FALSE(str.ok());
  EXPECT_EQ(str.status().ToString(),
            "invalid argument: task field 'batch_size': must be an integer (a JSON number), not a string (\"16\") "
            "(see POST /v1/tasks in docs/service.md)");
}

// Issue #15 (1): values that overflowed were acknowledged with 201 and journalled, and the
// daemon then refused to start. Every numeric field has the workload files' range
// (sched/task_limits.h); unknown fields and over-long strings are refused, naming the field.
TEST(TaskJson, OutOfRangeUnknownAndOverlongFieldsAreRefused) {
  using nlohmann::json;
  const json bad[] = {
      {{"model", "resnet18"}, {"batch_size", 2}, {"samples", 9223372036854775807LL}},
      {{"model", "resnet18"}, {"priority", 2147483648LL}},
      {{"model", "resnet18"}, {"gpus", 4294967296LL}},
      {{"model", "resnet18"}, {"batch_size", int64_t{1} << 62}},
      {{"model", "resnet18"}, {"input_size", 2147483648LL}},
      {{"model", "resnet18"}, {"num_batches", 18446744073709551615ULL}},
      {{"model", "resnet18"}, {"memory_mib", 1e300}},
      {{"model", "resnet18"}, {"batch_size", "99999999999999999999"}},
  };
  for (const json& j : bad) {
    auto r = TaskSpecFromJson(j);
    ASSERT_FALSE(r.ok()) << j.dump();
    EXPECT_TRUE(r.status().IsInvalidArgument()) << j.dump();
    EXPECT_NE(r.status().ToString().find("task field '"), std::string::npos) << r.status().ToString();
  }
  auto typo = TaskSpecFromJson(json{{"model", "resnet18"}, {"num_batchs", 5}});
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().ToString().find("num_batchs"), std::string::npos);
  EXPECT_NE(typo.status().ToString().find("num_batches"), std::string::npos);  // the hint
  // Issue #11: a task may name the runtime it runs under; aliases resolve, unknown names are 400.
  auto rt = TaskSpecFromJson(json{{"model", "resnet18"}, {"runtime", "torch"}});
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->runtime, "pytorch-eager");
  EXPECT_EQ(TaskSpecToJson(*rt)["runtime"], "pytorch-eager");
  EXPECT_EQ(TaskRecord{.spec = *rt}.ToSchedTask().runtime, "pytorch-eager");
  auto rt_bad = TaskSpecFromJson(json{{"model", "resnet18"}, {"runtime", "onnx"}});
  ASSERT_FALSE(rt_bad.ok());
  EXPECT_NE(rt_bad.status().ToString().find("task field 'runtime'"), std::string::npos);
  EXPECT_TRUE(TaskSpecToJson(TaskSpec{.model = "m"})["runtime"].is_null());
  auto longer = TaskSpecFromJson(json{{"model", std::string(5000, 'm')}});
  ASSERT_FALSE(longer.ok());
  EXPECT_NE(longer.status().ToString().find("longer than 4096"), std::string::npos);
  // Issue #15 (7): the daemon opens the model, so it is a name from its model directory.
  for (const char* path : {"../../../../etc/passwd", "/dev/zero.onnx", "models/x.onnx", ".hidden",
                           "a\\b", "resnet50;rm"}) {
    auto p = TaskSpecFromJson(json{{"model", path}});
    ASSERT_FALSE(p.ok()) << path;
    EXPECT_NE(p.status().ToString().find("task field 'model'"), std::string::npos) << path;
  }
  EXPECT_TRUE(TaskSpecFromJson(json{{"model", "yolov8n"}}).ok());
  EXPECT_TRUE(TaskSpecFromJson(json{{"model", "my-model_v2.1"}}).ok());
  // The largest values in range are accepted.
  auto edge = TaskSpecFromJson(json{{"model", "resnet18"}, {"batch_size", 1 << 20},
                                    {"num_batches", 1000000000000LL}, {"priority", -1000000}});
  EXPECT_TRUE(edge.ok()) << edge.status().ToString();
}

// Issue #15 (1): a journal row that fails validation (older version, hand edit) made the
// daemon refuse to start, stranding every task. It is moved to table 'quarantine' with the
// reason, the other tasks load, and the daemon reports it on /healthz.
TEST(TaskStore, InvalidRowIsQuarantinedAndTheRestLoads) {
  const std::string dir = hase::testing::FreshDir("quarantine");
  int64_t bad_id = 0;
  {
    auto store = TaskStore::Open(dir);
    ASSERT_TRUE(store.ok());
    TaskSpec good;
    good.model = "resnet50";
    ASSERT_TRUE((*store)->Insert(good, 1).ok());
    auto b = (*store)->Insert(good, 2);
    ASSERT_TRUE(b.ok());
    bad_id = b->record.id;
  }
  // What an older version could write: a num_batches that overflowed to 0.
  ASSERT_TRUE(hase::testing::OverwriteJournalSpec(dir, bad_id, R"({"model":"resnet50","num_batches":0})"));
  auto store = TaskStore::Open(dir);
  ASSERT_TRUE(store.ok());
  auto all = (*store)->LoadAll();
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 1u);
  const auto q = (*store)->quarantined();
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].id, bad_id);
  EXPECT_NE(q[0].reason.find("num_batches"), std::string::npos) << q[0].reason;
  EXPECT_EQ((*store)->quarantined_total(), 1);
  // Loaded again (a second restart): nothing more to move, the row stays in quarantine.
  ASSERT_TRUE((*store)->LoadAll().ok());
  EXPECT_EQ((*store)->quarantined_total(), 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hase::service
