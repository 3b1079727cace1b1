#include "hase/sched/yaml_reader.h"

#include <algorithm>

#include <cctype>

namespace hase::sched::yaml {

Result<YAML::Node> Load(std::string_view text, const std::string& where) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    return Status::Parse(e.msg, where + ":" + std::to_string(e.mark.line + 1),
                         "fix the YAML syntax on that line");
  } catch (const YAML::Exception& e) {
    return Status::Parse(e.what(), where, "fix the YAML syntax");
  }
}

std::string At(const std::string& where, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  return m.line >= 0 ? where + ":" + std::to_string(m.line + 1) : where;
}

Status CheckKeys(const YAML::Node& map, std::initializer_list<std::string_view> known, const std::string& what,
                 const std::string& where) {
  if (!map.IsMap()) return Status::OK();
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>("");
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string list;
    for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    return Status::InvalidArgument("unknown " + what + " key '" + key + "'", At(where, kv.first), "keys: " + list);
  }
  return Status::OK();
}

Status CheckAliases(std::string_view text, const std::string& where) {
  int anchors = 0, line = 1;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] == '\n') ++line;
    const bool token_start = i == 0 || text[i - 1] == ' ' || text[i - 1] == '\n' ||
                             text[i - 1] == '[' || text[i - 1] == '{' || text[i - 1] == ',' ||
                             text[i - 1] == '-' || text[i - 1] == ':';
    const char next = text[i + 1];
    if (text[i] == '&' && token_start &&
        (std::isalnum(static_cast<unsigned char>(next)) || next == '_' || next == '-')) {
      if (++anchors > kMaxYamlAnchors) {
        return Status::InvalidArgument(
            "more than " + std::to_string(kMaxYamlAnchors) + " YAML anchors",
            where + ":" + std::to_string(line), "write the entries out (use count: for repeats)");
      }
    }
  }
  return Status::OK();
}

}  // namespace hase::sched::yaml
