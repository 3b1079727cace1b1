// Column access helpers shared by the dataset converters (internal to predict/datasets).
#pragma once

#include <string>

#include <fmt/format.h>

#include "hase/predict/csv.h"

namespace hase::predict::datasets_internal {

// Reads named columns of a CsvTable row, recording the first error (with file:line).
class RowReader {
 public:
  RowReader(const CsvTable& t, const CsvTable::Row& row) : t_(t), row_(row) {}
  std::string Text(const char* col) {
    auto i = t_.Find(col);
    if (!i) {
      Fail(fmt::format("missing column '{}'", col));
      return "";
    }
    return row_.fields[*i];
  }
  long long Int(const char* col) {
    std::string v = Text(col);
    auto p = ParseInt(v);
    if (!p) Fail(fmt::format("column '{}': '{}' is not an integer", col, v));
    return p.value_or(0);
  }
  double Double(const char* col) {
    std::string v = Text(col);
    auto p = ParseDouble(v);
    if (!p) Fail(fmt::format("column '{}': '{}' is not a number", col, v));
    return p.value_or(0);
  }
  std::string where() const { return t_.name() + ":" + std::to_string(row_.line); }
  const Status& status() const { return status_; }

 private:
  void Fail(std::string msg) {
    if (status_.ok()) status_ = Status::Parse(std::move(msg), where());
  }
  const CsvTable& t_;
  const CsvTable::Row& row_;
  Status status_;
};

}  // namespace hase::predict::datasets_internal
