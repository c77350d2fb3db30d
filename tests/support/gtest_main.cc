// main() for every GoogleTest binary: the EAL comes up once, before the first test.
#include <gtest/gtest.h>

#include "tests/support/eal_env.h"

namespace {
class EalEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { rs::test::init_test_eal(); }
  void TearDown() override { rs::test::shutdown_test_eal(); }
};
}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new EalEnvironment);
  return RUN_ALL_TESTS();
}
