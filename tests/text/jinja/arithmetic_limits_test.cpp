// Integer and size edge cases of the Jinja builtins, found by fuzz_jinja: each used to crash
// (SIGFPE, signed overflow, bad_variant_access) or hang; now they render or throw Error.
#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "strata/text/jinja/template.h"

namespace strata::jinja {
namespace {

std::string run(const std::string& source) { return render(source, nlohmann::ordered_json::object()); }

TEST(JinjaArithmeticLimits, MinIntFloorDividedByMinusOne) {
  EXPECT_THROW(run("{{ (-9223372036854775807 - 1) // -1 }}"), Error);
  EXPECT_EQ(run("{{ (-9223372036854775807 - 1) % -1 }}"), "0");
  EXPECT_EQ(run("{{ (-9223372036854775807 - 1) // 1 }}"), "-9223372036854775808");
  EXPECT_EQ(run("{{ -7 // 2 }} {{ -7 % 2 }}"), "-4 1");
}

TEST(JinjaArithmeticLimits, RepetitionCountThatWrapsTheSizeCheck) {
  // 2 * 2**63 wraps to 0 in size_t arithmetic; the repeat then ran for 2**63 rounds.
  EXPECT_THROW(run("{{ 'ab' * 9223372036854775807 }}"), Error);
  EXPECT_THROW(run("{{ [1, 2] * 9223372036854775807 }}"), Error);
  EXPECT_EQ(run("{{ 'ab' * 3 }}{{ 'x' * -1 }}"), "ababab");
  EXPECT_EQ(run("{{ [1] * 2 }}"), "[1, 1]");
}

TEST(JinjaArithmeticLimits, RangeEndingNearTheLargestInt) {
  EXPECT_EQ(run("{{ range(9223372036854775806, 9223372036854775807, 10) | list }}"), "[9223372036854775806]");
  EXPECT_EQ(run("{{ range(-9223372036854775807, -9223372036854775807 - 1, -10) | list }}"), "[-9223372036854775807]");
}

TEST(JinjaArithmeticLimits, TojsonIndentMustBeAnIntegerOrString) {
  EXPECT_THROW(run("{{ [1] | tojson(indent=1.5) }}"), Error);
  EXPECT_THROW(run("{{ [1] | tojson(indent=[2]) }}"), Error);
  EXPECT_THROW(run("{{ [1] | tojson(indent=1000000000000) }}"), Error);
  EXPECT_EQ(run("{{ [1] | tojson(indent=1) }}"), "[\n 1\n]");
  EXPECT_EQ(run("{{ [1] | tojson(indent='\t') }}"), "[\n\t1\n]");
}

}  // namespace
}  // namespace strata::jinja
