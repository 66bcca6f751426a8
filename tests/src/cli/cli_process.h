// Running the racesim command as a real process from a test: its exit code and output, and a
// scratch directory per test (shared by the command-line test files).
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace cli_process {

// A scratch directory of the running test's own, ending in '/': ctest runs the tests of this file
// as separate processes at once, so two tests must never share a file name in TempDir().
inline std::string test_dir() {
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string dir = ::testing::TempDir() + "racesim_cli/" + t->test_suite_name() + "." + t->name() + "/";
  std::filesystem::create_directories(dir);
  return dir;
}

struct Result {
  int code;
  std::string out;
};

// Runs a shell command line, standard error joined to standard output.
inline Result shell(const std::string& cmd) {
  Result r{-1, ""};
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs racesim with `env` ("NAME=VALUE", may be empty) in its environment.
inline Result racesim_env(const std::string& env, const std::string& args) {
  return shell(env + (env.empty() ? "" : " ") + std::string(RACESIM_CLI) + " " + args);
}

inline Result racesim(const std::string& args) { return racesim_env("", args); }

inline std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = test_dir() + name;
  std::ofstream(path) << text;
  return path;
}

inline const std::string kExamples = std::string(RACESIM_SOURCE) + "/scenarios/examples/";

}  // namespace cli_process
