// Durations in messages and logs: "2 s", "0.25 s", "12.3 s", "1234 s" — never "2.000000 s"
// (std::to_string) nor "0 s" for half a second ({:.0f}).
#pragma once

#include <string>

namespace hase {

// `seconds` as text with its unit: three significant digits below 100 s ({:.3g}: "2 s",
// "0.25 s", "12.3 s"), whole seconds from 100 s on ("1234 s"), "inf s" / "nan s" as such.
std::string SecondsText(double seconds);

}  // namespace hase
