#include "tools/cli_args.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace fusedsample::cli {

std::string option_text(const std::string& name) { return "--" + name; }

ArgParser::ArgParser(std::string usage, std::string summary) : usage_(std::move(usage)), summary_(std::move(summary)) {}

ArgParser& ArgParser::option(std::string name, std::string metavar, std::string help, std::string default_text,
                             char alias) {
  specs_.push_back({std::move(name), std::move(metavar), std::move(help), std::move(default_text), alias, true});
  return *this;
}

ArgParser& ArgParser::flag(std::string name, std::string help) {
  specs_.push_back({std::move(name), {}, std::move(help), {}, 0, false});
  return *this;
}

ArgParser& ArgParser::epilog(std::string text) {
  epilog_ = std::move(text);
  return *this;
}

const ArgParser::Spec* ArgParser::find(const std::string& name) const {
  for (const auto& s : specs_)
    if (s.name == name) return &s;
  return nullptr;
}

Args ArgParser::parse(const std::vector<std::string>& args) const {
  Args out;
  // Help wins over any other problem on the line.
  for (const auto& a : args)
    if (a == "-h" || a == "--help") {
      out.help_ = true;
      return out;
    }
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const Spec* spec = nullptr;
    std::string shown = a;
    std::optional<std::string> inline_value;
    if (a.size() > 2 && a.starts_with("--")) {
      std::string name = a.substr(2);
      if (const auto eq = name.find('='); eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name.resize(eq);
        shown = "--" + name;
      }
      spec = find(name);
    } else if (a.size() == 2 && a[0] == '-' && a[1] != '-') {
      for (const auto& s : specs_)
        if (s.alias == a[1]) spec = &s;
    } else if (a == "--") {
      throw UsageError("unexpected '--': this command takes no arguments but options");
    } else {
      throw UsageError(fmt::format("unexpected argument '{}' (options start with --)", a));
    }
    if (!spec) throw UsageError(fmt::format("unknown option '{}'", shown));
    if (out.values_.count(spec->name)) throw UsageError(fmt::format("option '{}' given twice", shown));
    if (!spec->takes_value) {
      if (inline_value) throw UsageError(fmt::format("option '{}' takes no value", shown));
      out.values_[spec->name] = "";
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) throw UsageError(fmt::format("option '{}' needs a value ({})", shown, spec->metavar));
      inline_value = args[++i];
    }
    out.values_[spec->name] = *inline_value;
  }
  return out;
}

std::string ArgParser::help() const {
  std::string s = fmt::format("usage: {}\n\n{}\n", usage_, summary_);
  {
    s += "\noptions:\n";
    for (const auto& o : specs_) {
      std::string left = o.alias ? fmt::format("-{}, --{}", o.alias, o.name) : fmt::format("    --{}", o.name);
      if (o.takes_value) left += " " + o.metavar;
      std::string right = o.help;
      if (!o.default_text.empty()) right += fmt::format(" (default: {})", o.default_text);
      // Wrap the description to 80 columns, indented past the option column.
      std::vector<std::string> lines(1);
      std::size_t start = 0;
      while (start < right.size()) {
        std::size_t end = right.find(' ', start);
        if (end == std::string::npos) end = right.size();
        const std::string word = right.substr(start, end - start);
        if (!lines.back().empty() && lines.back().size() + 1 + word.size() > 50) lines.emplace_back();
        lines.back() += (lines.back().empty() ? "" : " ") + word;
        start = end + 1;
      }
      if (left.size() > 26) s += fmt::format("  {}\n", left);
      for (std::size_t i = 0; i < lines.size(); ++i)
        s += fmt::format("  {:26}  {}\n", i == 0 && left.size() <= 26 ? left : "", lines[i]);
    }
    s += fmt::format("  {:26}  {}\n", "-h, --help", "show this help and exit");
  }
  if (!epilog_.empty()) s += "\n" + epilog_ + (epilog_.ends_with('\n') ? "" : "\n");
  return s;
}

std::optional<std::string> Args::get(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> Args::get_path(const std::string& name) const {
  auto text = get(name);
  if (text && text->empty())
    throw UsageError(fmt::format("invalid value '' for {}: expected a file name", option_text(name)));
  return text;
}

std::string Args::get_or(const std::string& name, const std::string& fallback) const {
  return get(name).value_or(fallback);
}

std::int64_t Args::get_int(const std::string& name, std::int64_t fallback, std::int64_t lo, std::int64_t hi) const {
  const auto text = get(name);
  if (!text) return fallback;
  std::int64_t v = 0;
  const char* end = text->data() + text->size();
  const auto [p, ec] = std::from_chars(text->data(), end, v);
  if (ec != std::errc() || p != end || v < lo || v > hi)
    throw UsageError(fmt::format("invalid value '{}' for {}: expected an integer in [{}, {}]", *text, option_text(name),
                                 lo, hi));
  return v;
}

std::uint64_t Args::get_u64(const std::string& name, std::uint64_t fallback) const {
  const auto text = get(name);
  if (!text) return fallback;
  std::uint64_t v = 0;
  const bool hex = text->starts_with("0x") || text->starts_with("0X");
  const char* begin = text->data() + (hex ? 2 : 0);
  const char* end = text->data() + text->size();
  const auto [p, ec] = std::from_chars(begin, end, v, hex ? 16 : 10);
  if (begin == end || ec != std::errc() || p != end)
    throw UsageError(
        fmt::format("invalid value '{}' for {}: expected an unsigned 64-bit integer (decimal or 0x hex)", *text,
                    option_text(name)));
  return v;
}

double Args::get_double(const std::string& name, double fallback) const {
  const auto text = get(name);
  if (!text) return fallback;
  // strtod rather than from_chars<double>: the latter is missing from some
  // standard libraries the tool must build with.
  // Refused besides junk: leading white space (strtod skips it; the integer
  // options refuse it), and a magnitude past a double's range either way
  // (ERANGE: 1e400 overflows; 1e-400 underflowed to 0, which read as
  // "greedy" for --temperature and "no budget" for --budget).
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text->c_str(), &end);
  const bool range = errno == ERANGE;
  if (text->empty() || std::isspace(static_cast<unsigned char>(text->front())) ||
      end != text->c_str() + text->size() || !std::isfinite(v) || range)
    throw UsageError(fmt::format("invalid value '{}' for {}: expected a finite number{}", *text, option_text(name),
                                 range ? " within a double's range" : ""));
  return v;
}

std::string Args::get_choice(const std::string& name, const std::string& fallback,
                             const std::vector<std::string>& choices) const {
  const std::string v = get_or(name, fallback);
  for (const auto& c : choices)
    if (c == v) return v;
  throw UsageError(fmt::format("invalid value '{}' for {}: expected one of {}", v, option_text(name),
                               fmt::join(choices, ", ")));
}

}  // namespace fusedsample::cli
