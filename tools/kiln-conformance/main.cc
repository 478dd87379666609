// kiln-conformance: runs the ONNX backend test models end to end through
// Kiln (import, O3, lowering, the loop-IR interpreter) and compares every
// output with the test's expected output. Each case runs in its own child
// process with a time limit, so crashes and hangs are counted, not fatal.
//
//   kiln-conformance [--filter REGEX] [--json report.json] [--jobs N]
//                    [--expected passing.txt] [--record passing.txt]
//
// Prints one line per case, a breakdown by failure stage, and the closing
// lines `N passed, M failed` and how many passed without input specialization
// (RunCase). With --expected, exits non-zero when a case
// listed there no longer passes (a regression).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tools/common/flags_usage.h"
#include "tools/kiln-conformance/conformance_case.h"
#include "tools/kiln-conformance/isolated_runner.h"

ABSL_FLAG(std::string, data, "/usr/share/libonnx-testdata/data",
          "root of the ONNX backend test data");
ABSL_FLAG(std::string, filter, "", "only cases whose name (suite/test) matches this regex");
ABSL_FLAG(bool, check_numerics, false,
          "also check every graph pass of each passing case for numeric drift against the model as "
          "imported (the interpreter, seeded inputs): a pass past the tolerance fails the case, "
          "naming the pass and the layer");
ABSL_FLAG(std::string, json, "", "write a JSON report to this file");
ABSL_FLAG(int, jobs, 2, "cases run in parallel (one child process each)");
ABSL_FLAG(int, timeout, 60, "seconds a case may take before it is killed");
ABSL_FLAG(std::string, expected, "",
          "file listing cases that must pass; a listed case failing is a regression");
ABSL_FLAG(std::string, record, "", "write the names of the passing cases to this file");
ABSL_FLAG(double, rtol, 1e-5, "relative tolerance for floating-point outputs");
ABSL_FLAG(double, atol, 1e-5, "absolute tolerance for floating-point outputs");
ABSL_FLAG(std::string, tolerances, "",
          "file of per-case tolerances: lines '<suite/test> <rtol> <atol> # why', for cases "
          "whose expected data is known to be imprecise (tests/conformance/tolerances.txt)");
ABSL_FLAG(std::string, backend, "native",
          "how cases run: native (LLVM code for this machine, loaded with LLJIT) or interp (the "
          "loop-IR interpreter)");

namespace fs = std::filesystem;
using kiln::conformance::CaseOutcome;
using kiln::conformance::Stage;

namespace {

constexpr const char* kSuites[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};

struct Case {
  std::string name;  // suite/test
  fs::path dir;
};

// The per-case tolerances of `path` (see --tolerances). Every line needs its reason after '#':
// a looser tolerance is a claim about the test's data, and the file is where it is argued.
bool ReadTolerances(const std::string& path,
                    std::map<std::string, kiln::conformance::Tolerance>* out, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read " + path;
    return false;
  }
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    size_t hash = line.find('#');
    std::string fields = line.substr(0, hash);
    if (fields.find_first_not_of(" \t") == std::string::npos) continue;
    std::istringstream parts(fields);
    std::string name;
    kiln::conformance::Tolerance tolerance;
    if (!(parts >> name >> tolerance.rtol >> tolerance.atol) || hash == std::string::npos ||
        line.find_first_not_of(" \t", hash + 1) == std::string::npos) {
      *error = path + ":" + std::to_string(number) + ": expected '<suite/test> <rtol> <atol> # why'";
      return false;
    }
    (*out)[name] = tolerance;
  }
  return true;
}

std::vector<Case> FindCases(const fs::path& root, const std::string& filter) {
  std::regex pattern(filter.empty() ? ".*" : filter);
  std::vector<Case> cases;
  for (const char* suite : kSuites) {
    fs::path dir = root / suite;
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (!fs::exists(entry.path() / "model.onnx")) continue;
      std::string name = std::string(suite) + "/" + entry.path().filename().string();
      if (std::regex_search(name, pattern)) cases.push_back(Case{name, entry.path()});
    }
  }
  std::sort(cases.begin(), cases.end(), [](const Case& a, const Case& b) { return a.name < b.name; });
  return cases;
}

// The comment that marks a case of an expectations file as passing only with specialization.
constexpr char kSpecializedMark[] = "specialized inputs";

// The cases an expectations file lists, each with whether it may need input specialization:
// lines `suite/test`, or `suite/test  # specialized inputs` for a case that passes only with
// the test's input values given to the importer (conformance_case.h).
std::map<std::string, bool> ReadNameList(const std::string& path) {
  std::map<std::string, bool> names;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t comment = line.find('#');
    std::string name = line.substr(0, comment);
    name.erase(name.find_last_not_of(' ') + 1);
    names[name] = comment != std::string::npos &&
                  line.find(kSpecializedMark, comment) != std::string::npos;
  }
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  kiln::tools::SetToolUsage(
      "kiln-conformance [--data=DIR] [--filter=REGEX] [--jobs=N] [...]\n"
      "Runs the ONNX backend tests through Kiln, as native code or with the interpreter "
      "(docs/conformance.md).",
      {__FILE__});
  absl::ParseCommandLine(argc, argv);

  std::vector<Case> cases = FindCases(absl::GetFlag(FLAGS_data), absl::GetFlag(FLAGS_filter));
  if (cases.empty()) {
    std::cerr << "kiln-conformance: no test cases under " << absl::GetFlag(FLAGS_data)
              << " match the filter\n";
    return 1;
  }

  kiln::driver::Backend backend;
  if (!kiln::driver::ParseBackend(absl::GetFlag(FLAGS_backend), &backend)) {
    std::cerr << "kiln-conformance: --backend must be native or interp, not '"
              << absl::GetFlag(FLAGS_backend) << "'\n";
    return 1;
  }
  kiln::conformance::Tolerance tolerance{absl::GetFlag(FLAGS_rtol), absl::GetFlag(FLAGS_atol)};
  std::map<std::string, kiln::conformance::Tolerance> overrides;
  if (!absl::GetFlag(FLAGS_tolerances).empty()) {
    std::string error;
    if (!ReadTolerances(absl::GetFlag(FLAGS_tolerances), &overrides, &error)) {
      std::cerr << "kiln-conformance: " << error << "\n";
      return 1;
    }
  }
  std::map<fs::path, kiln::conformance::Tolerance> tolerance_of_dir;
  for (const Case& c : cases) {
    auto it = overrides.find(c.name);
    tolerance_of_dir[c.dir] = it == overrides.end() ? tolerance : it->second;
  }
  kiln::conformance::IsolationLimits limits;
  limits.jobs = absl::GetFlag(FLAGS_jobs);
  limits.timeout = std::chrono::seconds(absl::GetFlag(FLAGS_timeout));

  std::vector<fs::path> dirs;
  for (const Case& c : cases) dirs.push_back(c.dir);
  std::vector<CaseOutcome> outcomes(cases.size());
  kiln::conformance::RunIsolated(
      dirs, limits,
      [&](const fs::path& dir) {
        CaseOutcome outcome = kiln::conformance::RunCase(dir, tolerance_of_dir.at(dir), backend);
        if (outcome.stage != Stage::kPassed || !absl::GetFlag(FLAGS_check_numerics)) return outcome;
        CaseOutcome drift = kiln::conformance::CheckNumerics(dir, tolerance_of_dir.at(dir));
        if (drift.stage == Stage::kPassed) return outcome;
        drift.message = absl::StrCat("numerics: ", drift.message);
        return drift;
      },
      [&](size_t index, const CaseOutcome& outcome) {
        outcomes[index] = outcome;
        std::cout << (outcome.stage == Stage::kPassed ? "PASS " : "FAIL ") << cases[index].name;
        if (outcome.stage != Stage::kPassed) {
          std::cout << " [" << kiln::conformance::StageName(outcome.stage) << "] "
                    << outcome.message;
        } else if (outcome.specialized_inputs) {
          std::cout << " [specialized inputs] without: " << outcome.message;
        }
        std::cout << std::endl;
      });

  std::map<std::string, int> by_stage;
  std::set<std::string> passing;
  int specialized = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (outcomes[i].stage == Stage::kPassed) {
      passing.insert(cases[i].name);
      if (outcomes[i].specialized_inputs) ++specialized;
    } else {
      ++by_stage[kiln::conformance::StageName(outcomes[i].stage)];
    }
  }
  int passed_unspecialized = static_cast<int>(passing.size()) - specialized;
  int failed = static_cast<int>(cases.size() - passing.size());
  std::cout << "\nfailures by stage:\n";
  for (const auto& [stage, count] : by_stage) std::cout << "  " << stage << ": " << count << "\n";

  int exit_code = 0;
  if (!absl::GetFlag(FLAGS_expected).empty()) {
    std::vector<std::string> regressions;
    std::set<std::string> selected;
    for (const Case& c : cases) selected.insert(c.name);
    std::map<std::string, bool> specialized_of;
    for (size_t i = 0; i < cases.size(); ++i) {
      specialized_of[cases[i].name] = outcomes[i].specialized_inputs;
    }
    for (const auto& [name, may_specialize] : ReadNameList(absl::GetFlag(FLAGS_expected))) {
      if (!selected.count(name)) continue;
      if (!passing.count(name)) {
        regressions.push_back(name);
      } else if (!may_specialize && specialized_of[name]) {
        regressions.push_back(absl::StrCat(name, " (passes only with ", kSpecializedMark, " now)"));
      }
    }
    if (!regressions.empty()) {
      std::cout << "\nregressions (listed in " << absl::GetFlag(FLAGS_expected)
                << " but failing):\n";
      for (const std::string& name : regressions) std::cout << "  " << name << "\n";
      exit_code = 1;
    }
  }
  if (!absl::GetFlag(FLAGS_record).empty()) {
    std::ofstream out(absl::GetFlag(FLAGS_record));
    out << "# ONNX backend tests that pass end to end through kiln-conformance; those marked\n"
        << "# '" << kSpecializedMark << "' pass only with the test's input values given to the importer.\n"
        << "# Regenerate with tests/conformance/update_conformance_expectations.sh.\n";
    for (size_t i = 0; i < cases.size(); ++i) {
      if (outcomes[i].stage != Stage::kPassed) continue;
      out << cases[i].name;
      if (outcomes[i].specialized_inputs) out << "  # " << kSpecializedMark;
      out << "\n";
    }
  }
  if (!absl::GetFlag(FLAGS_json).empty()) {
    nlohmann::json report;
    report["passed"] = passing.size();
    report["failed"] = failed;
    report["passed_without_specialization"] = passed_unspecialized;
    report["failures_by_stage"] = by_stage;
    nlohmann::json list = nlohmann::json::array();
    for (size_t i = 0; i < cases.size(); ++i) {
      list.push_back({{"name", cases[i].name},
                      {"stage", kiln::conformance::StageName(outcomes[i].stage)},
                      {"message", outcomes[i].message},
                      {"specialized_inputs", outcomes[i].specialized_inputs}});
    }
    report["cases"] = std::move(list);
    std::ofstream(absl::GetFlag(FLAGS_json)) << report.dump(2) << "\n";
  }
  std::cout << "\n" << passing.size() << " passed, " << failed << " failed" << std::endl;
  std::cout << passed_unspecialized << " passed without input specialization, " << specialized
            << " only with it" << std::endl;
  return exit_code;
}
