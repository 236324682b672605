// Finds and dlopens provider plugins: an explicit path, BRT_PROVIDER_PATH,
// then next to libbrt (docs/writing-a-provider.md).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "brt/provider_abi.h"
#include "brt/status.h"

namespace brt::core {

struct LoadedProvider {
  std::string path;
  const BrtProviderApi* api = nullptr;
  std::string name() const { return api->name ? api->name : path; }
};

// name: "cpu" (-> libbrt_provider_cpu.so, searched in search_paths, then the
// directories in $BRT_PROVIDER_PATH, then the directory holding libbrt) or a
// path containing '/'. Plugins stay loaded for the life of the process.
Expected<std::shared_ptr<const LoadedProvider>> LoadProvider(
    const std::string& name, const std::vector<std::string>& search_paths);

}  // namespace brt::core
