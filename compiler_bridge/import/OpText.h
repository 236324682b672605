// What the bridge reads off generic-form ops and prints in messages: an
// attribute whether the op keeps it inline or among its properties (the
// generic form of an unregistered op may do either), and the text of an
// attribute, type or location.
#pragma once

#include <string>

#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

namespace brt::bridge {

inline mlir::Attribute AttrOrProperty(mlir::Operation* op, llvm::StringRef name) {
  if (auto a = op->getAttr(name)) return a;
  if (auto props = mlir::dyn_cast_or_null<mlir::DictionaryAttr>(op->getPropertiesAsAttribute()))
    return props.get(name);
  return {};
}

template <typename A>
A AttrOrPropertyOf(mlir::Operation* op, llvm::StringRef name) {
  return mlir::dyn_cast_or_null<A>(AttrOrProperty(op, name));
}

// Anything with print(raw_ostream&): attributes, types, locations.
template <typename T>
std::string PrintedText(const T& x) {
  std::string s;
  llvm::raw_string_ostream os(s);
  x.print(os);
  return s;
}

// "loc(...)" for messages.
inline std::string Where(mlir::Location loc) { return PrintedText(loc); }

}  // namespace brt::bridge
