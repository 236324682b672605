// .safetensors reading and writing (include/brt/safetensors.h). The header is
// parsed by a small JSON reader that knows only what the format uses
// (objects, arrays, strings, integers) and bounds its depth, so a hostile
// file ends in a Status, never a crash.
#include "brt/safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>

#include "format.h"

namespace brt {
namespace {

constexpr uint64_t kMaxHeaderBytes = 100u << 20;  // the safetensors package's own limit
constexpr int kMaxDepth = 8;

struct DTypeCode {
  const char* code;
  DType dtype;
};
constexpr DTypeCode kDTypeCodes[] = {
    {"F64", DType::kF64}, {"F32", DType::kF32}, {"F16", DType::kF16}, {"BF16", DType::kBF16},
    {"I64", DType::kI64}, {"I32", DType::kI32}, {"I16", DType::kI16}, {"I8", DType::kI8},
    {"U8", DType::kU8},   {"U16", DType::kU16}, {"U32", DType::kU32}, {"U64", DType::kU64},
    {"BOOL", DType::kI1}, {"C64", DType::kC64},
};

// An object's members are a struct of their own: a std::pair holding the
// still-incomplete Json does not compile with clang (the fuzzer's compiler).
struct JsonMember;
struct Json {
  enum Kind { kNull, kBool, kInt, kString, kArray, kObject } kind = kNull;
  int64_t number = 0;
  std::string text;
  std::vector<Json> items;
  std::vector<JsonMember> members;
};
struct JsonMember {
  std::string key;
  Json value;
};

class JsonReader {
 public:
  explicit JsonReader(std::string_view s) : s_(s) {}

  Expected<Json> Document() {
    Json value;
    BRT_RETURN_IF_ERROR(Value(value, 0));
    SkipSpace();
    if (pos_ != s_.size()) return Error("unexpected text after the header object");
    return value;
  }

 private:
  Status Error(const std::string& what) const {
    return Status(StatusCode::kInvalidArgument,
                  "malformed header JSON at byte " + std::to_string(pos_) + ": " + what);
  }
  void SkipSpace() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t'))
      ++pos_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == c) return ++pos_, true;
    return false;
  }
  bool Word(std::string_view w) {
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }

  Status Value(Json& out, int depth) {
    if (depth > kMaxDepth) return Error("nested deeper than " + std::to_string(kMaxDepth));
    SkipSpace();
    if (pos_ >= s_.size()) return Error("unexpected end");
    const char c = s_[pos_];
    if (c == '{') {
      ++pos_;
      out.kind = Json::kObject;
      if (Eat('}')) return Status::Ok();
      do {
        SkipSpace();
        std::string key;
        BRT_RETURN_IF_ERROR(String(key));
        if (!Eat(':')) return Error("expected ':' after key \"" + key + "\"");
        out.members.push_back({std::move(key), Json()});
        BRT_RETURN_IF_ERROR(Value(out.members.back().value, depth + 1));
      } while (Eat(','));
      return Eat('}') ? Status::Ok() : Error("expected ',' or '}' in an object");
    }
    if (c == '[') {
      ++pos_;
      out.kind = Json::kArray;
      if (Eat(']')) return Status::Ok();
      do {
        out.items.emplace_back();
        BRT_RETURN_IF_ERROR(Value(out.items.back(), depth + 1));
      } while (Eat(','));
      return Eat(']') ? Status::Ok() : Error("expected ',' or ']' in an array");
    }
    if (c == '"') {
      out.kind = Json::kString;
      return String(out.text);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return Integer(out);
    if (Word("true") || Word("false")) {
      out.kind = Json::kBool;
      return Status::Ok();
    }
    if (Word("null")) return Status::Ok();
    return Error(std::string("unexpected character '") + c + "'");
  }

  Status Integer(Json& out) {
    const size_t start = pos_;
    const bool negative = s_[pos_] == '-';
    if (negative) ++pos_;
    uint64_t v = 0;
    size_t digits = 0;
    for (; pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9'; ++pos_, ++digits) {
      if (v > (uint64_t{1} << 62)) return Error("integer out of range");
      v = v * 10 + static_cast<uint64_t>(s_[pos_] - '0');
    }
    if (!digits) return Error("expected digits");
    if (pos_ < s_.size() && (s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E')) {
      pos_ = start;
      return Error("expected an integer, got a fraction or exponent");
    }
    out.kind = Json::kInt;
    out.number = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    return Status::Ok();
  }

  Status String(std::string& out) {
    if (pos_ >= s_.size() || s_[pos_] != '"') return Error("expected a string");
    ++pos_;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      const char c = s_[pos_++];
      if (static_cast<unsigned char>(c) < 0x20) return Error("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) break;
      const char e = s_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp = 0;
          BRT_RETURN_IF_ERROR(Hex4(cp));
          if (cp >= 0xD800 && cp < 0xDC00) {
            uint32_t low = 0;
            if (!Word("\\u")) return Error("unpaired surrogate");
            BRT_RETURN_IF_ERROR(Hex4(low));
            if (low < 0xDC00 || low >= 0xE000) return Error("unpaired surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          AppendUtf8(cp, out);
          break;
        }
        default:
          return Error(std::string("unknown escape '\\") + e + "'");
      }
    }
    if (pos_ >= s_.size()) return Error("unterminated string");
    ++pos_;
    return Status::Ok();
  }

  Status Hex4(uint32_t& cp) {
    if (pos_ + 4 > s_.size()) return Error("truncated \\u escape");
    for (int i = 0; i < 4; ++i) {
      const char h = s_[pos_++];
      const int d = h >= '0' && h <= '9'   ? h - '0'
                    : h >= 'a' && h <= 'f' ? h - 'a' + 10
                    : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                           : -1;
      if (d < 0) return Error("bad hex digit in a \\u escape");
      cp = cp * 16 + static_cast<uint32_t>(d);
    }
    return Status::Ok();
  }

  static void AppendUtf8(uint32_t cp, std::string& out) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

const Json* Member(const Json& object, std::string_view key) {
  for (const auto& [k, v] : object.members)
    if (k == key) return &v;
  return nullptr;
}

void AppendQuoted(std::string_view s, std::string& out) {
  out += '"';
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

const char* CodeOf(DType dtype) {
  for (const DTypeCode& c : kDTypeCodes)
    if (c.dtype == dtype) return c.code;
  return nullptr;
}

}  // namespace

Expected<SafetensorsFile> ReadSafetensors(const std::string& path) {
  auto bad = [&](const std::string& what) {
    return Status(StatusCode::kInvalidArgument,
                  "'" + path + "' is not a valid .safetensors file: " + what);
  };
  auto mapped = core::MapFile(path, /*copy_on_write=*/true);
  if (!mapped.ok())
    return mapped.status().code() == StatusCode::kInvalidExecutable ? bad("it is empty")
                                                                    : mapped.status();
  const core::ExecutableBytes& bytes = *mapped;
  if (bytes.size < 8) return bad("shorter than its 8-byte header length");
  uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = header_bytes << 8 | bytes.data[i];
  if (header_bytes > kMaxHeaderBytes || header_bytes > bytes.size - 8)
    return bad("the header length " + std::to_string(header_bytes) + " exceeds the file (" +
               std::to_string(bytes.size) + " bytes)");
  auto header =
      JsonReader(std::string_view(reinterpret_cast<const char*>(bytes.data) + 8, header_bytes))
          .Document();
  if (!header.ok()) return bad(header.status().message());
  if (header->kind != Json::kObject) return bad("the header is not a JSON object");
  uint8_t* data = const_cast<uint8_t*>(bytes.data) + 8 + header_bytes;
  const uint64_t data_bytes = bytes.size - 8 - header_bytes;
  std::shared_ptr<void> owner = std::const_pointer_cast<void>(bytes.owner);

  SafetensorsFile file;
  std::set<std::string> seen;
  std::vector<std::pair<uint64_t, NamedTensor>> by_offset;
  for (const auto& [name, entry] : header->members) {
    if (!seen.insert(name).second) return bad("tensor '" + name + "' appears twice");
    if (name == "__metadata__") {
      if (entry.kind != Json::kObject) return bad("__metadata__ is not an object");
      for (const auto& [k, v] : entry.members) {
        if (v.kind != Json::kString) return bad("__metadata__ value '" + k + "' is not a string");
        file.metadata[k] = v.text;
      }
      continue;
    }
    const std::string where = "tensor '" + name + "': ";
    if (entry.kind != Json::kObject) return bad(where + "its entry is not an object");
    const Json* dtype = Member(entry, "dtype");
    const Json* shape = Member(entry, "shape");
    const Json* offsets = Member(entry, "data_offsets");
    if (!dtype || dtype->kind != Json::kString) return bad(where + "no \"dtype\" string");
    if (!shape || shape->kind != Json::kArray) return bad(where + "no \"shape\" array");
    if (!offsets || offsets->kind != Json::kArray || offsets->items.size() != 2 ||
        offsets->items[0].kind != Json::kInt || offsets->items[1].kind != Json::kInt)
      return bad(where + "\"data_offsets\" is not [begin, end]");
    auto code = std::find_if(std::begin(kDTypeCodes), std::end(kDTypeCodes),
                             [&](const DTypeCode& c) { return dtype->text == c.code; });
    if (code == std::end(kDTypeCodes))
      return Status(StatusCode::kUnsupported,
                    "'" + path + "': " + where + "element type " + dtype->text +
                        " is not supported (brt reads F64, F32, F16, BF16, I64, I32, I16, I8, "
                        "U8, U16, U32, U64, BOOL, C64)");
    std::vector<int64_t> dims;
    for (const Json& d : shape->items) {
      if (d.kind != Json::kInt || d.number < 0)
        return bad(where + "the shape has an entry that is not a non-negative integer");
      dims.push_back(d.number);
    }
    const auto count = NumElements(dims);
    if (!count || dims.size() > 16)
      return bad(where + "shape " + FormatShape(dims) + " is too large");
    const int64_t begin = offsets->items[0].number, end = offsets->items[1].number;
    const uint64_t expected = static_cast<uint64_t>(*count) * DTypeSize(code->dtype);
    if (begin < 0 || end < begin || static_cast<uint64_t>(end) > data_bytes)
      return bad(where + "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                 "] fall outside the " + std::to_string(data_bytes) + " data bytes");
    if (static_cast<uint64_t>(end - begin) != expected)
      return bad(where + "holds " + std::to_string(end - begin) + " bytes, but " + code->code +
                 " " + FormatShape(dims) + " needs " + std::to_string(expected));
    uint8_t* p = data + begin;
    Tensor t;
    if (reinterpret_cast<uintptr_t>(p) % DTypeSize(code->dtype) == 0) {
      t = Tensor::Adopt(p, code->dtype, dims, [owner](void*) {});
    } else {
      t = Tensor::Allocate(code->dtype, dims);
      std::memcpy(t.data(), p, expected);
    }
    by_offset.emplace_back(static_cast<uint64_t>(begin), NamedTensor{name, std::move(t)});
  }
  std::stable_sort(by_offset.begin(), by_offset.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [offset, t] : by_offset) file.tensors.push_back(std::move(t));
  return file;
}

Status WriteSafetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                        const std::map<std::string, std::string>& metadata) {
  auto bad = [&](const std::string& what) {
    return Status(StatusCode::kInvalidArgument, "writing '" + path + "': " + what);
  };
  // Widest elements first, as the safetensors package lays them out: with
  // the header padded to 8 bytes, every tensor starts aligned to its element.
  std::vector<const NamedTensor*> order;
  std::set<std::string_view> names;
  for (const NamedTensor& t : tensors) {
    if (t.name == "__metadata__") return bad("a tensor may not be named __metadata__");
    if (!names.insert(t.name).second) return bad("tensor '" + t.name + "' is given twice");
    if (!CodeOf(t.tensor.dtype()))
      return bad("tensor '" + t.name + "': element type " + DTypeName(t.tensor.dtype()) +
                 " has no safetensors code");
    if (t.tensor.device().kind != DeviceKind::kCpu)
      return bad("tensor '" + t.name + "' is on " + DeviceKindName(t.tensor.device().kind) +
                 "; copy it to the host first");
    if (t.tensor.num_bytes() && !t.tensor.data()) return bad("tensor '" + t.name + "' has no data");
    order.push_back(&t);
  }
  std::stable_sort(order.begin(), order.end(), [](const NamedTensor* a, const NamedTensor* b) {
    return DTypeSize(a->tensor.dtype()) > DTypeSize(b->tensor.dtype());
  });
  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    for (const auto& [k, v] : metadata) {
      if (header.back() != '{') header += ',';
      AppendQuoted(k, header);
      header += ':';
      AppendQuoted(v, header);
    }
    header += '}';
  }
  uint64_t offset = 0;
  for (const NamedTensor* t : order) {
    if (header.size() > 1) header += ',';
    AppendQuoted(t->name, header);
    header += ":{\"dtype\":\"";
    header += CodeOf(t->tensor.dtype());
    header += "\",\"shape\":[";
    for (size_t d = 0; d < t->tensor.shape().size(); ++d)
      header += (d ? "," : "") + std::to_string(t->tensor.shape()[d]);
    const uint64_t end = offset + t->tensor.num_bytes();
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(end) + "]}";
    offset = end;
  }
  header += '}';
  header.append((8 - header.size() % 8) % 8, ' ');

  const std::string temporary = path + ".partial";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return bad(std::string("cannot create '") + temporary + "': " + std::strerror(errno));
    uint8_t length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(header.size() >> (8 * i));
    out.write(reinterpret_cast<const char*>(length), 8);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    for (const NamedTensor* t : order)
      out.write(static_cast<const char*>(t->tensor.data()),
                static_cast<std::streamsize>(t->tensor.num_bytes()));
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      return bad("writing '" + temporary + "' failed (disk full?)");
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temporary.c_str());
    return bad("cannot rename '" + temporary + "' over it: " + why);
  }
  return Status::Ok();
}

}  // namespace brt
