#include "tests/sim/host.h"

#include <cassert>

#include "tests/sim/network.h"

namespace uet::sim {

Host::~Host() {
  if (network_ != nullptr) network_->Detach(*this);
}

void Host::Send(Packet packet) {
  assert(attached() && "Host::Send on a host not attached to a network");
  if (!attached()) return;
  ++counters_.sent;
  if (packet.src == IpAddress()) packet.src = address_.ip;
  if (packet.src_port == 0) packet.src_port = address_.port;
  packet.checksum = PayloadChecksum(packet.bytes);
  network_->Transmit(*this, std::move(packet));
}

TimePoint Host::Now() const {
  assert(attached());
  return loop_ != nullptr ? loop_->Now() : TimePoint{};
}

void Host::ScheduleTimer(TimePoint at) {
  assert(attached() && "Host::ScheduleTimer on a host not attached to a network");
  if (!attached()) return;
  if (timer_) loop_->Cancel(*timer_);
  timer_.reset();
  deadline_ = at;
  if (at == TimePoint::Max()) return;
  timer_ = loop_->Schedule(at, [this] { FireTimer(); });
}

void Host::FireTimer() {
  timer_.reset();
  deadline_ = TimePoint::Max();
  ++counters_.timers_fired;
  OnTimer(loop_->Now());
}

}  // namespace uet::sim
