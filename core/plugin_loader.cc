#include "plugin_loader.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstddef>
#include <cstdlib>
#include <map>
#include <mutex>

namespace brt::core {
namespace {

std::string LibbrtDirectory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&LibbrtDirectory), &info) == 0 || !info.dli_fname) return ".";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

bool IsFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<std::string> SearchDirectories(const std::vector<std::string>& search_paths) {
  std::vector<std::string> dirs = search_paths;
  if (const char* env = std::getenv("BRT_PROVIDER_PATH")) {
    std::string s = env;
    size_t start = 0;
    while (start <= s.size()) {
      size_t end = s.find(':', start);
      if (end == std::string::npos) end = s.size();
      if (end > start) dirs.push_back(s.substr(start, end - start));
      start = end + 1;
    }
  }
  dirs.push_back(LibbrtDirectory());
  return dirs;
}

Expected<std::shared_ptr<const LoadedProvider>> OpenPlugin(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const LoadedProvider>> cache;
  std::lock_guard<std::mutex> lock(mu);
  char resolved[4096];
  std::string key = ::realpath(path.c_str(), resolved) ? resolved : path;
  if (auto it = cache.find(key); it != cache.end()) return it->second;

  // RTLD_NODELETE: kernel states and static objects of the plugin may outlive
  // any one Session, so the library is never unmapped.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle) {
    const char* why = ::dlerror();
    return Status(StatusCode::kNotFound, "cannot load provider plugin '" + path +
                                             "': " + (why ? why : "unknown dlopen error") +
                                             " (a library it depends on may be missing: check "
                                             "`ldd " +
                                             path + "`)");
  }
  auto get = reinterpret_cast<BrtProviderGetFn>(::dlsym(handle, BRT_PROVIDER_ENTRY_SYMBOL));
  if (!get)
    return Status(
        StatusCode::kInvalidArgument,
        "'" + path + "' is not a brt provider: it does not export " + BRT_PROVIDER_ENTRY_SYMBOL);
  const BrtProviderApi* api = get(BRT_PROVIDER_ABI_VERSION);
  if (!api)
    return Status(StatusCode::kUnsupported, "provider '" + path + "' refused plugin ABI version " +
                                                std::to_string(BRT_PROVIDER_ABI_VERSION) +
                                                " spoken by this runtime");
  if (api->abi_version != BRT_PROVIDER_ABI_VERSION)
    return Status(StatusCode::kUnsupported, "provider '" + path + "' speaks plugin ABI version " +
                                                std::to_string(api->abi_version) +
                                                ", this runtime speaks version " +
                                                std::to_string(BRT_PROVIDER_ABI_VERSION));
  // Fields after kernel_info were appended to ABI v1: a plugin built against
  // an older header has a shorter table, and the core checks struct_size
  // before it uses any of them (BRT_STRUCT_HAS).
  constexpr size_t kRequired = offsetof(BrtProviderApi, kernel_info) + sizeof(api->kernel_info);
  if (api->struct_size < kRequired || !api->resolve_kernel || !api->device_count ||
      !api->kernel_count || !api->kernel_info)
    return Status(StatusCode::kUnsupported,
                  "provider '" + path + "' has an incomplete function table (" +
                      std::to_string(api->struct_size) + " bytes, at least " +
                      std::to_string(kRequired) + " expected)");
  auto provider = std::make_shared<LoadedProvider>();
  provider->path = key;
  provider->api = api;
  cache[key] = provider;
  return std::shared_ptr<const LoadedProvider>(provider);
}

}  // namespace

Expected<std::shared_ptr<const LoadedProvider>> LoadProvider(
    const std::string& name, const std::vector<std::string>& search_paths) {
  if (name.empty()) return Status(StatusCode::kInvalidArgument, "empty provider name");
  if (name.find('/') != std::string::npos) {
    if (!IsFile(name))
      return Status(StatusCode::kNotFound, "provider plugin '" + name + "' does not exist");
    return OpenPlugin(name);
  }
  std::string file = "libbrt_provider_" + name + ".so";
  std::string tried;
  for (const std::string& dir : SearchDirectories(search_paths)) {
    std::string candidate = dir + "/" + file;
    if (IsFile(candidate)) return OpenPlugin(candidate);
    tried += (tried.empty() ? "" : ", ") + dir;
  }
  return Status(StatusCode::kNotFound, "provider '" + name + "': " + file + " not found in " +
                                           tried + " (set BRT_PROVIDER_PATH or pass a path)");
}

}  // namespace brt::core
