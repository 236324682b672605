// brt-bucket-all-reduce: a data-parallel step's gradient all_reduces move up
// to where their gradients are made, and those made one after another are
// packed into buckets of about `bucket-bytes` (flattened, concatenated, one
// all_reduce, sliced back). The MPI provider runs collectives on a queue
// while the backward pass goes on, so each bucket moves while the gradients
// of the layers before it are computed; fewer, larger messages pay the
// link's per-message latency less often. Every rank runs the same program,
// so every rank issues the buckets in the same order.
#include "BrtDialect.h"
#include "RuntimeTypes.h"
#include "brt/op_registry.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "passes/Passes.h"
#include "passes/Patterns.h"

namespace brt::bridge {

#define GEN_PASS_DEF_BUCKETALLREDUCE
#include "passes/Passes.h.inc"

namespace {

struct BucketAllReducePass : impl::BucketAllReduceBase<BucketAllReducePass> {
  using BucketAllReduceBase::BucketAllReduceBase;

  void runOnOperation() override {
    Bucket();
    // What reads a result (pmean's divide, a bucket's slices) moves down to
    // just before what needs it in turn, so the host does not wait for the
    // transfer early.
    for (mlir::Operation* reduce : placed_)
      for (mlir::Operation* user : llvm::make_early_inc_range(reduce->getUsers())) Sink(user);
  }

  // Moves `op` (and first, what reads it) to just before its first reader.
  void Sink(mlir::Operation* op) {
    auto k = mlir::dyn_cast<KernelOp>(op);
    const OpSchema* schema = k ? FindOpSchema(k.getKind().str()) : nullptr;
    if (!k || (schema && (schema->flags & op_flags::kCollective)) ||
        op->getBlock() != &getOperation().getBody().front())
      return;
    for (mlir::Operation* user : llvm::make_early_inc_range(op->getUsers())) Sink(user);
    mlir::Operation* first = nullptr;
    for (mlir::Operation* user : op->getUsers())
      if (!first || user->isBeforeInBlock(first)) first = user;
    if (first && first != op->getNextNode()) op->moveBefore(first);
  }

  // An all_reduce of another's result (JAX writes some: the psum of a
  // psum'ed gradient) stays where it is: moved up it would make the host
  // wait for the first transfer there.
  void Bucket() {
    mlir::Block& block = getOperation().getBody().front();
    llvm::DenseMap<mlir::Operation*, int64_t> position;
    int64_t p = 0;
    for (mlir::Operation& op : block) position[&op] = p++;
    // Where an operand is ready: just after its producer (-1: an argument).
    auto ready = [&](KernelOp a) {
      mlir::Operation* def = a.getInputs()[0].getDefiningOp();
      return def ? position[def] : int64_t{-1};
    };
    auto reduced = [&](mlir::Value v) {
      llvm::SmallVector<mlir::Value> work{v};
      llvm::DenseSet<mlir::Value> seen;
      while (!work.empty()) {
        mlir::Value x = work.pop_back_val();
        auto k = x.getDefiningOp<KernelOp>();
        if (!k || !seen.insert(x).second) continue;
        if (k.getKind() == "all_reduce") return true;
        work.append(k.getInputs().begin(), k.getInputs().end());
      }
      return false;
    };
    llvm::SmallVector<KernelOp> reduces;
    for (mlir::Operation& op : block)
      if (auto k = mlir::dyn_cast<KernelOp>(op);
          k && k.getKind() == "all_reduce" && k.getInputs().size() == 1 &&
          k->getNumResults() == 1 && !reduced(k.getInputs()[0]))
        reduces.push_back(k);
    llvm::stable_sort(reduces, [&](KernelOp a, KernelOp b) { return ready(a) < ready(b); });
    // A bucket's all_reduce goes where its last gradient is ready; a member
    // whose result is read before that point cannot wait for the bucket.
    auto read_by = [&](KernelOp a, int64_t at) {
      for (mlir::Operation* user : a->getResult(0).getUsers())
        if (position[user] <= at) return true;
      return false;
    };
    llvm::SmallVector<KernelOp> bucket;
    int64_t bytes = 0;
    auto flush = [&] {
      if (!bucket.empty()) Emit(bucket);
      bucket.clear();
      bytes = 0;
    };
    for (KernelOp a : reduces) {
      const bool fits = !bucket.empty() && a.getParams() == bucket[0].getParams() &&
                        TypeOf(a.getInputs()[0]).getElementType() ==
                            TypeOf(bucket[0].getInputs()[0]).getElementType() &&
                        llvm::none_of(bucket, [&](KernelOp m) { return read_by(m, ready(a)); });
      if (!fits) flush();
      bucket.push_back(a);
      bytes += ByteSize(a.getInputs()[0].getType());
      if (bytes >= bucketBytes) flush();
    }
    flush();
  }

  // The bucket's all_reduce right after its last operand's producer.
  void Emit(llvm::MutableArrayRef<KernelOp> bucket) {
    mlir::Value last = bucket.back().getInputs()[0];
    mlir::OpBuilder b(&getContext());
    if (mlir::Operation* def = last.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(&getOperation().getBody().front());
    if (bucket.size() == 1) {
      bucket[0]->moveBefore(b.getInsertionBlock(), b.getInsertionPoint());
      placed_.insert(bucket[0]);
      return;
    }
    const mlir::Location loc = bucket.back().getLoc();
    const mlir::Type element = TypeOf(last).getElementType();
    auto kernel = [&](mlir::Type type, llvm::StringRef kind, mlir::ValueRange operands,
                      llvm::ArrayRef<mlir::NamedAttribute> params) {
      return KernelOp::create(b, loc, mlir::TypeRange{type}, b.getStringAttr(kind), operands,
                              b.getDictionaryAttr(params))
          .getResult(0);
    };
    llvm::SmallVector<mlir::Value> flat;
    int64_t total = 0;
    for (KernelOp a : bucket) {
      const int64_t n = TypeOf(a.getInputs()[0]).getNumElements();
      flat.push_back(
          kernel(mlir::RankedTensorType::get({n}, element), "reshape", a.getInputs()[0], {}));
      total += n;
    }
    auto whole = mlir::RankedTensorType::get({total}, element);
    mlir::Value packed =
        kernel(whole, "concatenate", flat, {b.getNamedAttr("dimension", b.getI64IntegerAttr(0))});
    mlir::Value reduced =
        kernel(whole, "all_reduce", packed, llvm::to_vector(bucket[0].getParams().getValue()));
    placed_.insert(reduced.getDefiningOp());
    int64_t offset = 0;
    for (KernelOp a : bucket) {
      auto type = TypeOf(a.getResult(0));
      const int64_t n = type.getNumElements();
      mlir::Value piece =
          kernel(mlir::RankedTensorType::get({n}, element), "slice", reduced,
                 {b.getNamedAttr("start_indices", b.getDenseI64ArrayAttr({offset})),
                  b.getNamedAttr("limit_indices", b.getDenseI64ArrayAttr({offset + n})),
                  b.getNamedAttr("strides", b.getDenseI64ArrayAttr({1}))});
      a.getResult(0).replaceAllUsesWith(kernel(type, "reshape", piece, {}));
      offset += n;
    }
    for (KernelOp a : bucket) a->erase();
  }

  llvm::SetVector<mlir::Operation*> placed_;  // all_reduces bucketed or moved, in that order
};

}  // namespace

}  // namespace brt::bridge
