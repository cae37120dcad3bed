// tests/main.cpp — the doctest entry point for build/qkv_tests (all suites link into one binary).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
