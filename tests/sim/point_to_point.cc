#include "tests/sim/point_to_point.h"

namespace uet::sim {

PointToPoint::PointToPoint(EventLoop& loop, Host& a, Host& b, const LinkConfig& a_to_b,
                           const LinkConfig& b_to_a)
    : Network(loop) {
  PacketSink& to_a = AttachHost(a);
  PacketSink& to_b = AttachHost(b);
  a_to_b_ = std::make_unique<Link>(loop, a_to_b, to_b, "a->b");
  b_to_a_ = std::make_unique<Link>(loop, b_to_a, to_a, "b->a");
  SetUplink(a, *a_to_b_);
  SetUplink(b, *b_to_a_);
}

}  // namespace uet::sim
