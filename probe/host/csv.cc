#include "csv.h"

#include <cmath>

#include <fmt/format.h>

namespace hase::probe {

std::string CsvEscape(std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string FormatNumber(double v) {
  if (std::isnan(v)) return "";
  return fmt::format("{}", v);
}

std::string FormatNumber(int64_t v) { return fmt::format("{}", v); }

std::string CsvLine(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) line += ',';
    line += CsvEscape(fields[i]);
  }
  return line;
}

Result<std::unique_ptr<CsvWriter>> CsvWriter::Create(const std::string& path,
                                                     std::vector<std::string> header,
                                                     const std::vector<std::string>& comments) {
  std::ofstream out(path, std::ios::out | std::ios::trunc);
  if (!out) return Status::IO("cannot open for writing", path, "check the directory exists");
  for (const auto& c : comments) out << c << '\n';
  out << CsvLine(header) << '\n';
  if (!out) return Status::IO("cannot write", path);
  return std::unique_ptr<CsvWriter>(new CsvWriter(path, std::move(header), std::move(out)));
}

Status CsvWriter::WriteRow(const std::vector<std::string>& row) {
  if (row.size() != header_.size()) {
    return Status::InvalidArgument(
        fmt::format("row has {} fields, header has {}", row.size(), header_.size()),
        fmt::format("{}: row {}", path_, rows_ + 1));
  }
  out_ << CsvLine(row) << '\n';
  if (!out_) return Status::IO("cannot write", path_);
  ++rows_;
  return Status::OK();
}

Status CsvWriter::Flush() {
  out_.flush();
  if (!out_) return Status::IO("cannot flush", path_);
  return Status::OK();
}

}  // namespace hase::probe
