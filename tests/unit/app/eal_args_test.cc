// The EAL argument plan: what roceswitch adds on its own, and what it leaves to the user.
#include "app/eal_args.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace rs {
namespace {

bool has(const EalPlan& p, const std::string& a) { return std::find(p.args.begin(), p.args.end(), a) != p.args.end(); }
bool has_prefix(const EalPlan& p, const std::string& a) {
  return std::any_of(p.args.begin(), p.args.end(), [&](const std::string& s) { return s.rfind(a, 0) == 0; });
}

TEST(EalArgs, NoHugepagesAddsNoHugeAndSaysSo) {
  auto p = plan_eal_args({"roceswitch"}, 1, 0);
  EXPECT_TRUE(has(p, "--no-huge"));
  EXPECT_TRUE(has(p, "-m1024"));
  EXPECT_TRUE(has(p, "--no-pci"));
  EXPECT_TRUE(has_prefix(p, "--file-prefix=roceswitch-"));
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_NE(p.notes[0].find("--no-huge"), std::string::npos);
}

TEST(EalArgs, HugepagesPresentChangesNothingButLcores) {
  auto p = plan_eal_args({"roceswitch"}, 1, 512);
  EXPECT_FALSE(has(p, "--no-huge"));
  EXPECT_TRUE(p.notes.empty());
  EXPECT_TRUE(has_prefix(p, "--lcores=0@"));
}

TEST(EalArgs, UserChoicesWin) {
  auto p = plan_eal_args({"roceswitch", "--no-huge", "-m", "256", "-l", "0-2", "--file-prefix=x"}, 2, 0);
  EXPECT_EQ(std::count(p.args.begin(), p.args.end(), "--no-huge"), 1);
  EXPECT_FALSE(has(p, "-m1024"));
  EXPECT_FALSE(has_prefix(p, "--lcores="));
  EXPECT_FALSE(has_prefix(p, "--file-prefix=roceswitch-"));
  EXPECT_TRUE(p.notes.empty());
}

TEST(EalArgs, NamedPciDeviceKeepsPciScan) {
  auto p = plan_eal_args({"roceswitch", "-a", "0000:03:00.0"}, 1, 0);
  EXPECT_FALSE(has(p, "--no-pci"));
}

TEST(EalArgs, OneLcorePerWorkerPlusMain) {
  auto p = plan_eal_args({"roceswitch"}, 3, 16);
  auto it = std::find_if(p.args.begin(), p.args.end(), [](const std::string& s) { return s.rfind("--lcores=", 0) == 0; });
  ASSERT_NE(it, p.args.end());
  EXPECT_EQ(std::count(it->begin(), it->end(), '@'), 4);
}

}  // namespace
}  // namespace rs

namespace rs {
namespace {

TEST(EalArgs, CoreListIsNoticed) {
  EXPECT_FALSE(user_chose_lcores({"roceswitch"}));
  EXPECT_FALSE(user_chose_lcores({"roceswitch", "--no-huge"}));
  EXPECT_TRUE(user_chose_lcores({"roceswitch", "-l", "0-2"}));
  EXPECT_TRUE(user_chose_lcores({"roceswitch", "-l0-2"}));
  EXPECT_TRUE(user_chose_lcores({"roceswitch", "--lcores=0@0,1@1"}));
  EXPECT_FALSE(user_chose_lcores({"roceswitch", "--log-level=lib.*:error"}));
}

}  // namespace
}  // namespace rs
