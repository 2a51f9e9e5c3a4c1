#include "usage_hints.hpp"

#include <algorithm>

#include "system/error.hpp"
#include "system/text.hpp"

namespace abh {

namespace {

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names{"help"};
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> option_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* o : cmd.get_options()) {
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

std::string hint(const std::string& where, const std::string& what, const std::string& word,
                 const std::vector<std::string>& known, const std::string& quote_mark) {
  const std::string near = closest_match(word, known);
  return where + ": unknown " + what + " " + quote(word) +
         (near.empty() ? "" : ": did you mean " + quote_mark + near + quote_mark + "?") + "\n";
}

}  // namespace

void refuse_empty_values(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") return;  // what follows is not an option
    if (a.size() > 3 && a.rfind("--", 0) == 0 && a.find('=') == a.size() - 1) {
      const std::string name = a.substr(0, a.size() - 1);
      throw UsageError(name + "= gives no value: write " + name + "=VALUE or " + name +
                       " VALUE, or leave " + name + " out for its default");
    }
  }
}

std::vector<std::string> expand_help_verb(const CLI::App& app, std::vector<std::string> args) {
  if (args.size() < 2 || args[1] != "help" || args.size() > 3) return args;
  if (args.size() == 2) return {args[0], "--help"};
  // An unknown verb is left without --help, so that it is refused with a suggestion.
  const std::vector<std::string> names = command_names(app);
  if (std::find(names.begin(), names.end(), args[2]) == names.end()) return {args[0], args[2]};
  return {args[0], args[2], "--help"};
}

std::string did_you_mean(const CLI::App& app) {
  std::vector<CLI::App*> parsed = app.get_subcommands();
  std::string out;
  if (parsed.empty()) {
    for (const std::string& w : app.remaining(false))
      if (!w.empty() && w[0] != '-')
        return hint("abharness", "command", w, command_names(app), "'");
    return out;
  }
  const CLI::App& cmd = *parsed.front();
  std::vector<std::string> words = cmd.remaining(false);
  for (const std::string& w : app.remaining(false)) words.push_back(w);
  for (const std::string& w : words)
    if (w.size() > 1 && w[0] == '-')
      out += hint("abharness " + cmd.get_name(), "option", w.substr(0, w.find('=')),
                  option_names(cmd), "");
  return out;
}

}  // namespace abh
