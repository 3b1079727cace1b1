// ReadFileForTest: reads a fixture file (tests/data/...) for telemetry and service tests.
#pragma once

#include <cstdio>
#include <string>

namespace hase::testing {

// Reads a repository file (tests/data/...) into a string; "" when missing.
inline std::string ReadFileForTest(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return "";
  std::string s;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  return s;
}

}  // namespace hase::testing
