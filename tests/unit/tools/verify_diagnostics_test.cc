// kiln-opt --verify-diagnostics: expectations as MLIR writes them, the
// diagnostics read from kiln-opt's stderr with the lines they are tied to,
// and the messages a mismatch gives.
#include "tools/kiln-opt/verify_diagnostics.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace kiln_opt {
namespace {

std::vector<int> ExpectedLines(const ExpectationList& list) {
  std::vector<int> lines;
  for (const Expectation& expectation : list.expectations) lines.push_back(expectation.line);
  return lines;
}

TEST(ParseExpectationsTest, DesignatorsAsMlirWritesThem) {
  ExpectationList list = ParseExpectations(
      "line 1\n"
      "line 2 // expected-error {{on two}}\n"
      "// expected-error@-2 {{on one}}\n"
      "// expected-warning @+2 {{on six}}\n"
      "// expected-note@above {{above: one, skipping lines with expectations}}\n"
      "line 6\n"
      "// expected-error@below {{below: eight}}\n"
      "line 8\n"
      "// expected-error@unknown {{anywhere}}\n");
  EXPECT_TRUE(list.malformed.empty());
  ASSERT_EQ(list.expectations.size(), 6u);
  EXPECT_EQ(ExpectedLines(list), (std::vector<int>{2, 1, 6, 1, 8, 0}));
  EXPECT_EQ(list.expectations[0].substring, "on two");
  EXPECT_EQ(list.expectations[2].severity, Severity::kWarning);
  EXPECT_EQ(list.expectations[3].severity, Severity::kNote);
  EXPECT_EQ(list.expectations[1].comment_line, 3);
}

TEST(ParseExpectationsTest, TheMessageRunsToTheLastClosingBraces) {
  ExpectationList list = ParseExpectations("x // expected-error {{pads={{0, 1}} here}}  \n");
  ASSERT_EQ(list.expectations.size(), 1u);
  EXPECT_EQ(list.expectations[0].substring, "pads={{0, 1}} here");
}

TEST(ParseExpectationsTest, ProseMentioningExpectationsIsIgnored) {
  ExpectationList list = ParseExpectations(
      "// Each case carries an expected-error comment.\n"
      "// unexpected-error {{not one}}\n"
      "// expected-errors {{not one either}}\n"
      "// expected-remark {{MLIR's, not Kiln's}}\n");
  EXPECT_TRUE(list.expectations.empty());
  EXPECT_TRUE(list.malformed.empty());
}

TEST(ParseExpectationsTest, MalformedExpectationsAreReportedWithTheirLine) {
  ExpectationList list = ParseExpectations(
      "// expected-error@-1 {{before the first line}}\n"
      "// expected-error@sideways {{x}}\n"
      "// expected-error {{no closing\n"
      "// expected-error-re {{a.*}}\n"
      "// expected-error {{}}\n"
      "// expected-error@+1\n"
      "// expected-error {single}\n"
      "// expected-error@below {{nothing below}}\n");
  EXPECT_TRUE(list.expectations.empty());
  ASSERT_EQ(list.malformed.size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(list.malformed[i].line, i + 1) << i;
  EXPECT_NE(list.malformed[1].message.find("unknown designator '@sideways'"), std::string::npos);
}

TEST(LinesWritingSpanTest, SpanCommentsNamingTheSpanInEveryForm) {
  const std::string text =
      "%0 = add(%x, %y) /* si=add */;\n"          // 1: bare
      "%1 = nn.relu(%0) /* si=add:2:3-2:9 */;\n"  // 2: with a range
      "%2 = exp(%1) /* si=[relu, add] */;\n"      // 3: sequential
      "%3 = exp(%2) /* si=\"add\" */;\n"          // 4: quoted
      "let %v = %3 /* let_si=add */;\n"           // 5: a let's span
      "%4 = add_n(%3) /* si=add_n */;\n"          // 6: a longer name
      "%5 = exp(%4) /* si=other */; // add\n";    // 7: outside a span comment
  EXPECT_EQ(LinesWritingSpan(text, "add"), (std::vector<int>{1, 2, 3, 4, 5}));
  EXPECT_EQ(LinesWritingSpan(text, "add_n"), (std::vector<int>{6}));
  EXPECT_TRUE(LinesWritingSpan(text, "missing").empty());
}

TEST(ParseReportedStderrTest, ParseErrorsAreTiedToTheirLineAndOwnTheirExcerpt) {
  ReportedStderr reported = ParseReportedStderr(
      "kiln-opt: in.kir:4:30: error: expected a dtype, found 'float33'\n"
      "def @main(%x: Tensor[(1, 2), float33]) {\n"
      "                             ^\n",
      "", "in.kir");
  ASSERT_EQ(reported.diagnostics.size(), 1u);
  EXPECT_EQ(reported.diagnostics[0].severity, Severity::kError);
  EXPECT_EQ(reported.diagnostics[0].lines, (std::vector<int>{4}));
  EXPECT_EQ(reported.diagnostics[0].text, "in.kir:4:30: error: expected a dtype, found 'float33'");
  EXPECT_EQ(reported.other, "");
}

TEST(ParseReportedStderrTest, ErrorsLocatedElsewhereAreTiedToNoLine) {
  ReportedStderr reported = ParseReportedStderr(
      "kiln-opt: pipeline:1:1: error: unknown pass 'Bogus'; valid passes: A, B\n"
      "Bogus\n"
      "^\n",
      "", "in.kir");
  ASSERT_EQ(reported.diagnostics.size(), 1u);
  EXPECT_TRUE(reported.diagnostics[0].lines.empty());
  EXPECT_EQ(reported.other, "");
}

TEST(ParseReportedStderrTest, MessagesNamingSpansAreTiedToWhereTheSpansAreWritten) {
  const std::string input =
      "def @main(%x: Tensor[(2), float32], %y: Tensor[(3), float32]) {\n"
      "  %0 = add(%x, %y) /* si=sum */;\n"
      "  broadcast_to(1f, shape=(4096, 2048)) /* si=big */\n"
      "}\n";
  ReportedStderr reported = ParseReportedStderr(
      "kiln-opt: pass 'InferType' failed: type error at add (span sum): shapes (2) and (3) do "
      "not broadcast\n"
      "kiln-opt: note: FoldConstant: broadcast_to left unfolded (si=[big])\n"
      "kiln-opt: warning: FuseOps: declined (si=[sum, big])\n"
      "kiln-opt: pass 'InferType' failed: type error at add: add expects 2 arguments, got 1\n"
      "kiln-opt: reproducer written to /tmp/x.kir\n"
      "Pass timing: 1 ms\n",
      input, "in.kir");
  ASSERT_EQ(reported.diagnostics.size(), 4u);
  EXPECT_EQ(reported.diagnostics[0].severity, Severity::kError);
  EXPECT_EQ(reported.diagnostics[0].lines, (std::vector<int>{2}));
  EXPECT_EQ(reported.diagnostics[1].severity, Severity::kNote);
  EXPECT_EQ(reported.diagnostics[1].lines, (std::vector<int>{3}));
  EXPECT_EQ(reported.diagnostics[2].severity, Severity::kWarning);
  EXPECT_EQ(reported.diagnostics[2].lines, (std::vector<int>{2, 3}));
  EXPECT_TRUE(reported.diagnostics[3].lines.empty());
  EXPECT_EQ(reported.other, "kiln-opt: reproducer written to /tmp/x.kir\nPass timing: 1 ms\n");
}

ReportedDiagnostic Reported(Severity severity, std::string text, std::vector<int> lines) {
  ReportedDiagnostic diagnostic;
  diagnostic.severity = severity;
  diagnostic.text = std::move(text);
  diagnostic.lines = std::move(lines);
  return diagnostic;
}

TEST(VerifyDiagnosticsTest, EveryExpectationMatchedByOneDiagnosticPasses) {
  ExpectationList expected = ParseExpectations(
      "a // expected-error {{first}}\n"
      "b // expected-note {{left unfolded}}\n"
      "// expected-error@unknown {{unknown pass}}\n");
  std::vector<ReportedDiagnostic> reported = {
      Reported(Severity::kNote, "note: FoldConstant: left unfolded (si=[b])", {2}),
      Reported(Severity::kError, "in.kir:1:3: error: first", {1}),
      Reported(Severity::kError, "pipeline:1:1: error: unknown pass 'X'", {}),
  };
  EXPECT_TRUE(VerifyDiagnostics(expected, reported, "in.kir").empty());
}

TEST(VerifyDiagnosticsTest, SeverityLineAndSubstringMustAllMatch) {
  ExpectationList expected = ParseExpectations(
      "a // expected-warning {{first}}\n"
      "b // expected-error {{second}}\n"
      "c // expected-error {{third}}\n");
  std::vector<ReportedDiagnostic> reported = {
      Reported(Severity::kError, "in.kir:1:1: error: first", {1}),  // a warning expected
      Reported(Severity::kError, "in.kir:2:1: error: other", {2}),  // another message
      Reported(Severity::kError, "pass failed: third", {}),         // tied to no line
  };
  std::vector<std::string> failures = VerifyDiagnostics(expected, reported, "in.kir");
  ASSERT_EQ(failures.size(), 6u);
  EXPECT_EQ(failures[0], "in.kir:1: error: expected warning \"first\" was not produced");
  EXPECT_EQ(failures[1], "in.kir:2: error: expected error \"second\" was not produced");
  EXPECT_EQ(failures[2],
            "in.kir:3: error: expected error \"third\" was not produced; a matching error was "
            "reported tied to no line");
  EXPECT_EQ(failures[3], "in.kir:1: error: unexpected error (on line 1): in.kir:1:1: error: first");
  EXPECT_EQ(failures[4], "in.kir:2: error: unexpected error (on line 2): in.kir:2:1: error: other");
  EXPECT_EQ(failures[5],
            "in.kir: error: unexpected error (tied to no line): pass failed: third (expect it "
            "with @unknown)");
}

TEST(VerifyDiagnosticsTest, TwoExpectationsNeedTwoDiagnostics) {
  ExpectationList expected = ParseExpectations(
      "a\n"
      "// expected-error@above {{boom}}\n"
      "// expected-error@-2 {{boom}}\n");
  std::vector<ReportedDiagnostic> reported = {Reported(Severity::kError, "boom", {1})};
  std::vector<std::string> failures = VerifyDiagnostics(expected, reported, "in.kir");
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0],
            "in.kir:1: error: expected error \"boom\" was not produced (expectation written on "
            "line 3)");
}

TEST(VerifyDiagnosticsTest, MalformedExpectationsFail) {
  ExpectationList expected = ParseExpectations("// expected-error@nowhere {{x}}\n");
  std::vector<std::string> failures = VerifyDiagnostics(expected, {}, "in.kir");
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].rfind("in.kir:1: error: malformed expectation: unknown designator", 0), 0u)
      << failures[0];
}

}  // namespace
}  // namespace kiln_opt
