#include "uet/fabric_address.h"

namespace uet {

std::string FabricAddress::ToString() const {
  const std::string host = ip.ToString();
  return (ip.is_v6() ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace uet
