#include "hase/predict/training_set.h"

#include <gtest/gtest.h>

#include "hase/predict/csv.h"

namespace hase::predict {
namespace {

const char* kHeader =
    "source,gpu,family,op,dtype,n,c,h,w,k,r,s,stride_h,stride_w,pad_h,pad_w,groups,gemm_batch,"
    "gemm_m,gemm_n,gemm_k,elements,inner,sm_active,includes_transfer,latency_ms,flags\n";

TEST(TrainingSetTest, ParsesRowsAndDerivesFlopsAndBytes) {
  std::string text = std::string("# schema: hase-kernels 1\n") + kHeader +
                     "neusight,T4,conv,conv2d,float,2,3,8,8,4,3,3,1,1,1,1,1,,,,,,,,0,0.5,\n"
                     "neusight,T4,gemm,linear,,,,,,,,,,,,,,1,64,32,16,,,,0,0.25,suspect_x\n"
                     "bencyq_hase,A100,elementwise,add,float,,,,,,,,,,,,,,,,,1000,,0.4,1,2.0,\n";
  auto rows = ParseTrainingCsv(text, "t.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 3u);
  const KernelSample& conv = (*rows)[0];
  EXPECT_EQ(conv.family, KernelFamily::kConv);
  EXPECT_EQ(conv.out_h(), 8);  // (8 + 2 - 2 - 1)/1 + 1
  // flops = 2 · n k oh ow · c r s = 2 · 2·4·8·8 · 3·3·3 = 27648
  EXPECT_DOUBLE_EQ(conv.flops, 27648);
  // bytes = 4 · (2·3·8·8 + 4·3·3·3 + 2·4·8·8) = 4 · (384 + 108 + 512) = 4016
  EXPECT_DOUBLE_EQ(conv.bytes, 4016);
  const KernelSample& gemm = (*rows)[1];
  EXPECT_DOUBLE_EQ(gemm.flops, 2.0 * 64 * 32 * 16);
  EXPECT_DOUBLE_EQ(gemm.bytes, 4.0 * (64 * 16 + 16 * 32 + 64 * 32));
  EXPECT_TRUE(gemm.Suspect());
  const KernelSample& add = (*rows)[2];
  EXPECT_DOUBLE_EQ(add.bytes, 4.0 * 1000 * 3);  // two inputs + one output
  EXPECT_TRUE(add.includes_transfer);
  ASSERT_TRUE(add.load.sm_active.has_value());
  EXPECT_DOUBLE_EQ(*add.load.sm_active, 0.4);
  EXPECT_FALSE(add.load.dram_active.has_value());  // empty = unknown, not 0
  EXPECT_EQ(add.where, "t.csv:5");
}

TEST(TrainingSetTest, RoundTripsThroughFormat) {
  std::string text = std::string(kHeader) +
                     "neusight,T4,conv,conv2d,float,2,3,8,8,4,3,3,2,2,1,1,1,,,,,,,,0,0.5,\n";
  auto rows = ParseTrainingCsv(text, "a.csv");
  ASSERT_TRUE(rows.ok());
  auto again = ParseTrainingCsv(FormatTrainingCsv(*rows), "b.csv");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ(ShapeKey((*again)[0]), ShapeKey((*rows)[0]));
  EXPECT_DOUBLE_EQ((*again)[0].latency_ms, 0.5);
  EXPECT_DOUBLE_EQ((*again)[0].flops, (*rows)[0].flops);
}

TEST(TrainingSetTest, MalformedRowNamesTheLine) {
  std::string text = std::string(kHeader) +
                     "neusight,T4,conv,conv2d,float,2,3,8,8,4,3,3,1,1,1,1,1,,,,,,,,0,0.5,\n"
                     "neusight,T4,conv,conv2d,float,2,x3,8,8,4,3,3,1,1,1,1,1,,,,,,,,0,0.5,\n";
  auto rows = ParseTrainingCsv(text, "bad.csv");
  ASSERT_FALSE(rows.ok());
  EXPECT_TRUE(rows.status().IsParse());
  EXPECT_EQ(rows.status().where(), "bad.csv:3");
  EXPECT_NE(rows.status().message().find("'c'"), std::string::npos);

  auto short_row = ParseTrainingCsv(std::string(kHeader) + "neusight,T4,conv\n", "s.csv");
  ASSERT_FALSE(short_row.ok());
  EXPECT_EQ(short_row.status().where(), "s.csv:2");

  auto neg = ParseTrainingCsv(
      std::string(kHeader) + "neusight,T4,conv,conv2d,float,,,,,,,,,,,,,,,,,,,,0,-1,\n", "n.csv");
  ASSERT_FALSE(neg.ok());
  EXPECT_EQ(neg.status().where(), "n.csv:2");

  auto fam = ParseTrainingCsv(
      std::string(kHeader) + "neusight,T4,convolution,conv2d,float,,,,,,,,,,,,,,,,,,,,0,1,\n",
      "f.csv");
  ASSERT_FALSE(fam.ok());
  EXPECT_NE(fam.status().message().find("unknown family"), std::string::npos);

  auto missing = ParseTrainingCsv("source,gpu,family,op\nx,T4,conv,conv2d\n", "m.csv");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("latency_ms"), std::string::npos);
}

TEST(CsvTest, QuotedFieldsWithCommasQuotesAndNewlines) {
  auto t = CsvTable::Parse("a,b\n\"x, y\",\"he said \"\"hi\"\"\"\n\"multi\nline\",2\n", "q.csv");
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->rows().size(), 2u);
  EXPECT_EQ(t->rows()[0].fields[0], "x, y");
  EXPECT_EQ(t->rows()[0].fields[1], "he said \"hi\"");
  EXPECT_EQ(t->rows()[1].fields[0], "multi\nline");
  EXPECT_EQ(t->rows()[1].line, 3);
  auto bad = CsvTable::Parse("a,b\n\"open,1\n", "u.csv");
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace hase::predict
