#include "BrtDialect.h"

#include "BrtOpsDialect.cpp.inc"

#define GET_OP_CLASSES
#include "BrtOps.cpp.inc"

namespace brt::bridge {

void BrtDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "BrtOps.cpp.inc"
      >();
}

}  // namespace brt::bridge
