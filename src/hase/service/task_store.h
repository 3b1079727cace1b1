// TaskStore: the daemon's durable journal of tasks and placements, in SQLite (WAL mode).
//
// One table, `tasks`: one row per accepted task, updated in place on every state change
// (placement, start, end, re-queue, cancel). A task is *accepted* when Insert() returns: its row
// is committed, so after `kill -9` at any later moment it is found again by LoadUnfinished().
// The optional client key is UNIQUE: a retried submit returns the existing row instead of
// inserting a second one (no duplicates even when the client never saw the first answer).
//
// Durability: journal_mode=WAL; synchronous=FULL by default (each commit fsyncs the WAL, so
// power loss loses nothing accepted); synchronous=NORMAL survives process crashes (kill -9)
// but may lose the last commits on power loss (https://sqlite.org/pragma.html#pragma_synchronous).
//
// Thread-safety: one connection behind a mutex; all methods may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/service/task_record.h"

struct sqlite3;

namespace hase::service {

struct TaskStoreOptions {
  // FULL: fsync per commit (power-safe). NORMAL: crash-safe, faster (see file comment).
  bool synchronous_full = true;
  // Called before every write (Insert of a new task, Update, Erase); a non-OK status fails the
  // write with it and nothing is written. `hase serve`: the instance lock's fencing
  // (InstanceLock::CheckHeld). Null = always write.
  std::function<Status()> write_gate;
};

class TaskStore {
 public:
  // Opens or creates `dir`/hase.db (creating `dir`). Errors: IO (cannot create or open),
  // Parse (the file is not a hase journal or is corrupt).
  static Result<std::unique_ptr<TaskStore>> Open(const std::string& dir, TaskStoreOptions options = {});
  ~TaskStore();
  TaskStore(const TaskStore&) = delete;
  TaskStore& operator=(const TaskStore&) = delete;

  struct Inserted {
    TaskRecord record;
    bool created = true;  // false: spec.key already existed; `record` is that task as stored
  };
  // Accepts a task in state `queued` at `now_s`. Returns once the row is committed.
  Result<Inserted> Insert(const TaskSpec& spec, double now_s);

  // Writes every mutable column of `records` (by id) in one transaction.
  Status Update(std::span<const TaskRecord> records);
  Status Update(const TaskRecord& r) { return Update(std::span<const TaskRecord>(&r, 1)); }

  // Deletes task `id`'s row: only for a task that never took effect (a pod whose binding the
  // API server refused: nothing ran, and the pod's owner retries it). Not an error when the
  // row is absent. Errors: IO (SQLite's message).
  Status Erase(int64_t id);

  // A journal row that no longer passes validation (written by an older version, or edited
  // by hand): moved out of `tasks` into table `quarantine` (id, spec, state, reason, moved_s)
  // by the load that found it, so the daemon still starts and nothing is deleted.
  struct Quarantined {
    int64_t id = 0;
    std::string reason;  // the validation error
  };
  // Every task not in a terminal state, by id.
  Result<std::vector<TaskRecord>> LoadUnfinished();
  // Every task, by id (tests, recovery of the in-memory view).
  Result<std::vector<TaskRecord>> LoadAll();

  const std::string& path() const { return path_; }

  // Writes one small transaction (the header's user_version) to learn whether the journal takes
  // writes again after a failure (full disk): the daemon calls it each pass while /healthz says
  // the journal failed and nothing waits to be written. Errors: IO, as a write.
  Status Probe();

  // Full disk (issue #15): a write that fails (SQLITE_FULL, SQLITE_IOERR, ...) returns IO and
  // leaves no transaction open, so the next write succeeds once there is space again.
  // Test hooks: caps the database at `pages` pages (SQLite's max_page_count; real SQLITE_FULL
  // once the file would grow), and makes every Insert/Update fail as SQLite does on a full disk
  // until called with false (updates in place never grow the file, so max_page_count alone
  // cannot fail them).
  Status SetMaxPageCountForTest(int64_t pages);
  void FailWritesForTest(bool fail);
  // Rows quarantined by loads since the store was opened (and earlier: the table's count).
  std::vector<Quarantined> quarantined() const;
  int64_t quarantined_total() const;

 private:
  TaskStore(sqlite3* db, std::string path, std::function<Status()> write_gate)
      : db_(db), path_(std::move(path)), write_gate_(std::move(write_gate)) {}
  Status Gate() const { return write_gate_ ? write_gate_() : Status::OK(); }
  Result<std::vector<TaskRecord>> Load(const char* where_clause);

  mutable std::mutex mu_;
  std::vector<Quarantined> quarantined_;  // guarded by mu_
  bool fail_writes_for_test_ = false;     // guarded by mu_
  sqlite3* const db_;  // guarded by mu_; closed in the destructor
  const std::string path_;
  const std::function<Status()> write_gate_;
};

}  // namespace hase::service
