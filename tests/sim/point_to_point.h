// Two hosts joined by a link each way: A --a_to_b--> B and B --b_to_a--> A.
#pragma once

#include <memory>

#include "tests/sim/network.h"

namespace uet::sim {

class PointToPoint final : public Network {
 public:
  PointToPoint(EventLoop& loop, Host& a, Host& b, const LinkConfig& a_to_b,
               const LinkConfig& b_to_a);
  PointToPoint(EventLoop& loop, Host& a, Host& b, const LinkConfig& both_ways)
      : PointToPoint(loop, a, b, both_ways, both_ways) {}

  Link& a_to_b() { return *a_to_b_; }
  Link& b_to_a() { return *b_to_a_; }

 private:
  std::unique_ptr<Link> a_to_b_;
  std::unique_ptr<Link> b_to_a_;
};

}  // namespace uet::sim
