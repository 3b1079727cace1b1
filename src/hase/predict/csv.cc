#include "hase/predict/csv.h"

#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

namespace hase::predict {

Result<std::string> ReadTextFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Status::NotFound("no such file", path, "check the path");
  }
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return Status::IO(std::strerror(errno), path);
  std::string out;
  char buf[1 << 16];
  while (true) {
    int n = gzread(f, buf, sizeof(buf));
    if (n < 0) {
      int err = 0;
      std::string msg = gzerror(f, &err);
      gzclose(f);
      return Status::IO("read failed: " + msg, path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  gzclose(f);
  return out;
}

Status WriteTextFile(const std::string& path, const std::string& text) {
  const bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  if (gz) {
    gzFile f = gzopen(path.c_str(), "wb9");
    if (f == nullptr) return Status::IO("cannot open for writing", path);
    size_t off = 0;
    while (off < text.size()) {
      unsigned chunk = static_cast<unsigned>(std::min<size_t>(text.size() - off, 1 << 20));
      if (gzwrite(f, text.data() + off, chunk) != static_cast<int>(chunk)) {
        gzclose(f);
        return Status::IO("write failed", path);
      }
      off += chunk;
    }
    if (gzclose(f) != Z_OK) return Status::IO("close failed", path);
    return Status::OK();
  }
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return Status::IO(std::strerror(errno), path, "check the directory exists");
  size_t n = std::fwrite(text.data(), 1, text.size(), f);
  bool ok = n == text.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) return Status::IO("write failed", path);
  return Status::OK();
}

Result<CsvTable> CsvTable::Parse(std::string_view text, const std::string& name) {
  CsvTable t;
  t.name_ = name;
  size_t i = 0;
  int line = 1;
  bool have_header = false;
  const size_t n = text.size();
  while (i < n) {
    // At a record start: skip blank and comment lines.
    if (text[i] == '\n' || text[i] == '\r') {
      if (text[i] == '\n') ++line;
      ++i;
      continue;
    }
    if (text[i] == '#') {
      while (i < n && text[i] != '\n') ++i;
      continue;
    }
    Row row;
    row.line = line;
    std::string field;
    bool in_quotes = false;
    bool done = false;
    while (!done) {
      if (i >= n) {
        if (in_quotes) {
          return Status::Parse("unterminated quoted field", name + ":" + std::to_string(row.line));
        }
        row.fields.push_back(std::move(field));
        done = true;
        break;
      }
      char ch = text[i];
      if (in_quotes) {
        if (ch == '"') {
          if (i + 1 < n && text[i + 1] == '"') {
            field.push_back('"');
            i += 2;
          } else {
            in_quotes = false;
            ++i;
          }
        } else {
          if (ch == '\n') ++line;
          field.push_back(ch);
          ++i;
        }
        continue;
      }
      if (ch == '"' && field.empty()) {
        in_quotes = true;
        ++i;
      } else if (ch == ',') {
        row.fields.push_back(std::move(field));
        field.clear();
        ++i;
      } else if (ch == '\r') {
        ++i;
      } else if (ch == '\n') {
        row.fields.push_back(std::move(field));
        ++line;
        ++i;
        done = true;
      } else {
        field.push_back(ch);
        ++i;
      }
    }
    if (!have_header) {
      t.header_ = std::move(row.fields);
      for (size_t c = 0; c < t.header_.size(); ++c) t.index_.emplace(t.header_[c], c);
      have_header = true;
      continue;
    }
    if (row.fields.size() != t.header_.size()) {
      return Status::Parse("row has " + std::to_string(row.fields.size()) + " fields, header has " +
                               std::to_string(t.header_.size()),
                           name + ":" + std::to_string(row.line),
                           "fix or remove the malformed row");
    }
    t.rows_.push_back(std::move(row));
  }
  if (!have_header) return Status::Parse("empty CSV (no header line)", name);
  return t;
}

std::optional<size_t> CsvTable::Find(std::string_view column) const {
  auto it = index_.find(column);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

std::string CsvEscape(std::string_view field) {
  if (field.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

namespace {
std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}
}  // namespace

std::optional<double> ParseDouble(std::string_view s) {
  s = Trim(s);
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<long long> ParseInt(std::string_view s) {
  s = Trim(s);
  if (s.empty()) return std::nullopt;
  long long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc() && p == s.data() + s.size()) return v;
  // Accept integral values written as floats ("16.0").
  auto d = ParseDouble(s);
  if (d && *d == static_cast<double>(static_cast<long long>(*d))) return static_cast<long long>(*d);
  return std::nullopt;
}

}  // namespace hase::predict
