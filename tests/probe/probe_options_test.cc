#include "probe_options.h"

#include <gtest/gtest.h>

namespace hase::probe {
namespace {

TEST(ProbeOptions, KernelsDefaultsAndFlags) {
  auto o = ParseProbeArgs({"kernels", "--kernels", "a.json", "--kernels", "b.json", "--out",
                           "rows.csv", "--load", "idle;sm=0.5", "--reps", "11", "--no-tf32"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->command, Subcommand::kKernels);
  EXPECT_EQ(o->kernel_files, (std::vector<std::string>{"a.json", "b.json"}));
  EXPECT_EQ(o->rows_out, "rows.csv");
  ASSERT_EQ(o->schedule.size(), 2u);
  EXPECT_DOUBLE_EQ(o->schedule[1].sm, 0.5);
  EXPECT_EQ(o->reps, 11);
  EXPECT_EQ(o->warmup, 5);
  EXPECT_FALSE(o->tf32);
  EXPECT_EQ(o->device, 0);
}

TEST(ProbeOptions, MicroAndStressAndInfo) {
  auto m = ParseProbeArgs({"micro", "--out", "p.yaml", "--quick", "--device", "1"});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->command, Subcommand::kMicro);
  EXPECT_EQ(m->profile_out, "p.yaml");
  EXPECT_TRUE(m->quick);
  EXPECT_EQ(m->device, 1);

  auto s = ParseProbeArgs({"stress", "sm=0.5,dram=0.2", "--duration-s", "3"});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->command, Subcommand::kStress);
  EXPECT_DOUBLE_EQ(s->stress.sm, 0.5);
  EXPECT_DOUBLE_EQ(s->stress.dram, 0.2);
  EXPECT_DOUBLE_EQ(s->duration_s, 3);

  auto p = ParseProbeArgs({"plan", "--kernels", "k.json"});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->command, Subcommand::kPlan);
  EXPECT_EQ(p->kernel_files, std::vector<std::string>{"k.json"});

  auto i = ParseProbeArgs({"info"});
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(i->command, Subcommand::kInfo);
}

TEST(ProbeOptions, HelpIsNotAnError) {
  auto h = ParseProbeArgs({"kernels", "--help"});
  ASSERT_TRUE(h.ok());
  EXPECT_NE(h->help.find("--reps"), std::string::npos);
}

TEST(ProbeOptions, Errors) {
  EXPECT_TRUE(ParseProbeArgs({}).status().IsInvalidArgument());  // a subcommand is required
  EXPECT_TRUE(ParseProbeArgs({"frobnicate"}).status().IsInvalidArgument());
  EXPECT_TRUE(ParseProbeArgs({"kernels", "--out", "x.csv"}).status().IsInvalidArgument());
  EXPECT_TRUE(ParseProbeArgs({"kernels", "--kernels", "a", "--out", "b", "--reps", "0"})
                  .status().IsInvalidArgument());
  EXPECT_TRUE(ParseProbeArgs({"kernels", "--kernels", "a", "--out", "b", "--reps", "many"})
                  .status().IsInvalidArgument());
  auto bad_load = ParseProbeArgs({"kernels", "--kernels", "a", "--out", "b", "--load", "sm=3"});
  ASSERT_FALSE(bad_load.ok());
  EXPECT_NE(bad_load.status().where().find("--load"), std::string::npos);
  EXPECT_TRUE(ParseProbeArgs({"stress", "dram=x"}).status().IsInvalidArgument());
  EXPECT_TRUE(ParseProbeArgs({"micro"}).status().IsInvalidArgument());  // --out required
}

}  // namespace
}  // namespace hase::probe
