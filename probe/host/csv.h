// CsvWriter: RFC 4180 CSV output with a fixed header.
//
// Fields containing a comma, double quote, CR or LF are quoted and inner quotes doubled; all
// other fields are written as they are. Numbers are formatted by FormatNumber (shortest text
// that reads back to the same double, "" for NaN so a missing value is an empty field).
// Not thread-safe: one writer per file.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hase/base/status.h"

namespace hase::probe {

// One field escaped for CSV.
std::string CsvEscape(std::string_view field);

// Shortest round-trip text of `v` ("0.125", "1e-07"); "" for NaN (a missing value).
std::string FormatNumber(double v);
std::string FormatNumber(int64_t v);

// One CSV line (no trailing newline) of escaped fields.
std::string CsvLine(const std::vector<std::string>& fields);

class CsvWriter {
 public:
  // Creates (truncates) `path`, writes each of `comments` as a line of its own (callers include
  // the leading "# "), then `header`. Errors: IO when the file cannot be opened.
  static Result<std::unique_ptr<CsvWriter>> Create(const std::string& path,
                                                   std::vector<std::string> header,
                                                   const std::vector<std::string>& comments = {});
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;

  // Appends one row. Errors: InvalidArgument when row.size() differs from the header's;
  // IO when writing fails.
  Status WriteRow(const std::vector<std::string>& row);
  // Flushes to disk. Errors: IO.
  Status Flush();

  const std::vector<std::string>& header() const { return header_; }
  const std::string& path() const { return path_; }

 private:
  CsvWriter(std::string path, std::vector<std::string> header, std::ofstream out)
      : path_(std::move(path)), header_(std::move(header)), out_(std::move(out)) {}

  const std::string path_;
  const std::vector<std::string> header_;
  std::ofstream out_;
  int64_t rows_ = 0;
};

}  // namespace hase::probe
