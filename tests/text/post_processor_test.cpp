// PostProcessor's pair templates (a cross-encoder's query and document as one sequence):
// TemplateProcessing's `pair`, BERT's and RoBERTa's fixed ones, and none for ByteLevel.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "strata/text/post_processor.h"

namespace strata::text {
namespace {

using Ids = std::vector<int32_t>;

TEST(PostProcessor, TemplatePairPlacesTokensAroundAndBetween) {
  const nlohmann::json config = nlohmann::json::parse(R"({
    "type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
               {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
    "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
             {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
             {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
    "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [101], "tokens": ["[CLS]"]},
                       "[SEP]": {"id": "[SEP]", "ids": [102], "tokens": ["[SEP]"]}}})");
  const PostProcessor pp = PostProcessor::from_json(config);
  Ids single{7, 8};
  pp.apply(single);
  EXPECT_EQ(single, (Ids{101, 7, 8, 102}));
  EXPECT_EQ(pp.apply_pair({7, 8}, {9}), (Ids{101, 7, 8, 102, 9, 102}));
}

TEST(PostProcessor, BertAndRobertaPairs) {
  const PostProcessor bert = PostProcessor::from_json({{"type", "BertProcessing"}, {"sep", {"[SEP]", 102}},
                                                       {"cls", {"[CLS]", 101}}});
  EXPECT_EQ(bert.apply_pair({7}, {9}), (Ids{101, 7, 102, 9, 102}));
  const PostProcessor roberta = PostProcessor::from_json({{"type", "RobertaProcessing"}, {"sep", {"</s>", 2}},
                                                          {"cls", {"<s>", 0}}});
  EXPECT_EQ(roberta.apply_pair({7}, {9}), (Ids{0, 7, 2, 2, 9, 2}));
}

TEST(PostProcessor, ByteLevelJoinsAPairAsItIs) {
  const PostProcessor pp = PostProcessor::from_json({{"type", "ByteLevel"}, {"trim_offsets", false}});
  EXPECT_EQ(pp.apply_pair({7, 8}, {9}), (Ids{7, 8, 9}));
  EXPECT_EQ(PostProcessor::from_json(nullptr).apply_pair({7}, {9}), (Ids{7, 9}));
}

}  // namespace
}  // namespace strata::text
