// Csv: a small RFC 4180 reader for the kernel datasets (quoted fields may hold commas, quotes
// and newlines), plus a gzip-transparent file reader.
//
// The public datasets in ../shared/data/kernels are plain CSV or gzip'd CSV (NeuSight's
// elementwise files); ReadTextFile() returns either decompressed (zlib's gzread reads plain
// files unchanged). Not a general CSV library: no type inference, no streaming.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hase/base/status.h"

namespace hase::predict {

// Whole content of `path`, gunzipped when it starts with the gzip magic.
// Errors: NotFound (no such file), IO (read/decompress failure).
Result<std::string> ReadTextFile(const std::string& path);

// Writes `text` to `path`, gzip-compressed when the name ends in ".gz". Errors: IO.
Status WriteTextFile(const std::string& path, const std::string& text);

// A parsed CSV table. header() holds the first non-comment record; rows() the rest, each with
// the 1-based line number where its record starts (for error messages).
class CsvTable {
 public:
  struct Row {
    int line = 0;
    std::vector<std::string> fields;
  };

  // Parses `text`. Lines starting with '#' (outside quotes, at a record start) and blank lines
  // are skipped. Errors: Parse (unterminated quote; a row whose field count differs from the
  // header's, reported with `where` = "<name>:<line>").
  static Result<CsvTable> Parse(std::string_view text, const std::string& name);

  const std::vector<std::string>& header() const { return header_; }
  const std::vector<Row>& rows() const { return rows_; }
  const std::string& name() const { return name_; }
  // Column index of `column`, or nullopt.
  std::optional<size_t> Find(std::string_view column) const;

 private:
  std::string name_;
  std::vector<std::string> header_;
  std::map<std::string, size_t, std::less<>> index_;
  std::vector<Row> rows_;
};

// Quotes `field` for CSV output when it holds ',', '"' or a newline.
std::string CsvEscape(std::string_view field);

// Strict number parsing of a whole field (surrounding spaces allowed). nullopt on garbage.
std::optional<double> ParseDouble(std::string_view s);
std::optional<long long> ParseInt(std::string_view s);

}  // namespace hase::predict
