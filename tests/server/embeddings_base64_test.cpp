// The base64 form of embeddings: little-endian f32 bytes, RFC 4648 with padding, as the
// openai client decodes them (numpy.frombuffer(base64.b64decode(s), dtype="float32")).
#include <gtest/gtest.h>

#include "strata/server/embeddings_endpoint.h"

namespace strata::server {
namespace {

TEST(EmbeddingsBase64, LittleEndianFloatsPadded) {
  EXPECT_EQ(base64_floats({}), "");
  EXPECT_EQ(base64_floats({1.0f}), "AACAPw==");          // 00 00 80 3f
  EXPECT_EQ(base64_floats({1.0f, -2.0f}), "AACAPwAAAMA=");  // ... 00 00 00 c0
  EXPECT_EQ(base64_floats({0.5f, 0.25f, 2.0f}), "AAAAPwAAgD4AAABA");
}

}  // namespace
}  // namespace strata::server
