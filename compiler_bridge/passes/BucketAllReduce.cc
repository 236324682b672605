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
    auto k = mlir::dyn_cast<BrtOp>(op);
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
    auto ready = [&](AllReduceOp a) {
      mlir::Operation* def = a.getInputs()[0].getDefiningOp();
      return def ? position[def] : int64_t{-1};
    };
    auto reduced = [&](mlir::Value v) {
      llvm::SmallVector<mlir::Value> work{v};
      llvm::DenseSet<mlir::Value> seen;
      while (!work.empty()) {
        mlir::Value x = work.pop_back_val();
        auto k = x.getDefiningOp<BrtOp>();
        if (!k || !seen.insert(x).second) continue;
        if (mlir::isa<AllReduceOp>(k)) return true;
        work.append(k.getInputs().begin(), k.getInputs().end());
      }
      return false;
    };
    llvm::SmallVector<AllReduceOp> reduces;
    for (mlir::Operation& op : block)
      if (auto a = mlir::dyn_cast<AllReduceOp>(op);
          a && a.getInputs().size() == 1 && a->getNumResults() == 1 && !reduced(a.getInputs()[0]))
        reduces.push_back(a);
    llvm::stable_sort(reduces, [&](AllReduceOp a, AllReduceOp b) { return ready(a) < ready(b); });
    // A bucket's all_reduce goes where its last gradient is ready; a member
    // whose result is read before that point cannot wait for the bucket.
    auto read_by = [&](AllReduceOp a, int64_t at) {
      for (mlir::Operation* user : a->getResult(0).getUsers())
        if (position[user] <= at) return true;
      return false;
    };
    llvm::SmallVector<AllReduceOp> bucket;
    int64_t bytes = 0;
    auto flush = [&] {
      if (!bucket.empty()) Emit(bucket);
      bucket.clear();
      bytes = 0;
    };
    for (AllReduceOp a : reduces) {
      const bool fits = !bucket.empty() && a.getParams() == bucket[0].getParams() &&
                        TypeOf(a.getInputs()[0]).getElementType() ==
                            TypeOf(bucket[0].getInputs()[0]).getElementType() &&
                        llvm::none_of(bucket, [&](AllReduceOp m) { return read_by(m, ready(a)); });
      if (!fits) flush();
      bucket.push_back(a);
      bytes += ByteSize(a.getInputs()[0].getType());
      if (bytes >= bucketBytes) flush();
    }
    flush();
  }

  // The bucket's all_reduce right after its last operand's producer.
  void Emit(llvm::MutableArrayRef<AllReduceOp> bucket) {
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
    llvm::SmallVector<mlir::Value> flat;
    int64_t total = 0;
    for (AllReduceOp a : bucket) {
      const int64_t n = TypeOf(a.getInputs()[0]).getNumElements();
      flat.push_back(Reshape(b, loc, a.getInputs()[0], {n}));
      total += n;
    }
    auto whole = mlir::RankedTensorType::get({total}, element);
    mlir::Value packed =
        ConcatenateOp::create(b, loc, mlir::TypeRange{whole}, flat, uint64_t{0}).getResult(0);
    // The members' attributes (reducer, groups), which they share.
    mlir::Value reduced =
        AllReduceOp::create(b, loc, mlir::TypeRange{whole}, mlir::ValueRange{packed},
                            bucket[0].getParams().getValue())
            .getResult(0);
    placed_.insert(reduced.getDefiningOp());
    int64_t offset = 0;
    for (AllReduceOp a : bucket) {
      auto type = TypeOf(a.getResult(0));
      const int64_t n = type.getNumElements();
      mlir::Value piece =
          SliceOp::create(b, loc, mlir::TypeRange{mlir::RankedTensorType::get({n}, element)},
                          mlir::ValueRange{reduced}, llvm::ArrayRef<int64_t>{offset},
                          llvm::ArrayRef<int64_t>{offset + n}, b.getDenseI64ArrayAttr({1}))
              .getResult(0);
      a.getResult(0).replaceAllUsesWith(
          ReshapeOp::create(b, loc, mlir::TypeRange{type}, mlir::ValueRange{piece}).getResult(0));
      offset += n;
    }
    for (AllReduceOp a : bucket) a->erase();
  }

  llvm::SetVector<mlir::Operation*> placed_;  // all_reduces bucketed or moved, in that order
};

}  // namespace

}  // namespace brt::bridge
