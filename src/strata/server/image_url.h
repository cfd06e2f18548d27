// The image of an OpenAI `image_url` content part, fetched and decoded under the server's limits:
// `data:image/...;base64,...` URLs always, `file://` paths only under --allowed-local-media-path
// (vLLM's flag). Remote http(s) URLs are refused: the server fetches nothing on a client's say.
#pragma once

#include <string>

#include "strata/image/rgb_image.h"
#include "strata/server/server_options.h"

namespace strata::server {

// A 400 (its message led by `what`, its param `field`) for a URL it does not take, bytes that are
// no JPEG or PNG, or an image over options.max_image_pixels.
RgbImage load_image_url(const std::string& url, const ImageInputOptions& options, const std::string& what,
                        const char* field);

// RFC 4648 base64 (padding optional, no whitespace); nullopt for anything else.
std::optional<std::vector<uint8_t>> decode_base64(std::string_view text);

}  // namespace strata::server
