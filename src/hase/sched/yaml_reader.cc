#include "hase/sched/yaml_reader.h"

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

}  // namespace hase::sched::yaml
