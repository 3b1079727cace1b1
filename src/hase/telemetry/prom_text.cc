#include "hase/telemetry/prom_text.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <unordered_map>

namespace hase::telemetry {
namespace {

bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }
bool IsBlank(char c) { return c == ' ' || c == '\t'; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// A cursor over one line.
struct Cursor {
  std::string_view s;
  size_t i = 0;
  bool Done() const { return i >= s.size(); }
  char Peek() const { return s[i]; }
  void SkipBlanks() {
    while (i < s.size() && IsBlank(s[i])) ++i;
  }
  std::string_view Token() {  // up to the next blank
    size_t b = i;
    while (i < s.size() && !IsBlank(s[i])) ++i;
    return s.substr(b, i - b);
  }
  std::string_view Name(bool metric) {
    size_t b = i;
    if (i < s.size() && (metric ? IsNameStart(s[i]) : (IsNameStart(s[i]) && s[i] != ':'))) {
      ++i;
      while (i < s.size() && (metric ? IsNameChar(s[i]) : (IsNameChar(s[i]) && s[i] != ':'))) ++i;
    }
    return s.substr(b, i - b);
  }
};

std::string Unescape(std::string_view in, bool allow_quote) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '\\' && i + 1 < in.size()) {
      char n = in[i + 1];
      if (n == 'n') { out += '\n'; ++i; continue; }
      if (n == '\\') { out += '\\'; ++i; continue; }
      if (n == '"' && allow_quote) { out += '"'; ++i; continue; }
    }
    out += in[i];
  }
  return out;
}

Status LineError(size_t line_no, const std::string& what) {
  return Status::Parse(what, "line " + std::to_string(line_no),
                       "expected Prometheus text exposition format 0.0.4");
}

// Parses `{a="x",b="y"}` starting at '{'; leaves the cursor after '}'.
Status ParseLabels(Cursor& c, size_t line_no, std::vector<PromLabel>& labels) {
  ++c.i;  // '{'
  for (;;) {
    c.SkipBlanks();
    if (c.Done()) return LineError(line_no, "unterminated label set (missing '}')");
    if (c.Peek() == '}') { ++c.i; return Status::OK(); }
    std::string_view key = c.Name(/*metric=*/false);
    if (key.empty()) return LineError(line_no, "expected a label name at column " + std::to_string(c.i + 1));
    c.SkipBlanks();
    if (c.Done() || c.Peek() != '=') return LineError(line_no, "expected '=' after label '" + std::string(key) + "'");
    ++c.i;
    c.SkipBlanks();
    if (c.Done() || c.Peek() != '"') return LineError(line_no, "expected '\"' to open the value of label '" + std::string(key) + "'");
    ++c.i;
    size_t b = c.i;
    bool closed = false;
    while (c.i < c.s.size()) {
      if (c.s[c.i] == '\\') { c.i += 2; continue; }
      if (c.s[c.i] == '"') { closed = true; break; }
      ++c.i;
    }
    if (!closed) return LineError(line_no, "unterminated value of label '" + std::string(key) + "'");
    labels.emplace_back(std::string(key), Unescape(c.s.substr(b, c.i - b), true));
    ++c.i;  // closing quote
    c.SkipBlanks();
    if (c.Done()) return LineError(line_no, "unterminated label set (missing '}')");
    if (c.Peek() == ',') { ++c.i; continue; }
    if (c.Peek() == '}') { ++c.i; return Status::OK(); }
    return LineError(line_no, std::string("expected ',' or '}' in label set, got '") + c.Peek() + "'");
  }
}

}  // namespace

const std::string* PromSample::Label(std::string_view key) const {
  for (const PromLabel& l : labels) {
    if (l.first == key) return &l.second;
  }
  return nullptr;
}

std::optional<double> ParsePromFloat(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::string_view body = s;
  bool neg = false;
  if (body[0] == '+' || body[0] == '-') {
    neg = body[0] == '-';
    body.remove_prefix(1);
  }
  if (EqualsIgnoreCase(body, "inf") || EqualsIgnoreCase(body, "infinity")) {
    return neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  if (EqualsIgnoreCase(body, "nan")) return std::numeric_limits<double>::quiet_NaN();
  // strtod accepts hex floats and locale quirks; restrict to decimal characters first.
  for (char ch : body) {
    if (!((ch >= '0' && ch <= '9') || ch == '.' || ch == 'e' || ch == 'E' || ch == '+' || ch == '-' || ch == '_')) {
      return std::nullopt;
    }
  }
  std::string buf(s);
  buf.erase(std::remove(buf.begin(), buf.end(), '_'), buf.end());  // Go allows 1_000
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(buf.c_str(), &end);
  if (end == buf.c_str() || *end != '\0') return std::nullopt;
  return v;  // ERANGE overflow gives ±HUGE_VAL = ±Inf, as Go's ParseFloat does
}

Result<PromParseResult> ParsePromText(std::string_view text) {
  PromParseResult out;
  std::unordered_map<std::string, size_t> family_index;
  std::unordered_map<std::string, bool> has_type;
  auto family = [&](std::string_view name) -> PromFamily& {
    auto it = family_index.find(std::string(name));
    if (it != family_index.end()) return out.families[it->second];
    family_index.emplace(std::string(name), out.families.size());
    out.families.push_back(PromFamily{std::string(name), "", "untyped"});
    return out.families.back();
  };

  size_t line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);

    Cursor c{line};
    c.SkipBlanks();
    if (c.Done()) {
      if (nl == text.size()) break;
      continue;
    }
    if (c.Peek() == '#') {
      ++c.i;
      c.SkipBlanks();
      std::string_view kw = c.Token();
      if (kw != "HELP" && kw != "TYPE") continue;  // a plain comment
      c.SkipBlanks();
      std::string_view name = c.Name(/*metric=*/true);
      if (name.empty()) return LineError(line_no, "# " + std::string(kw) + " without a metric name");
      if (!c.Done() && !IsBlank(c.Peek())) return LineError(line_no, "bad metric name in # " + std::string(kw));
      c.SkipBlanks();
      std::string_view rest = line.substr(c.i);
      if (kw == "HELP") {
        family(name).help = Unescape(rest, false);
      } else {
        while (!rest.empty() && IsBlank(rest.back())) rest.remove_suffix(1);
        if (rest != "counter" && rest != "gauge" && rest != "histogram" && rest != "summary" &&
            rest != "untyped") {
          return LineError(line_no, "unknown metric type '" + std::string(rest) + "' for " + std::string(name));
        }
        if (has_type[std::string(name)]) return LineError(line_no, "second # TYPE line for " + std::string(name));
        has_type[std::string(name)] = true;
        family(name).type = std::string(rest);
      }
      if (nl == text.size()) break;
      continue;
    }

    PromSample s;
    std::string_view name = c.Name(/*metric=*/true);
    if (name.empty()) return LineError(line_no, "expected a metric name, got '" + std::string(line.substr(c.i, 20)) + "'");
    s.name = std::string(name);
    c.SkipBlanks();
    if (!c.Done() && c.Peek() == '{') HASE_RETURN_IF_ERROR(ParseLabels(c, line_no, s.labels));
    c.SkipBlanks();
    std::string_view value = c.Token();
    if (value.empty()) return LineError(line_no, "sample " + s.name + " has no value");
    std::optional<double> v = ParsePromFloat(value);
    if (!v) return LineError(line_no, "sample " + s.name + " has a bad value '" + std::string(value) + "'");
    s.value = *v;
    c.SkipBlanks();
    if (!c.Done()) {
      std::string_view ts = c.Token();
      int64_t t = 0;
      auto [p, ec] = std::from_chars(ts.data(), ts.data() + ts.size(), t);
      if (ec != std::errc() || p != ts.data() + ts.size()) {
        return LineError(line_no, "sample " + s.name + " has a bad timestamp '" + std::string(ts) + "' (int64 ms)");
      }
      s.timestamp_ms = t;
      c.SkipBlanks();
      if (!c.Done()) return LineError(line_no, "trailing text after the timestamp of " + s.name);
    }
    out.samples.push_back(std::move(s));
    if (nl == text.size()) break;
  }
  return out;
}

}  // namespace hase::telemetry
