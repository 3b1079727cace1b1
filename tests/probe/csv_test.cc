#include "csv.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace hase::probe {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Csv, EscapesPerRfc4180) {
  EXPECT_EQ(CsvEscape("plain"), "plain");
  EXPECT_EQ(CsvEscape("FusedConv(Add,Relu)"), "\"FusedConv(Add,Relu)\"");
  EXPECT_EQ(CsvEscape("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvEscape("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvLine({"a", "b,c", ""}), "a,\"b,c\",");
}

TEST(Csv, NumbersRoundTripAndNanIsEmpty) {
  EXPECT_EQ(FormatNumber(0.125), "0.125");
  EXPECT_EQ(FormatNumber(2.0), "2");
  EXPECT_EQ(FormatNumber(1e-7), "1e-07");
  EXPECT_EQ(FormatNumber(std::nan("")), "");
  EXPECT_EQ(FormatNumber(int64_t{25690112}), "25690112");
  const double v = 0.1 + 0.2;
  EXPECT_EQ(std::stod(FormatNumber(v)), v);
}

TEST(Csv, WriterWritesHeaderAndRowsAndRejectsWrongWidth) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "hase_probe_csv_test.csv").string();
  {
    auto w = CsvWriter::Create(path, {"gpu", "op", "latency_ms"}, {"# schema: hase-kernels 1"});
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE((*w)->WriteRow({"NVIDIA H200", "conv2d_add_relu", "0.0421"}).ok());
    Status bad = (*w)->WriteRow({"only", "two"});
    EXPECT_TRUE(bad.IsInvalidArgument());
    EXPECT_NE(bad.where().find("row 2"), std::string::npos);
    ASSERT_TRUE((*w)->Flush().ok());
  }
  EXPECT_EQ(ReadAll(path), "# schema: hase-kernels 1\ngpu,op,latency_ms\nNVIDIA H200,conv2d_add_relu,0.0421\n");
  std::filesystem::remove(path);
}

TEST(Csv, UnwritablePathIsIOError) {
  auto w = CsvWriter::Create("/nonexistent-dir/x.csv", {"a"});
  EXPECT_TRUE(w.status().IsIO());
}

}  // namespace
}  // namespace hase::probe
