// The brt compiler's passes: names, summaries and options (mlir-tblgen
// -gen-pass-decls makes their base classes, constructors and registration).
// Each pass lives in its own file under passes/ and has a lit test in
// tests/lit/; Pipeline.cc orders them.
#ifndef BRT_PASSES_TD
#define BRT_PASSES_TD

include "mlir/Pass/PassBase.td"

def Verify : Pass<"brt-verify", "mlir::func::FuncOp"> {
  let summary = "Check shapes and dtypes of brt.kernel ops";
}

def CheckIndices : Pass<"brt-check-indices", "mlir::func::FuncOp"> {
  let summary = "Check the indices of every gather and scatter at run time (brt.check_indices): "
                "PyTorch refuses an index out of range that StableHLO clamps or drops";
}

def FoldBatchNorm : Pass<"brt-fold-batch-norm", "mlir::func::FuncOp"> {
  let summary = "Fold per-feature scales and shifts after a convolution with constant weights "
                "(batch norm in inference) into its weights and one shift";
}

def FoldConstants : Pass<"brt-fold-constants", "mlir::func::FuncOp"> {
  let summary = "Evaluate small ops of constants at compile time (with the runtime's CPU provider)";
}

def Simplify : Pass<"brt-simplify", "mlir::func::FuncOp"> {
  let summary = "Drop ops that change nothing (same-shape reshapes, broadcasts and converts, "
                "identity transposes, multiplies by one) and merge reshape and transpose chains";
}

def ChannelsLast : Pass<"brt-channels-last", "mlir::func::FuncOp"> {
  let summary = "Run convolutions channels-last on the CPU and move the transposes this makes "
                "down through elementwise ops, pooling and reductions until they cancel";
  let options = [Option<"target", "target", "std::string", /*default=*/"\"cpu\"", "cpu or cuda">];
}

def FoldTransposeIntoDot : Pass<"brt-fold-transpose-into-dot", "mlir::func::FuncOp"> {
  let summary = "Fold transposes into dot_general operands";
}

def FuseCollectiveMatmul : Pass<"brt-fuse-collective-matmul", "mlir::func::FuncOp"> {
  let summary = "Fuse all_gather into the matmul it feeds and a matmul into the reduce_scatter "
                "it feeds, so the communication overlaps the GEMM";
  let options = [Option<"minRowsPerRank", "min-rows-per-rank", "int64_t", /*default=*/"0",
                        "rows of the rank's own block below which the collective and the GEMM "
                        "stay apart (the serial path)">];
}

def FuseSoftmax : Pass<"brt-fuse-softmax", "mlir::func::FuncOp"> {
  let summary = "Fuse softmax patterns into brt.softmax (for the CPU in f32 and bf16, the types its softmax takes)";
  let options = [Option<"target", "target", "std::string", /*default=*/"\"cpu\"", "cpu or cuda">];
}

def FuseLayerNorm : Pass<"brt-fuse-layer-norm", "mlir::func::FuncOp"> {
  let summary = "Fuse layer-norm patterns into brt.layer_norm";
}

def FuseEpilogues : Pass<"brt-fuse-epilogues", "mlir::func::FuncOp"> {
  let summary = "Fuse bias add and relu/tanh/gelu into the matmul or convolution producing them "
                "(for the CPU only in the element types its brt.matmul and brt.conv take)";
  let options = [Option<"target", "target", "std::string", /*default=*/"\"cpu\"", "cpu or cuda">];
}

def FuseAttention : Pass<"brt-fuse-attention", "mlir::func::FuncOp"> {
  let summary = "Fuse attention (q k^T, scale, mask, softmax, times v) into brt.attention for the CPU";
  let options = [Option<"target", "target", "std::string", /*default=*/"\"cpu\"", "cpu or cuda">];
}

def FuseElementwise : Pass<"brt-fuse-elementwise", "mlir::func::FuncOp"> {
  let summary = "Fuse chains of elementwise ops into brt.fused_elementwise";
}

def BucketAllReduce : Pass<"brt-bucket-all-reduce", "mlir::func::FuncOp"> {
  let summary = "Move all_reduces up to where their operands are made, pack those made one "
                "after another into buckets, and move what reads them down to where it is needed, "
                "so they move while the backward pass goes on";
  let options = [Option<"bucketBytes", "bucket-bytes", "int64_t", /*default=*/"65536",
                        "close a bucket once it holds this many bytes (0: each all_reduce "
                        "alone)">];
}

def GenerateCudaKernels : Pass<"brt-generate-cuda-kernels", "mlir::ModuleOp"> {
  let summary = "Generate CUDA C for the fused elementwise and row reduce ops placed on cuda, "
                "compiled to PTX with NVRTC and attached to each op (brt.generated_kernel)";
  let options = [Option<"arch", "arch", "std::string", /*default=*/"\"compute_80\"",
                        "the virtual architecture of the PTX (runs on it and newer)">,
                 Option<"prefix", "prefix", "std::string", /*default=*/"\"\"",
                        "in every kernel's name, after brt_kernel_: the executable function "
                        "the module becomes, so names are unique in the executable">];
}

def Place : Pass<"brt-place", "mlir::func::FuncOp"> {
  let summary = "Place ops on devices and insert copies";
  let description = [{
    An op runs on the target's device when a provider plugin of the target
    lists its kind in its kernel table (what brt-kernels prints), else on
    the CPU. For cuda the plugins asked are `providers`.
  }];
  let options = [Option<"target", "target", "std::string", /*default=*/"\"cpu\"", "cpu or cuda">,
                 Option<"providers", "providers", "std::string", /*default=*/"\"cuda,nccl\"",
                        "the provider plugins asked which kinds run on cuda (comma-separated)">];
}

#endif  // BRT_PASSES_TD
