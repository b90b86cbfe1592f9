// SPDX-License-Identifier: MIT
#include "pack_command.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "hpcprof/schema/output_file.hpp"
#include "hpcprof/schema/packed_trace.hpp"
#include "hpcprof/schema/sqlite.hpp"
#include "messages.hpp"
#include "run_command.hpp"

namespace hpcprof::cli {

namespace {

int64_t fileSize(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 ? int64_t(st.st_size) : 0;
}

/// The trace's event count (track table), 0 if unknown.
int64_t eventCount(sqlite3* db) {
    schema::Statement s(db, "SELECT COALESCE(SUM(event_count), 0) FROM track");
    return s.step() ? s.int64(0) : 0;
}

std::string sizeText(int64_t bytes, int64_t events) {
    std::string text = fmt::format("{:.1f} MB", double(bytes) / 1e6);
    if (events > 0) text += fmt::format(", {:.2f} B/event", double(bytes) / double(events));
    return text;
}

} // namespace

CLI::App* addPackCommand(CLI::App& app, PackOptions& o) {
    auto* cmd = app.add_subcommand(
        "pack", "Write the packed (zstd) form of a trace; every command and the GUI open it");
    cmd->add_option("trace", o.trace, "Plain trace file")->required();
    cmd->add_option("-o,--output", o.output, "Packed file to write (default: TRACE.zst)");
    cmd->add_option("--level", o.level, "zstd level (1-19; higher is smaller and slower)")
        ->check(CLI::Range(1, 19))
        ->capture_default_str();
    cmd->add_option("-j,--threads", o.threads, "Compression threads (0: one)")
        ->check(CLI::Range(0, 64));
    cmd->add_flag("--whole", o.whole,
                  "Pack the SQLite file as one zstd frame (zstd -d gives it back) instead of column-wise");
    cmd->add_flag("--unpack", o.unpack,
                  "Write the plain SQLite trace of a packed one (default output: TRACE without .zst, or TRACE.hpcprof)");
    cmd->add_flag("--force", o.force, "Replace an existing output");
    return cmd;
}

namespace {

/// Copies the file `from` to `to` (which exists, empty).
Status copyFile(const std::string& from, const std::string& to) {
    std::FILE* in = std::fopen(from.c_str(), "rb");
    std::FILE* out = std::fopen(to.c_str(), "wb");
    bool ok = in && out;
    std::vector<char> buf(1 << 20);
    while (ok)
        if (size_t got = std::fread(buf.data(), 1, buf.size(), in))
            ok = std::fwrite(buf.data(), 1, got, out) == got;
        else
            break;
    ok = ok && !std::ferror(in);
    if (in) std::fclose(in);
    if (out && std::fclose(out) != 0) ok = false;
    return ok ? Status() : Status::error(std::strerror(errno));
}

/// `hpcprof pack --unpack`: the plain trace of a packed one, for sqlite3 and other SQL clients.
int unpackCommand(const PackOptions& o) {
    std::string output = o.output;
    if (output.empty()) {
        const bool zst = o.trace.size() > 4 && o.trace.compare(o.trace.size() - 4, 4, ".zst") == 0;
        output = zst ? o.trace.substr(0, o.trace.size() - 4) : o.trace + ".hpcprof";
    }
    auto unpacked = schema::unpackIfPacked(o.trace);
    if (unpacked && !unpacked.value()) unpacked = Status::error(o.trace + ": not a packed trace");
    if (!unpacked) {
        printMessage("pack", unpacked.status().message());
        return kExitUsage;
    }
    auto pending = schema::PendingOutput::begin(output, o.force);
    if (!pending) {
        printMessage("pack", pending.status().message());
        return kExitUsage;
    }
    Status s = copyFile(unpacked.value()->path(), pending->path());
    if (s.ok()) s = pending->commit();
    if (!s.ok()) {
        printMessage("pack", "cannot write " + output + ": " + s.message());
        return kExitUsage;
    }
    printMessage("pack", fmt::format("{} -> {} ({})", o.trace, output, sizeText(fileSize(output), 0)));
    return 0;
}

} // namespace

int packCommand(const PackOptions& o) {
    if (o.unpack) return unpackCommand(o);
    const std::string output = o.output.empty() ? o.trace + ".zst" : o.output;
    if (schema::isPackedTrace(o.trace)) {
        printMessage("pack", o.trace + ": already packed");
        return kExitUsage;
    }
    // Only a complete, readable trace is packed: a damaged one would stay damaged, unnoticed.
    auto db = schema::openTraceReadOnly(o.trace);
    if (!db) {
        printMessage("pack", db.status().message());
        return kExitUsage;
    }
    const int64_t events = eventCount(db.value().get());
    auto pending = schema::PendingOutput::begin(output, o.force);
    if (!pending) {
        printMessage("pack", pending.status().message());
        return kExitUsage;
    }
    auto form = schema::packTraceFile(o.trace, pending->path(), o.level, o.threads,
                                      o.whole ? schema::PackForm::Whole : schema::PackForm::Columns);
    Status s = form ? pending->commit() : form.status();
    if (!s.ok()) {
        printMessage("pack", "cannot write " + output + ": " + s.message());
        return kExitUsage;
    }
    printMessage("pack", fmt::format("{} ({}) -> {} ({}, {})", o.trace,
                                     sizeText(fileSize(o.trace), events), output,
                                     sizeText(fileSize(output), events),
                                     form.value() == schema::PackForm::Columns ? "column-wise" : "whole file"));
    return 0;
}

} // namespace hpcprof::cli
