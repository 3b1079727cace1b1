// Where `hase` finds its data: next to an installed binary (cmake --install: <prefix>/bin/hase
// with <prefix>/share/hase/{models,data,examples}), else in the source tree it was built from.
#include <filesystem>
#include <system_error>

#include "cli/command.h"

namespace hase::cli {

std::string DefaultModelsDir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path installed = exe.parent_path().parent_path() / "share" / "hase" / "models";
    if (std::filesystem::is_directory(installed, ec)) return installed.string();
  }
  return HASE_DATA_DIR "/../models";
}

}  // namespace hase::cli
