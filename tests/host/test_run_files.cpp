// What a run leaves for programs to read, read back the way they read it: the telemetry CSV
// through the one reader by column name (telemetry_table.hpp), the run summary's JSON
// (run_summary.hpp, json.hpp).
#include <gtest/gtest.h>
#include <spdlog/logger.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "heft/host/json.hpp"
#include "heft/host/run_summary.hpp"
#include "heft/host/telemetry_table.hpp"

namespace heft::host {
namespace {

std::string Fresh(const std::string& name) {
  const std::string path = testing::TempDir() + "/" + name;
  std::filesystem::remove(path);
  return path;
}

// Fails if the reader finds columns by position instead of name, reads a name as a number,
// keeps a torn row (another cell count) or does not count it, or loses a number's digits.
TEST(TelemetryTable, ReadsByNameLeavesTornRowsOutAndCountsThem) {
  const std::string path = Fresh("table_reader.csv");
  std::ofstream(path) << "t_ns,state,link_mass_kg\n"
                      << "3000000,estimating,6.94000001\n"
                      << "6000000,holding\n"  // torn: a killed writer's last line
                      << "9000000,holding,6.94\n";
  const TelemetryTable t = ReadTelemetryTable(path);
  ASSERT_TRUE(t.ok);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.left_out, 1u);
  EXPECT_TRUE(t.has("link_mass_kg"));
  EXPECT_FALSE(t.has("link_mass"));
  EXPECT_EQ(t.number(0, "link_mass_kg"), 6.94000001);
  EXPECT_EQ(t.number(1, "t_ns"), 9e6);
  EXPECT_TRUE(std::isnan(t.number(0, "state")));  // a name is not a number
  EXPECT_TRUE(std::isnan(t.number(0, "no_such_column")));
  EXPECT_EQ(t.cell(1, "state"), "holding");
  EXPECT_EQ(t.cell(0, "no_such_column"), "");
  EXPECT_DOUBLE_EQ(t.seconds("t_ns").back(), 9e-3);
  EXPECT_FALSE(ReadTelemetryTable(Fresh("table_missing.csv")).ok);
}

// Fails if the summary's path is not beside the telemetry, a counter does not read back exactly
// (integers up to 2⁵³), a string's escapes do not survive, or a half-written file can be seen.
TEST(RunSummary, WrittenWholeBesideTheTelemetryAndReadBackExactly) {
  EXPECT_EQ(SummaryPath("/tmp/run.csv"), "/tmp/run.summary.json");
  EXPECT_EQ(SummaryPath("/tmp/run"), "/tmp/run.summary.json");
  Json summary;
  summary["drivers"]["published"] = Json::Of(9007199254740991.0);  // 2⁵³ − 1
  summary["drivers"]["lost_samples"] = Json::Of(0.0);
  summary["buses"]["can0"]["frames"] = Json::Of(123456789.0);
  summary["candump"]["path"] = Json::Of(std::string("/tmp/a \"b\"\n.log"));
  summary["simulation"]["unstable_at"] = Json::Of(-1.0);
  summary["drivers"]["published"] = Json::Of(9007199254740991.0);  // set again: replaced, not added
  EXPECT_EQ(summary.Find("drivers")->object.size(), 2u);
  const std::string path = Fresh("run.summary.json");
  auto log = std::make_shared<spdlog::logger>("test");
  ASSERT_TRUE(WriteSummary(*log, path, summary));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string error;
  const std::optional<Json> back = ParseJson(text, &error);
  ASSERT_TRUE(back.has_value()) << error << "\n" << text;
  EXPECT_EQ(back->Find("drivers")->Number("published"), 9007199254740991.0);
  EXPECT_EQ(back->Find("drivers")->Number("lost_samples", -1), 0.0);
  EXPECT_EQ(back->Find("buses")->Find("can0")->Number("frames"), 123456789.0);
  EXPECT_EQ(back->Find("candump")->String("path"), "/tmp/a \"b\"\n.log");
  EXPECT_EQ(back->Find("simulation")->Number("unstable_at"), -1.0);
  EXPECT_EQ(WriteJson(*back), WriteJson(summary));  // the writer and the reader agree
  EXPECT_NE(text.find("\"published\":9007199254740991"), std::string::npos) << text;
}

}  // namespace
}  // namespace heft::host
