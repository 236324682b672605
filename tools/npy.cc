#include "npy.h"

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

namespace brt::tools {
namespace {

struct Descr {
  const char* text;
  DType dtype;
};
constexpr Descr kDescrs[] = {
    {"<f4", DType::kF32}, {"<f2", DType::kF16},   {"<f8", DType::kF64}, {"|b1", DType::kI1},
    {"|i1", DType::kI8},  {"<i2", DType::kI16},   {"<i4", DType::kI32}, {"<i8", DType::kI64},
    {"|u1", DType::kU8},  {"<u2", DType::kU16},   {"<u4", DType::kU32}, {"<u8", DType::kU64},
    {"<c8", DType::kC64}, {"<c16", DType::kC128},
};

Status Bad(const std::string& path, const std::string& why) {
  return Status(StatusCode::kInvalidArgument, "'" + path + "': " + why);
}

}  // namespace

Expected<Tensor> ReadNpy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status(StatusCode::kNotFound, "cannot open '" + path + "'");
  char magic[8];
  if (!f.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    return Bad(path, "not a .npy file");
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t header_len = 0;
  if (major == 1) {
    unsigned char b[2];
    if (!f.read(reinterpret_cast<char*>(b), 2)) return Bad(path, "truncated header");
    header_len = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!f.read(reinterpret_cast<char*>(b), 4)) return Bad(path, "truncated header");
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  } else {
    return Bad(path, "unsupported .npy version " + std::to_string(major));
  }
  if (header_len > (1u << 20)) return Bad(path, "header too long");
  std::string header(header_len, '\0');
  if (!f.read(header.data(), header_len)) return Bad(path, "truncated header");

  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr'\\s*:\\s*'([^']*)'")))
    return Bad(path, "header has no descr");
  std::string descr = m[1];
  std::optional<DType> dtype;
  for (const Descr& d : kDescrs)
    if (descr == d.text) dtype = d.dtype;
  if (!dtype) {
    std::string known;
    for (const Descr& d : kDescrs) known += std::string(known.empty() ? "" : " ") + (d.text + 1);
    return Bad(
        path, "unsupported element type '" + descr + "' (supported: " + known + ", little-endian)");
  }
  if (std::regex_search(header, std::regex("'fortran_order'\\s*:\\s*True")))
    return Bad(path, "Fortran-order arrays are not supported; save with np.ascontiguousarray");
  if (!std::regex_search(header, m, std::regex("'shape'\\s*:\\s*\\(([^)]*)\\)")))
    return Bad(path, "header has no shape");
  std::vector<int64_t> shape;
  std::stringstream dims(m[1].str());
  std::string item;
  while (std::getline(dims, item, ',')) {
    size_t start = item.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    try {
      shape.push_back(std::stoll(item.substr(start)));
    } catch (...) {
      return Bad(path, "bad shape entry '" + item + "'");
    }
  }
  auto n = NumElements(shape);
  if (!n) return Bad(path, "bad shape");
  Tensor t = Tensor::Allocate(*dtype, shape);
  if (!t.defined()) return Status(StatusCode::kResourceExhausted, "'" + path + "': out of memory");
  if (t.num_bytes() &&
      !f.read(static_cast<char*>(t.data()), static_cast<std::streamsize>(t.num_bytes())))
    return Bad(path, "holds fewer bytes than its shape " + FormatShape(shape) + " needs");
  return t;
}

Status WriteNpy(const std::string& path, const Tensor& t) {
  if (t.device().kind != DeviceKind::kCpu)
    return Status(StatusCode::kInvalidArgument,
                  std::string("cannot write a tensor on ") + DeviceKindName(t.device().kind) +
                      " as .npy: copy it to the host first (RequestContext::OutputOnHost)");
  const char* descr = nullptr;
  for (const Descr& d : kDescrs)
    if (d.dtype == t.dtype()) descr = d.text;
  if (!descr)
    return Status(StatusCode::kUnsupported,
                  std::string("cannot write ") + DTypeName(t.dtype()) + " as .npy");
  std::string shape = "(";
  for (int64_t d : t.shape()) shape += std::to_string(d) + ",";
  if (t.shape().size() > 1) shape.pop_back();
  shape += ")";
  std::string header =
      "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so the data starts on a 64-byte boundary, header ends with '\n'.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) return Status(StatusCode::kInvalidArgument, "cannot write '" + path + "'");
  const uint16_t len = static_cast<uint16_t>(header.size());
  f.write("\x93NUMPY\x01\x00", 8);
  const char len_bytes[2] = {static_cast<char>(len & 0xFF), static_cast<char>(len >> 8)};
  f.write(len_bytes, 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(static_cast<const char*>(t.data()), static_cast<std::streamsize>(t.num_bytes()));
  if (!f) return Status(StatusCode::kInternal, "writing '" + path + "' failed");
  return Status::Ok();
}

}  // namespace brt::tools
