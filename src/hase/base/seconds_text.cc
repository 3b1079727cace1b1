#include "hase/base/seconds_text.h"

#include <cmath>

#include <fmt/format.h>

namespace hase {

std::string SecondsText(double seconds) {
  if (std::isfinite(seconds) && std::abs(seconds) >= 100) return fmt::format("{:.0f} s", seconds);
  return fmt::format("{:.3g} s", seconds);
}

}  // namespace hase
