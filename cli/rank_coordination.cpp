// SPDX-License-Identifier: MIT
#include "rank_coordination.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "hpcprof/launch/rank_identity.hpp"

namespace hpcprof::cli {

namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

// One id per job step, the same in every rank's environment.
std::string launcherJobId() {
    for (const char* var : {"PMIX_NAMESPACE", "OMPI_MCA_orte_ess_jobid", "PMI_JOBID"})
        if (auto v = env(var); !v.empty()) return v;
    if (auto job = env("SLURM_JOB_ID"); !job.empty()) {
        auto step = env("SLURM_STEP_ID");
        return "slurm-" + job + (step.empty() ? "" : "." + step);
    }
    if (auto torch = env("TORCHELASTIC_RUN_ID"); !torch.empty()) return "torch-" + torch;
    return "job";
}

std::string sanitize(std::string s) {
    for (char& c : s)
        if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_') c = '_';
    return s;
}

} // namespace

std::optional<RankLaunch> detectRankLaunch(const std::string& output) {
    agent::RankIdentity id = agent::rankFromEnvironment();
    if (id.rank < 0 || id.worldSize <= 1) return std::nullopt;
    RankLaunch l;
    l.rank = id.rank;
    l.worldSize = id.worldSize;
    l.jobId = sanitize(launcherJobId());
    std::error_code ec;
    l.rawDir = fs::absolute(output + ".raw", ec) / l.jobId;
    return l;
}

bool finishRankAndElectMerger(const RankLaunch& l) {
    std::string marker = (l.rawDir / ("done-" + std::to_string(l.rank))).string();
    int fd = ::open(marker.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0) ::close(fd);
    int done = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(l.rawDir, ec))
        if (e.path().filename().string().rfind("done-", 0) == 0) ++done;
    if (done < l.worldSize) return false;
    // Several wrappers may see the full set at once: mkdir is the atomic tie-breaker.
    return ::mkdir((l.rawDir / "merging").c_str(), 0755) == 0;
}

} // namespace hpcprof::cli
