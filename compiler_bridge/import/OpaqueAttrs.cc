#include "import/OpaqueAttrs.h"

#include <cctype>

#include "llvm/ADT/StringRef.h"

namespace brt::bridge {
namespace {

using llvm::StringRef;

// A tiny cursor over the attribute text.
class Text {
 public:
  explicit Text(StringRef s) : s_(s) {}
  void Skip() { s_ = s_.ltrim(); }
  bool Eat(StringRef token) {
    Skip();
    if (!s_.starts_with(token)) return false;
    s_ = s_.drop_front(token.size());
    return true;
  }
  bool Done() {
    Skip();
    return s_.empty();
  }
  StringRef Identifier() {
    Skip();
    size_t n = 0;
    while (n < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[n])) || s_[n] == '_')) ++n;
    StringRef id = s_.take_front(n);
    s_ = s_.drop_front(n);
    return id;
  }
  bool Integer(int64_t* v) {
    Skip();
    StringRef digits = s_.take_while(
        [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '-'; });
    if (digits.empty() || digits.getAsInteger(10, *v)) return false;
    s_ = s_.drop_front(digits.size());
    return true;
  }
  // [1, 2, 3] or []
  bool IntList(llvm::SmallVectorImpl<int64_t>* out) {
    if (!Eat("[")) return false;
    if (Eat("]")) return true;
    do {
      int64_t v;
      if (!Integer(&v)) return false;
      out->push_back(v);
    } while (Eat(","));
    return Eat("]");
  }
  // [b, 0, 1, f]: letters and spatial indices
  bool LayoutList(llvm::SmallVectorImpl<std::string>* out) {
    if (!Eat("[")) return false;
    if (Eat("]")) return true;
    do {
      Skip();
      StringRef item =
          s_.take_while([](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
      if (item.empty()) return false;
      out->push_back(item.str());
      s_ = s_.drop_front(item.size());
    } while (Eat(","));
    return Eat("]");
  }

 private:
  StringRef s_;
};

// key = [..] or key = N, separated by commas, up to the closing '>'.
bool KeyValues(Text& t, mlir::Builder& b, llvm::SmallVectorImpl<mlir::NamedAttribute>& out) {
  if (t.Eat(">")) return true;
  do {
    StringRef key = t.Identifier();
    if (key.empty() || !t.Eat("=")) return false;
    llvm::SmallVector<int64_t> list;
    int64_t v;
    if (t.IntList(&list))
      out.push_back(b.getNamedAttr(key, b.getDenseI64ArrayAttr(list)));
    else if (t.Integer(&v))
      out.push_back(b.getNamedAttr(key, b.getI64IntegerAttr(v)));
    else
      return false;
  } while (t.Eat(","));
  return t.Eat(">") && t.Done();
}

// [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
bool ConvLayout(Text& t, mlir::Builder& b, llvm::SmallVectorImpl<mlir::NamedAttribute>& out) {
  llvm::SmallVector<std::string> in, kernel, res;
  if (!t.LayoutList(&in) || !t.Eat("x") || !t.LayoutList(&kernel) || !t.Eat("->") ||
      !t.LayoutList(&res) || !t.Eat(">") || !t.Done())
    return false;
  auto decode = [&](llvm::ArrayRef<std::string> layout, StringRef prefix, char first,
                    StringRef first_name, char second, StringRef second_name) {
    llvm::SmallVector<int64_t> spatial(layout.size() >= 2 ? layout.size() - 2 : 0, -1);
    bool ok = layout.size() >= 2;
    for (size_t i = 0; i < layout.size() && ok; ++i) {
      const std::string& item = layout[i];
      if (item.size() == 1 && item[0] == first) {
        out.push_back(b.getNamedAttr((prefix + first_name).str(), b.getI64IntegerAttr(i)));
      } else if (item.size() == 1 && item[0] == second) {
        out.push_back(b.getNamedAttr((prefix + second_name).str(), b.getI64IntegerAttr(i)));
      } else {
        unsigned s = 0;
        ok = !StringRef(item).getAsInteger(10, s) && s < spatial.size() && spatial[s] < 0;
        if (ok) spatial[s] = static_cast<int64_t>(i);
      }
    }
    for (int64_t s : spatial) ok = ok && s >= 0;
    if (ok)
      out.push_back(
          b.getNamedAttr((prefix + "spatial_dimensions").str(), b.getDenseI64ArrayAttr(spatial)));
    return ok;
  };
  return decode(in, "input_", 'b', "batch_dimension", 'f', "feature_dimension") &&
         decode(kernel, "kernel_", 'i', "input_feature_dimension", 'o',
                "output_feature_dimension") &&
         decode(res, "output_", 'b', "batch_dimension", 'f', "feature_dimension");
}

}  // namespace

bool DecodeOpaqueAttr(mlir::OpaqueAttr attr, mlir::Builder& b,
                      llvm::SmallVectorImpl<mlir::NamedAttribute>& out, std::string* error) {
  const StringRef data = attr.getAttrData();
  auto fail = [&] {
    *error = "cannot decode StableHLO attribute '#" + attr.getDialectNamespace().str() + "<" +
             data.str() + ">'";
    return false;
  };
  if (attr.getDialectNamespace() != "stablehlo") return fail();
  Text t(data);
  const StringRef mnemonic = t.Identifier();
  if (mnemonic == "dot" || mnemonic == "gather" || mnemonic == "scatter") {
    const size_t first = out.size();
    if (!t.Eat("<") || !KeyValues(t, b, out)) return fail();
    // StableHLO prints no empty list: #stablehlo.dot<> is an outer product
    // (JAX's gradient of a vector-matrix product), contracting nothing.
    if (mnemonic == "dot")
      for (StringRef required : {"lhs_contracting_dimensions", "rhs_contracting_dimensions"})
        if (std::none_of(out.begin() + first, out.end(),
                         [&](const mlir::NamedAttribute& a) { return a.getName() == required; }))
          out.push_back(b.getNamedAttr(required, b.getDenseI64ArrayAttr({})));
    return true;
  }
  if (mnemonic == "conv") return (t.Eat("<") && ConvLayout(t, b, out)) || fail();
  if (mnemonic == "comparison_direction" || mnemonic == "rng_algorithm" || mnemonic == "fft_type") {
    const StringRef value = t.Identifier();
    if (value.empty() || !t.Done()) return fail();
    out.push_back(b.getNamedAttr(mnemonic, b.getStringAttr(value)));
    return true;
  }
  // These choose precision or comparison flavour; the runtime's choice is fixed.
  if (mnemonic == "comparison_type" || mnemonic == "precision" || mnemonic == "result_accuracy")
    return true;
  return fail();
}

}  // namespace brt::bridge
