#include "lora/lora_test_support.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace strata::test {

std::string f32_config_copy(const std::string& base) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(temp_dir()) / ("lora_base_" + base);
  fs::create_directories(dir);
  std::ifstream in(fixture_path("hf/" + base + "/config.json"));
  nlohmann::json config = nlohmann::json::parse(in);
  config["dtype"] = "float32";
  write_file_atomically((dir / "config.json").string(), config.dump(2));
  const fs::path weights = dir / "model.safetensors";
  if (!fs::exists(weights)) {  // a link made aside and renamed in: tests of other processes race here
    const fs::path link = weights.string() + ".tmp-" + per_test_name("link");
    fs::remove(link);
    fs::create_symlink(fs::absolute(fixture_path("hf/" + base + "/model.safetensors")), link);
    fs::rename(link, weights);
  }
  return dir.string();
}


}  // namespace strata::test
