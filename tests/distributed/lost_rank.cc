// A rank lost mid-run: every rank runs an all_reduce in a loop; the last rank
// kills itself (SIGKILL) at iteration 20. The others must end with an error
// naming it, never hang (test_distributed.py times them).
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "brt/builder.h"
#include "brt/session.h"

int main() {
  brt::ExecutableBuilder b;
  auto& f = b.AddFunction("main");
  auto x = f.Input("x", brt::DType::kF32, {1024});
  f.Output("y", f.Op("all_reduce", {x}, {{brt::DType::kF32, {1024}}}, {{"reducer", "add"}})[0]);
  auto bytes = b.Serialize();
  auto session = brt::Session::LoadMemory(*bytes);
  if (!session.ok()) {
    std::fprintf(stderr, "load: %s\n", session.status().message().c_str());
    return 2;
  }
  const int rank = (*session)->rank(), world = (*session)->world_size();
  std::vector<float> in(1024, 1.0f + rank), out(1024);
  auto ctx = (*session)->NewRequest();
  if (!(*ctx)->Bind("x", brt::Tensor::Borrow(in.data(), brt::DType::kF32, {1024})).ok() ||
      !(*ctx)->Bind("y", brt::Tensor::Borrow(out.data(), brt::DType::kF32, {1024})).ok())
    return 2;
  for (int it = 0; it < 200; ++it) {
    if (rank == world - 1 && it == 20) raise(SIGKILL);
    brt::Status s = (*ctx)->Run();
    if (!s.ok()) {
      std::fprintf(stderr, "rank %d, iteration %d: %s\n", rank, it, s.message().c_str());
      std::fflush(stderr);
      // The lost rank cannot take part in MPI_Finalize: leave without it.
      std::_Exit(3);
    }
  }
  std::printf("rank %d finished: the lost rank was not noticed\n", rank);
  return 0;
}
