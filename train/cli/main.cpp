// train/cli/main.cpp — the `qkv` command-line program: option parsing (CLI11) and the top-level
// error handler that turns every exception into one line on stderr and a non-zero exit.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "train/cli/commands.h"
#include "framework/text_util.h"
#include "framework/distributed.h"
#include "train/run/training_run.h"

// An error is one line of a readable length: control characters (a newline in a path) are
// written escaped (\n, \x01), and a message over 1,000 bytes (a long argument echoed back) keeps
// its first 600 and last 300 bytes, cut at character boundaries.
static std::string one_line(const std::string& message) {
  constexpr size_t kLongest = 1000, kHead = 600, kTail = 300;
  std::string text = message;
  if (text.size() > kLongest) {
    const auto continuation = [&](size_t i) { return (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80; };
    size_t head = kHead, tail = text.size() - kTail;
    while (head > 0 && continuation(head)) --head;
    while (tail < text.size() && continuation(tail)) ++tail;
    text = text.substr(0, head) + fmt::format(" \u2026 ({} bytes left out) \u2026 ", tail - head) + text.substr(tail);
  }
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    out += c == '\n'                     ? "\\n"
           : c == '\r'                   ? "\\r"
           : c == '\t'                   ? "\\t"
           : byte < 0x20 || byte == 0x7F ? fmt::format("\\x{:02x}", byte)
                                         : std::string(1, c);
  }
  return out;
}

// A mistyped command or flag, named with its nearest real one: `qkv trian` -> 'train',
// `qkv train --epoch 1` -> --epochs (edit distance at most 2); empty when nothing is near.
static std::string did_you_mean(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return "";
  const std::string command = argv[1];
  CLI::App* sub = nullptr;
  std::vector<std::string> commands;
  for (CLI::App* c : app.get_subcommands([](CLI::App*) { return true; })) {
    commands.push_back(c->get_name());
    if (c->get_name() == command) sub = c;
  }
  if (sub == nullptr) {
    const auto near = qkv::nearest_strings(command, commands, 1);
    return near.empty() ? "" : fmt::format("; did you mean '{}'?", near[0]);
  }
  std::vector<std::string> flags;
  for (const CLI::Option* o : sub->get_options())
    for (const auto& name : o->get_lnames()) flags.push_back(name);
  for (int i = 2; i < argc; ++i) {
    std::string token = argv[i];
    if (token.rfind("--", 0) != 0 || token.size() == 2) continue;
    token = token.substr(2, token.find('=') == std::string::npos ? std::string::npos : token.find('=') - 2);
    if (std::find(flags.begin(), flags.end(), token) != flags.end()) continue;
    const auto near = qkv::nearest_strings(token, flags, 1);
    if (!near.empty())
      return fmt::format("; --{} is not an option of qkv {}: did you mean --{}?", token, command, near[0]);
  }
  return "";
}

static int run(CLI::App& app, int argc, char** argv) {
  if (argc == 1) {  // plain `qkv`: the help, as `qkv --help` prints it, rather than an error
    std::fputs(app.help().c_str(), stdout);
    return 0;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --help-all, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "qkv: error: %s%s (see qkv --help)\n", one_line(e.what()).c_str(),
                 did_you_mean(app, argc, argv).c_str());
    return 2;
  } catch (const qkv::app::Interrupted& e) {  // the run's state is saved; 128 + SIGINT, as a shell reports it
    std::fflush(stdout);
    // every rank stops together; rank 0 alone says so (its hint names the mpirun command)
    if (!qkv::dist::ProcessGroup::active() || qkv::dist::ProcessGroup::world().rank() == 0)
      std::fprintf(stderr, "qkv: %s\n", one_line(e.what()).c_str());
    return 130;
  } catch (const std::bad_alloc&) {  // a size no check foresaw: still one line, in words
    std::fflush(stdout);
    std::fprintf(stderr, "qkv: error: out of memory: the input asks for more memory than this machine could give\n");
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    if (qkv::dist::ProcessGroup::active() && qkv::dist::ProcessGroup::world().size() > 1)
      std::fprintf(stderr, "qkv: error: rank %d: %s\n", qkv::dist::ProcessGroup::world().rank(),
                   one_line(e.what()).c_str());
    else
      std::fprintf(stderr, "qkv: error: %s\n", one_line(e.what()).c_str());
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  CLI::App app{"qkv: a small, exact autograd engine and a self-attention translator", "qkv"};
  app.require_subcommand(1);
  app.formatter(qkv::app::help_formatter());  // before the commands, which take it from the app
  app.set_help_all_flag("--help-all", "show help for every command");
  app.set_version_flag("--version", qkv::app::version_text(), "print the version and the build configuration");
  qkv::app::register_commands(app);
  const int status = run(app, argc, argv);
  // Data-parallel ranks: a rank that failed stops the others at once (they may be waiting in a
  // collective); ranks that finished, or were interrupted together, leave MPI normally.
  if (qkv::dist::ProcessGroup::active()) {
    auto& group = qkv::dist::ProcessGroup::world();
    if (status != 0 && status != 130 && group.size() > 1) group.abort(status);
    group.finalize();
  }
  return status;
}
