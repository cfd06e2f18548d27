// From a repo id to local files: use the Hugging Face cache when the snapshot already holds
// what Strata loads, else download the missing files into it (unless offline).
#pragma once

#include <string>
#include <vector>

#include "strata/hub/hub_options.h"
#include "strata/hub/model_reference.h"

namespace strata::hub {

// The path to load: the snapshot folder, or the one .gguf file that `ref.gguf_tag` picks.
std::string resolve_model(const ModelReference& ref, const HubOptions& options);

// The one .gguf in `files` whose name holds `tag` (case-insensitive); an Error lists the
// .gguf files when none or several match. An empty tag matches every .gguf.
std::string select_gguf(const std::vector<std::string>& files, const std::string& tag, const std::string& repo_id);

}  // namespace strata::hub
