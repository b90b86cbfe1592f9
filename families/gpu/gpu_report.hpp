// SPDX-License-Identifier: MIT
// The gpu family's report facet, internal: the text, markdown and HTML forms of its section
// (gpu_report_tables.cpp), which the section (gpu_report.cpp) returns.
#pragma once

#include <string>

#include "gpu_section.hpp"

namespace hpcprof::report::detail {

/// Each empty when the analysis has no gpu section.
std::string gpuText(const analyzer::Analysis& a);
std::string gpuMarkdown(const analyzer::Analysis& a);
std::string gpuHtml(const analyzer::Analysis& a);

} // namespace hpcprof::report::detail
