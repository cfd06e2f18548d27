#include "strata/hub/model_reference.h"

#include <filesystem>

namespace strata::hub {
namespace {

// The Hub's repo name rules: letters, digits, '-', '_', '.'; no leading '.', no "--" or "..".
bool is_repo_part(const std::string& part) {
  if (part.empty() || part.size() > 96 || part.front() == '.' || part.front() == '-') return false;
  if (part.find("--") != std::string::npos || part.find("..") != std::string::npos) return false;
  for (const char c : part)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

}  // namespace

std::optional<ModelReference> parse_model_reference(const std::string& text) {
  std::error_code ec;
  if (std::filesystem::exists(text, ec)) return std::nullopt;
  ModelReference ref;
  std::string repo = text;
  if (const size_t colon = text.find(':'); colon != std::string::npos) {
    repo = text.substr(0, colon);
    ref.gguf_tag = text.substr(colon + 1);
    if (!is_repo_part(ref.gguf_tag)) return std::nullopt;
  }
  const size_t slash = repo.find('/');
  if (slash == std::string::npos || repo.find('/', slash + 1) != std::string::npos) return std::nullopt;
  if (!is_repo_part(repo.substr(0, slash)) || !is_repo_part(repo.substr(slash + 1))) return std::nullopt;
  ref.repo_id = repo;
  return ref;
}

}  // namespace strata::hub
