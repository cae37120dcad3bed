// tests/engine/test_op_cases.cpp — the op table (tests/op_cases.h) itself: every function declared in
// framework/ops.h has a case (ops.h is parsed at test time, from the repository root), names are unique.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "tests/op_cases.h"

namespace {

// Functions that framework/ops.h declares but that are not ops, so need no case. Keep it short:
// each entry says why. (Empty today: even broadcast_shapes, a helper, has a case.)
const std::set<std::string> kNotOps = {};

// The names of the functions ops.h declares at namespace scope: lines that start (unindented)
// with a return type and a name followed by "(", outside comments. Operators (operator+) and
// members of structs (indented) are not matched.
std::set<std::string> declared_functions(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path << " (run the tests from the repository root)");
  std::stringstream text;
  text << in.rdbuf();
  std::string source = text.str();
  // blank out /* ... */ comments and // comments
  source = std::regex_replace(source, std::regex(R"(/\*[\s\S]*?\*/)"), " ");
  source = std::regex_replace(source, std::regex(R"(//[^\n]*)"), "");
  const std::regex declaration(R"(^(?:inline\s+|static\s+)?(?:const\s+)?[A-Za-z_][\w:<>]*[&*]?\s+([A-Za-z_]\w*)\s*\()");
  std::set<std::string> names;
  std::istringstream lines(source);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, declaration) && m[1] != "operator") names.insert(m[1]);
  }
  return names;
}

}  // namespace

TEST_SUITE("op table") {
TEST_CASE("every function in framework/ops.h has a case in the op table") {
  const std::set<std::string> declared = declared_functions("framework/ops.h");
  // the parser must see the ops: a sanity floor, and a few known names
  CHECK(declared.size() >= 30);
  for (const char* known : {"add", "matmul", "max_with_indices", "layer_norm", "attention", "dropout"})
    CHECK_MESSAGE(declared.count(known) == 1, "the ops.h parser missed " << known);
  std::set<std::string> covered;
  for (const auto& c : qkv::testing::op_cases()) covered.insert(c.covers.begin(), c.covers.end());
  for (const std::string& name : declared) {
    if (kNotOps.count(name)) continue;
    CHECK_MESSAGE(covered.count(name) == 1,
                  "framework/ops.h declares " << name << "() but tests/op_cases.h has no case covering it");
  }
  // a case may only claim functions that exist
  for (const std::string& name : covered)
    CHECK_MESSAGE(declared.count(name) == 1, name << " is not in framework/ops.h");
  for (const std::string& name : kNotOps)
    CHECK_MESSAGE(declared.count(name) == 1, name << " is exempt but not declared");
}

TEST_CASE("op table cases are well formed") {
  std::set<std::string> names;
  for (const auto& c : qkv::testing::op_cases()) {
    CAPTURE(c.name);
    CHECK(names.insert(c.name).second);  // unique names
    CHECK_FALSE(c.covers.empty());
    CHECK(c.inputs);
    CHECK(c.fn);
  }
  MESSAGE(names.size() << " cases");
}
}
