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
    Each op is one runtime op: a StableHLO op kind (`add`, `dot_general`, ...)
    or a brt op kind (`brt.softmax`, ...), with its attributes decoded into
    plain integers, floats, strings and dense elements -- exactly what the
    serializer writes into the executable.
  }];
}

class Brt_Op<string mnemonic, list<Trait> traits = []> : Op<Brt_Dialect, mnemonic, traits>;

def Brt_KernelOp : Brt_Op<"kernel", [Pure]> {
  let summary = "one runtime op, named by its kind";
  let arguments = (ins StrAttr:$kind, Variadic<AnyRankedTensor>:$inputs, DictionaryAttr:$params);
  let results = (outs Variadic<AnyRankedTensor>:$outputs);
  let assemblyFormat = "$kind `(` $inputs `)` $params attr-dict `:` functional-type($inputs, $outputs)";
  let description = [{
    A kind of the op registry (brt/ops.def) is verified against it: operand
    count, one result, and each required attribute present with its type.
    Any other kind is a plugin's own, left to the runtime (which loads it
    only when a loaded provider declares it).
  }];
  let hasVerifier = 1;
}

#endif  // BRT_OPS_TD
