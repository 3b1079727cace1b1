// `hase kernels` — placeholder until its issue lands; replaced by the real subcommand.
#include "cli/command.h"

namespace hase::cli {

Command AddKernelsCommand(CLI::App& parent) {
  Command c;
  c.app = parent.add_subcommand("kernels", "(not yet implemented)");
  c.app->allow_extras();
  c.run = [] { return Fail(Status::Unsupported("'hase kernels' is not implemented yet")); };
  return c;
}

}  // namespace hase::cli
