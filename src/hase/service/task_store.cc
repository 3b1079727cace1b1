#include "hase/service/task_store.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "hase/service/task_json.h"

namespace hase::service {
namespace {

// 1: the first; 2: column `gpus` (a k-GPU task's GPUs, "ID:INDEX,ID:INDEX"; '' = one GPU),
// added to a version-1 journal by ALTER TABLE when it is opened.
constexpr int kSchemaVersion = 2;  // bump with a migration; never reuse

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS tasks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  client_key TEXT UNIQUE,
  spec TEXT NOT NULL,
  state TEXT NOT NULL,
  gpu INTEGER NOT NULL DEFAULT -1,
  node TEXT NOT NULL DEFAULT '',
  gpu_index INTEGER NOT NULL DEFAULT -1,
  submitted_s REAL NOT NULL,
  placed_s REAL NOT NULL DEFAULT 0,
  started_s REAL NOT NULL DEFAULT 0,
  ended_s REAL NOT NULL DEFAULT 0,
  predicted_start_s REAL NOT NULL DEFAULT 0,
  predicted_end_s REAL NOT NULL DEFAULT 0,
  predicted_isolated_ms REAL NOT NULL DEFAULT 0,
  exit_code INTEGER NOT NULL DEFAULT 0,
  reason TEXT NOT NULL DEFAULT '',
  attempts INTEGER NOT NULL DEFAULT 0,
  pid INTEGER NOT NULL DEFAULT 0,
  gpus TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS tasks_state ON tasks(state);
CREATE TABLE IF NOT EXISTS quarantine (
  id INTEGER PRIMARY KEY,
  spec TEXT NOT NULL,
  state TEXT NOT NULL,
  reason TEXT NOT NULL,
  moved_s REAL NOT NULL
);
)sql";

constexpr const char* kColumns =
    "id, spec, state, gpu, node, gpu_index, submitted_s, placed_s, started_s, ended_s, "
    "predicted_start_s, predicted_end_s, predicted_isolated_ms, exit_code, reason, attempts, pid, gpus";

// TaskRecord::gang and gang_indices as the `gpus` column: "ID:INDEX,ID:INDEX"; "" for none.
std::string GangText(const TaskRecord& r) {
  std::string out;
  for (size_t i = 0; i < r.gang.size(); ++i) {
    out += (i ? "," : "") + std::to_string(r.gang[i]) + ":" +
           std::to_string(i < r.gang_indices.size() ? r.gang_indices[i] : -1);
  }
  return out;
}

Status ParseGang(const std::string& text, TaskRecord& r) {
  r.gang.clear();
  r.gang_indices.clear();
  size_t at = 0;
  while (at < text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    int id = 0, index = 0;
    if (std::sscanf(text.substr(at, comma - at).c_str(), "%d:%d", &id, &index) != 2) {
      return Status::Parse("task " + std::to_string(r.id) + ": gpus '" + text + "' is not ID:INDEX,...", "task journal");
    }
    r.gang.push_back(id);
    r.gang_indices.push_back(index);
    at = comma + 1;
  }
  return Status::OK();
}

Status SqlError(sqlite3* db, const std::string& what) {
  return Status::IO(what + ": " + sqlite3_errmsg(db), "task journal",
                    "is the disk of --state full or failing? hase retries the write every pass");
}

// The error a write gets on a full disk (FailWritesForTest).
Status FullDiskForTest(const std::string& what) {
  return Status::IO(what + ": " + sqlite3_errstr(SQLITE_FULL), "task journal",
                    "is the disk of --state full or failing? hase retries the write every pass");
}

// After a failed statement or COMMIT: SQLite may or may not have rolled the transaction back
// (SQLITE_FULL, SQLITE_IOERR: https://sqlite.org/lang_transaction.html); one left open would
// make every later BEGIN fail ("cannot start a transaction within a transaction").
void RollbackIfOpen(sqlite3* db) {
  if (!sqlite3_get_autocommit(db)) sqlite3_exec(db, "ROLLBACK;", nullptr, nullptr, nullptr);
}

// Finalizes a statement on scope exit.
struct Stmt {
  sqlite3_stmt* s = nullptr;
  ~Stmt() { sqlite3_finalize(s); }
};

Status Exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string m = err ? err : "?";
    sqlite3_free(err);
    return Status::IO(std::string("SQL failed: ") + m, "task journal");
  }
  return Status::OK();
}

std::string Text(sqlite3_stmt* s, int col) {
  const unsigned char* t = sqlite3_column_text(s, col);
  return t ? reinterpret_cast<const char*>(t) : "";
}

Result<TaskRecord> ReadRow(sqlite3_stmt* s) {
  TaskRecord r;
  r.id = sqlite3_column_int64(s, 0);
  nlohmann::json spec = nlohmann::json::parse(Text(s, 1), nullptr, false);
  if (spec.is_discarded()) return Status::Parse("task " + std::to_string(r.id) + ": spec is not JSON", "task journal");
  HASE_ASSIGN_OR_RETURN(r.spec, TaskSpecFromJson(spec));
  HASE_ASSIGN_OR_RETURN(r.state, ParseTaskState(Text(s, 2)));
  r.gpu = sqlite3_column_int(s, 3);
  r.node = Text(s, 4);
  r.gpu_index = sqlite3_column_int(s, 5);
  r.submitted_s = sqlite3_column_double(s, 6);
  r.placed_s = sqlite3_column_double(s, 7);
  r.started_s = sqlite3_column_double(s, 8);
  r.ended_s = sqlite3_column_double(s, 9);
  r.predicted_start_s = sqlite3_column_double(s, 10);
  r.predicted_end_s = sqlite3_column_double(s, 11);
  r.predicted_isolated_ms = sqlite3_column_double(s, 12);
  r.exit_code = sqlite3_column_int(s, 13);
  r.reason = Text(s, 14);
  r.attempts = sqlite3_column_int(s, 15);
  r.pid = sqlite3_column_int64(s, 16);
  HASE_RETURN_IF_ERROR(ParseGang(Text(s, 17), r));
  return r;
}

}  // namespace

Result<std::unique_ptr<TaskStore>> TaskStore::Open(const std::string& dir, TaskStoreOptions options) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IO("cannot create state directory: " + ec.message(), dir);
  const std::string path = (std::filesystem::path(dir) / "hase.db").string();
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    Status st = Status::IO(std::string("cannot open: ") + (db ? sqlite3_errmsg(db) : "out of memory"), path);
    sqlite3_close(db);
    return st;
  }
  std::unique_ptr<TaskStore> store(new TaskStore(db, path, options.write_gate));
  sqlite3_busy_timeout(db, 5000);
  Status st = Exec(db, "PRAGMA journal_mode=WAL;");
  if (st.ok()) st = Exec(db, options.synchronous_full ? "PRAGMA synchronous=FULL;" : "PRAGMA synchronous=NORMAL;");
  if (st.ok()) st = Exec(db, kSchema);
  if (!st.ok()) {
    return Status::Parse("not a usable hase journal: " + st.message(), path,
                         "point --state at an empty directory or one written by hase serve");
  }
  {
    Stmt v;
    sqlite3_prepare_v2(db, "PRAGMA user_version;", -1, &v.s, nullptr);
    int version = sqlite3_step(v.s) == SQLITE_ROW ? sqlite3_column_int(v.s, 0) : 0;
    if (version == 1) {  // schema 2 adds `gpus` (CREATE TABLE IF NOT EXISTS kept the old table)
      HASE_RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE; ALTER TABLE tasks ADD COLUMN gpus TEXT NOT NULL DEFAULT ''; "
                                    "PRAGMA user_version=2; COMMIT;"));
    } else if (version == 0) {
      HASE_RETURN_IF_ERROR(Exec(db, ("PRAGMA user_version=" + std::to_string(kSchemaVersion) + ";").c_str()));
    } else if (version != kSchemaVersion) {
      return Status::Unsupported("journal schema version " + std::to_string(version) + " is not " +
                                     std::to_string(kSchemaVersion),
                                 path);
    }
  }
  return store;
}

TaskStore::~TaskStore() { sqlite3_close(db_); }

Result<TaskStore::Inserted> TaskStore::Insert(const TaskSpec& spec, double now_s) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!spec.key.empty()) {
    Stmt q;
    std::string sql = std::string("SELECT ") + kColumns + " FROM tasks WHERE client_key = ?1;";
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &q.s, nullptr) != SQLITE_OK) return SqlError(db_, "prepare");
    sqlite3_bind_text(q.s, 1, spec.key.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(q.s) == SQLITE_ROW) {
      HASE_ASSIGN_OR_RETURN(TaskRecord existing, ReadRow(q.s));
      return Inserted{std::move(existing), false};
    }
  }
  if (fail_writes_for_test_) return FullDiskForTest("insert task");
  HASE_RETURN_IF_ERROR(Gate());
  Stmt ins;
  const char* sql = "INSERT INTO tasks (client_key, spec, state, submitted_s) VALUES (?1, ?2, 'queued', ?3);";
  if (sqlite3_prepare_v2(db_, sql, -1, &ins.s, nullptr) != SQLITE_OK) return SqlError(db_, "prepare insert");
  if (spec.key.empty()) {
    sqlite3_bind_null(ins.s, 1);
  } else {
    sqlite3_bind_text(ins.s, 1, spec.key.c_str(), -1, SQLITE_TRANSIENT);
  }
  const std::string spec_json = TaskSpecToJson(spec).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  sqlite3_bind_text(ins.s, 2, spec_json.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_double(ins.s, 3, now_s);
  if (sqlite3_step(ins.s) != SQLITE_DONE) {
    Status st = SqlError(db_, "insert task");
    RollbackIfOpen(db_);
    return st;
  }
  TaskRecord r;
  r.id = sqlite3_last_insert_rowid(db_);
  r.spec = spec;
  r.state = TaskState::kQueued;
  r.submitted_s = now_s;
  return Inserted{std::move(r), true};
}

Status TaskStore::Erase(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fail_writes_for_test_) return FullDiskForTest("erase task " + std::to_string(id));
  HASE_RETURN_IF_ERROR(Gate());
  Stmt del;
  if (sqlite3_prepare_v2(db_, "DELETE FROM tasks WHERE id=?1;", -1, &del.s, nullptr) != SQLITE_OK) {
    return SqlError(db_, "prepare erase");
  }
  sqlite3_bind_int64(del.s, 1, id);
  if (sqlite3_step(del.s) != SQLITE_DONE) return SqlError(db_, "erase task " + std::to_string(id));
  return Status::OK();
}

Status TaskStore::Update(std::span<const TaskRecord> records) {
  if (records.empty()) return Status::OK();
  std::lock_guard<std::mutex> lock(mu_);
  if (fail_writes_for_test_) return FullDiskForTest("update task " + std::to_string(records.front().id));
  HASE_RETURN_IF_ERROR(Gate());
  HASE_RETURN_IF_ERROR(Exec(db_, "BEGIN IMMEDIATE;"));
  Stmt up;
  const char* sql =
      "UPDATE tasks SET state=?2, gpu=?3, node=?4, gpu_index=?5, placed_s=?6, started_s=?7, ended_s=?8, "
      "predicted_start_s=?9, predicted_end_s=?10, predicted_isolated_ms=?11, exit_code=?12, reason=?13, "
      "attempts=?14, pid=?15, gpus=?16 WHERE id=?1;";
  if (sqlite3_prepare_v2(db_, sql, -1, &up.s, nullptr) != SQLITE_OK) {
    Status st = SqlError(db_, "prepare update");
    (void)Exec(db_, "ROLLBACK;");
    return st;
  }
  for (const TaskRecord& r : records) {
    sqlite3_reset(up.s);
    sqlite3_bind_int64(up.s, 1, r.id);
    sqlite3_bind_text(up.s, 2, TaskStateName(r.state), -1, SQLITE_STATIC);
    sqlite3_bind_int(up.s, 3, r.gpu);
    sqlite3_bind_text(up.s, 4, r.node.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(up.s, 5, r.gpu_index);
    sqlite3_bind_double(up.s, 6, r.placed_s);
    sqlite3_bind_double(up.s, 7, r.started_s);
    sqlite3_bind_double(up.s, 8, r.ended_s);
    sqlite3_bind_double(up.s, 9, r.predicted_start_s);
    sqlite3_bind_double(up.s, 10, r.predicted_end_s);
    sqlite3_bind_double(up.s, 11, r.predicted_isolated_ms);
    sqlite3_bind_int(up.s, 12, r.exit_code);
    sqlite3_bind_text(up.s, 13, r.reason.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(up.s, 14, r.attempts);
    sqlite3_bind_int64(up.s, 15, r.pid);
    const std::string gang = GangText(r);
    sqlite3_bind_text(up.s, 16, gang.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(up.s) != SQLITE_DONE) {
      Status st = SqlError(db_, "update task " + std::to_string(r.id));
      RollbackIfOpen(db_);
      return st;
    }
  }
  if (sqlite3_exec(db_, "COMMIT;", nullptr, nullptr, nullptr) != SQLITE_OK) {
    Status st = SqlError(db_, "commit");
    RollbackIfOpen(db_);
    return st;
  }
  return Status::OK();
}

Status TaskStore::Probe() {
  std::lock_guard<std::mutex> lock(mu_);
  if (fail_writes_for_test_) return FullDiskForTest("probe");
  HASE_RETURN_IF_ERROR(Gate());
  Status st = Exec(db_, ("BEGIN IMMEDIATE; PRAGMA user_version = " + std::to_string(kSchemaVersion) + "; COMMIT;").c_str());
  if (!st.ok()) RollbackIfOpen(db_);
  return st;
}

Status TaskStore::SetMaxPageCountForTest(int64_t pages) {
  std::lock_guard<std::mutex> lock(mu_);
  return Exec(db_, ("PRAGMA max_page_count=" + std::to_string(pages) + ";").c_str());
}

void TaskStore::FailWritesForTest(bool fail) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_writes_for_test_ = fail;
}

Result<std::vector<TaskRecord>> TaskStore::Load(const char* where_clause) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt q;
  std::string sql = std::string("SELECT ") + kColumns + " FROM tasks " + where_clause + " ORDER BY id;";
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &q.s, nullptr) != SQLITE_OK) return SqlError(db_, "prepare load");
  std::vector<TaskRecord> out;
  std::vector<Quarantined> bad;
  int rc;
  while ((rc = sqlite3_step(q.s)) == SQLITE_ROW) {
    Result<TaskRecord> r = ReadRow(q.s);
    if (r.ok()) {
      out.push_back(std::move(*r));
    } else {
      bad.push_back({sqlite3_column_int64(q.s, 0), r.status().ToString()});
    }
  }
  if (rc != SQLITE_DONE) return SqlError(db_, "load tasks");
  if (bad.empty()) return out;
  HASE_RETURN_IF_ERROR(Exec(db_, "BEGIN IMMEDIATE;"));
  for (const Quarantined& b : bad) {
    Stmt mv;
    const char* sql =
        "INSERT OR REPLACE INTO quarantine (id, spec, state, reason, moved_s) "
        "SELECT id, spec, state, ?2, strftime('%s','now') FROM tasks WHERE id = ?1;";
    Stmt del;
    if (sqlite3_prepare_v2(db_, sql, -1, &mv.s, nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db_, "DELETE FROM tasks WHERE id = ?1;", -1, &del.s, nullptr) !=
            SQLITE_OK) {
      RollbackIfOpen(db_);
      return SqlError(db_, "prepare quarantine");
    }
    sqlite3_bind_int64(mv.s, 1, b.id);
    sqlite3_bind_text(mv.s, 2, b.reason.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(del.s, 1, b.id);
    if (sqlite3_step(mv.s) != SQLITE_DONE || sqlite3_step(del.s) != SQLITE_DONE) {
      RollbackIfOpen(db_);
      return SqlError(db_, "quarantine task " + std::to_string(b.id));
    }
  }
  if (Status st = Exec(db_, "COMMIT;"); !st.ok()) {
    RollbackIfOpen(db_);
    return st;
  }
  quarantined_.insert(quarantined_.end(), bad.begin(), bad.end());
  return out;
}

std::vector<TaskStore::Quarantined> TaskStore::quarantined() const {
  std::lock_guard<std::mutex> lock(mu_);
  return quarantined_;
}

int64_t TaskStore::quarantined_total() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt q;
  if (sqlite3_prepare_v2(db_, "SELECT COUNT(*) FROM quarantine;", -1, &q.s, nullptr) != SQLITE_OK ||
      sqlite3_step(q.s) != SQLITE_ROW) {
    return static_cast<int64_t>(quarantined_.size());
  }
  return sqlite3_column_int64(q.s, 0);
}

Result<std::vector<TaskRecord>> TaskStore::LoadUnfinished() {
  return Load("WHERE state IN ('queued','bound','running')");
}

Result<std::vector<TaskRecord>> TaskStore::LoadAll() { return Load(""); }

}  // namespace hase::service
