#include "simpler/ipc/doorbell.h"

#include <new>

namespace simpler::ipc {

Doorbell::Doorbell() : region_(sizeof(SharedWord)), word_(new (region_.data()) SharedWord{0, 0}) {}

}  // namespace simpler::ipc
