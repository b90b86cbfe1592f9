// SPDX-License-Identifier: MIT
// Robustness suite (issue 17): runs one hpcprof reader (report, diff, export, view, merge,
// import, hpcprof-gui) on one input and checks what every reader promises for any input: an
// expected exit code (never a signal, never a hang), one line on stderr when it refuses, output
// that parses when it writes some, and no terminal control bytes in what reaches a terminal.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "process_runner.hpp"

namespace hpcprof::test {

/// What a reader writes to stdout (or to the file it is given), and so how it is checked.
enum class Output {
    None,   ///< nothing to check but the messages
    Text,   ///< text or markdown: UTF-8 without control characters but line feeds
    Html,   ///< like Text
    Json,   ///< a report or diff document: must parse, and is kept for schema validation
    Junit,  ///< must be well-formed XML (checked in a batch by validateQueued)
    Chrome, ///< an export: must parse as JSON
    Png,    ///< a screenshot: a PNG file
};

/// Bytes a terminal would act on, or that are not UTF-8: control characters other than line
/// feed (C0, DEL, C1 as UTF-8), and invalid UTF-8. Empty when `text` is clean, else a
/// description of the first one. Written independently of the code under test.
std::string unsafeBytes(const std::string& text);

/// The outcome classes of the corpus: a valid input gives 0 (3 with a failing gate), a refused
/// one 2, a damaged one either.
enum class Outcome { Valid, Refused, Either };

class ReaderRunner {
  public:
    explicit ReaderRunner(const std::filesystem::path& scratch) : m_scratch(scratch) {}

    /// Runs `argv` (under timeout(1)), checks the exit code is one of `allowed`, that a refusal
    /// (exit 2) is one line on stderr starting with "hpcprof" and mentioning `refusalText` when
    /// given, that stdout and stderr are terminal-safe, and the output for `kind`: stdout, or
    /// `outputFile` when given (which must not exist after a refusal).
    ProcessResult run(const std::vector<std::string>& argv, const std::vector<int>& allowed,
                      Output kind = Output::None, const std::string& outputFile = {},
                      const std::string& refusalText = {},
                      const std::vector<std::string>& env = {});

    /// The exit codes an outcome allows for a reader that gates (3) or not.
    static std::vector<int> codes(Outcome o, bool gated = false);

    /// Validates the queued JUnit documents (well-formed XML) and JSON reports (against
    /// docs/report-schema.json) with python3, in one process each; skipped with a warning
    /// when python3 (or its jsonschema module) is missing.
    void validateQueued();

    /// Fails if `dir` holds a temporary file a reader left behind (*.tmp-*).
    static void checkNoLeftovers(const std::filesystem::path& dir);

  private:
    std::filesystem::path m_scratch;
    int m_next = 0;
    std::vector<std::string> m_xml, m_reports;
};

std::string guiBinary();
bool haveGui();
bool haveProgram(const std::string& name);

} // namespace hpcprof::test
