// SPDX-License-Identifier: MIT
// The rule reference is generated from the rule table: docs/advice-rules.md must be what
// `hpcprof rules --format md` prints, and every threshold a rule uses must appear in its text.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "hpcprof/analyzer/advice.hpp"

using namespace hpcprof::analyzer;

TEST_CASE("docs/advice-rules.md is the generated rule reference", "[analyzer][advice][docs]") {
    std::ifstream in(std::string(HPCPROF_TEST_SOURCE_DIR) + "/docs/advice-rules.md");
    REQUIRE(in);
    std::stringstream doc;
    doc << in.rdbuf();
    INFO("docs/advice-rules.md is out of date: run scripts/update_docs.sh");
    CHECK(doc.str() == ruleReferenceMarkdown());
}

TEST_CASE("every rule's text names each of its thresholds and leaves no placeholder", "[analyzer][advice][docs]") {
    for (const auto& r : ruleReference()) {
        INFO(r.id);
        const std::string text = r.firesWhen + " " + r.gain + " " + r.details;
        for (const auto& p : r.parameters) {
            INFO(p.name);
            CHECK(text.find("{" + p.name + "}") != std::string::npos);
        }
        CHECK_FALSE(r.suggestion.empty());
        CHECK_FALSE(r.evidence.empty());
    }
    const std::string md = ruleReferenceMarkdown();
    for (const auto& r : ruleReference())
        for (const auto& p : r.parameters) CHECK(md.find("{" + p.name + "}") == std::string::npos);
}

TEST_CASE("the JSON rule reference lists every rule with its thresholds", "[analyzer][advice]") {
    auto doc = nlohmann::json::parse(ruleReferenceJson());
    REQUIRE(doc["rules"].size() == ruleReference().size());
    const auto& first = doc["rules"][0];
    CHECK(first["id"] == ruleReference()[0].id);
    bool sawSmallBytes = false;
    for (const auto& rule : doc["rules"])
        for (const auto& p : rule["parameters"])
            if (rule["id"] == "small-io" && p["name"] == "small_bytes") {
                CHECK(p["value"] == 65536.0);
                sawSmallBytes = true;
            }
    CHECK(sawSmallBytes);
}
