// tests/test_util.h — small helpers shared by the doctest suites.
#pragma once

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

namespace qkv::testing {

// The message of the std::runtime_error that `f` throws; fails the check if it throws nothing.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) { return e.what(); }
  FAIL_CHECK("expected a std::runtime_error, but nothing was thrown");
  return "";
}

}  // namespace qkv::testing
