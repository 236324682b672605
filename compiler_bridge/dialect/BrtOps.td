// The brt dialect: the runtime-level program a .brtx executable holds.
#ifndef BRT_OPS_TD
#define BRT_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Brt_Dialect : Dialect {
  let name = "brt";
  let cppNamespace = "::brt::bridge";
  let summary = "Runtime-level ops of brt executables";
  let description = [{
    Each op is one runtime op: one op per kind of the op registry
    (brt/ops.def), `brt.add`, `brt.dot_general`, `brt.softmax` for the kind
    `brt.softmax`, ..., generated from its rows with typed attributes; and
    `brt.kernel` for a kind a provider plugin declares. Attributes are plain
    integers, floats, strings and dense elements: exactly what the
    serializer writes into the executable.
  }];
  // Attributes stay in the op's dictionary, next to the passes' brt.*
  // annotations, as the serializer writes them.
  let usePropertiesForAttributes = 0;
}

// What every brt op answers, whatever its kind: the serializer and the
// passes that treat ops alike (placement, checks) read ops through it.
def Brt_OpInterface : OpInterface<"BrtOp"> {
  let cppNamespace = "::brt::bridge";
  let methods = [
    InterfaceMethod<"The op's runtime kind (brt/ops.def, or a plugin's).", "::llvm::StringRef",
                    "getKind", (ins), [{}], [{ return ConcreteOp::kKind; }]>,
    InterfaceMethod<"The operands.", "::mlir::Operation::operand_range", "getInputs", (ins), [{}],
                    [{ return $_op->getOperands(); }]>,
    InterfaceMethod<"The runtime attributes: the op's attributes but the passes' brt.* ones.",
                    "::mlir::DictionaryAttr", "getParams", (ins), [{}], [{
      return ::brt::bridge::RuntimeParams($_op);
    }]>,
  ];
}

class Brt_Op<string mnemonic, list<Trait> traits = []> : Op<Brt_Dialect, mnemonic, traits>;

// The registry's operand and result counts (BrtDialect.h).
def Brt_RegistryArity : NativeOpTrait<"RegistryArity"> {
  let cppNamespace = "::brt::bridge";
}

// One kind of the op registry; brt-gen-kinds-td writes one def per row.
class Brt_RegistryOp<string mnemonic, string kind>
    : Brt_Op<mnemonic, [Pure, Brt_OpInterface, Brt_RegistryArity]> {
  let summary = "the registry kind `" # kind # "`";
  let results = (outs Variadic<AnyRankedTensor>:$outputs);
  let assemblyFormat = "`(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs)";
  let extraClassDeclaration = [{
    static constexpr ::llvm::StringLiteral kKind = "}] # kind # [{";
  }];
}

def Brt_KernelOp : Brt_Op<"kernel", [Pure, Brt_OpInterface]> {
  let summary = "one runtime op of a plugin's kind";
  let arguments = (ins StrAttr:$kind, Variadic<AnyRankedTensor>:$inputs, DictionaryAttr:$params);
  let results = (outs Variadic<AnyRankedTensor>:$outputs);
  let assemblyFormat = "$kind `(` $inputs `)` $params attr-dict `:` functional-type($inputs, $outputs)";
  let description = [{
    A kind no row of the op registry has: a provider plugin's own, left to
    the runtime (which loads it only when a loaded provider declares it).
    Registry kinds have ops of their own and are refused here.
  }];
  let hasVerifier = 1;
}

include "BrtKinds.td"

#endif  // BRT_OPS_TD
