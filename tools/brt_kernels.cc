// brt-kernels: lists what provider plugins can run.
//   brt-kernels [--markdown] [PROVIDER ...]   (default: cpu)
#include <cstdio>
#include <string>
#include <vector>

#include "brt/session.h"

int main(int argc, char** argv) {
  bool markdown = false;
  std::vector<std::string> providers;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--markdown")
      markdown = true;
    else if (a == "-h" || a == "--help")
      return std::puts("usage: brt-kernels [--markdown] [PROVIDER ...]"), 0;
    else
      providers.push_back(a);
  }
  if (providers.empty()) providers = {"cpu"};
  if (markdown) std::puts("| op | provider | device | dtypes |\n|---|---|---|---|");
  for (const std::string& p : providers) {
    auto kernels = brt::ListProviderKernels(p);
    if (!kernels.ok())
      return std::fprintf(stderr, "brt-kernels: %s\n", kernels.status().message().c_str()), 2;
    for (const brt::KernelListing& k : *kernels) {
      std::string dtypes;
      for (brt::DType t : k.dtypes)
        dtypes += (dtypes.empty() ? "" : markdown ? ", " : ",") + std::string(brt::DTypeName(t));
      if (markdown)
        std::printf("| `%s` | %s | %s | %s |\n", k.kind.c_str(), p.c_str(),
                    brt::DeviceKindName(k.device), dtypes.c_str());
      else
        std::printf("%-24s %-6s %-5s %s\n", k.kind.c_str(), p.c_str(),
                    brt::DeviceKindName(k.device), dtypes.c_str());
    }
  }
  return 0;
}
