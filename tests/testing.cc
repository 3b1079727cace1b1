#include "testing.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace hase::testing {

std::string SourceDir() { return HASE_TEST_SOURCE_DIR; }

std::string SharedDir() {
  std::filesystem::path p = std::filesystem::path(HASE_TEST_SOURCE_DIR) / ".." / "shared";
  std::error_code ec;
  if (std::filesystem::is_directory(p / "data", ec)) return std::filesystem::canonical(p).string();
  return "";
}

std::string HaseBin() {
  const char* b = std::getenv("HASE_BIN");
  return b ? b : HASE_TEST_BINARY_DIR "/src/cli/hase";
}

bool InCi() {
  const char* ci = std::getenv("CI");
  return ci && std::string(ci) == "true";
}

CommandResult RunCommand(const std::string& cmd) {
  char out_tmpl[] = "/tmp/hase_test_out_XXXXXX";
  char err_tmpl[] = "/tmp/hase_test_err_XXXXXX";
  int fo = mkstemp(out_tmpl);
  int fe = mkstemp(err_tmpl);
  close(fo);
  close(fe);
  std::string full = "(" + cmd + ") >" + out_tmpl + " 2>" + err_tmpl + " </dev/null";
  int rc = std::system(full.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  auto slurp = [](const char* path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  r.out = slurp(out_tmpl);
  r.err = slurp(err_tmpl);
  std::remove(out_tmpl);
  std::remove(err_tmpl);
  return r;
}

}  // namespace hase::testing
