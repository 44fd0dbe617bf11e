// Printing and parsing of device names.
#include "runtime/tensor/device.h"

#include <charconv>

namespace tsl {

std::string Device::str() const {
  if (is_cpu()) return "cpu";
  return "cuda:" + std::to_string(index);
}

std::optional<Device> Device::parse(std::string_view text) {
  if (text == "cpu") return kCPU;
  if (text == "cuda") return Device(DeviceType::CUDA, 0);
  if (text.starts_with("cuda:")) {
    int idx = -1;
    auto digits = text.substr(5);
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), idx);
    if (ec == std::errc() && ptr == digits.data() + digits.size() && idx >= 0 && idx < 64) {
      return Device(DeviceType::CUDA, static_cast<int8_t>(idx));
    }
  }
  return std::nullopt;
}

}  // namespace tsl

namespace tsl {
namespace {
Device g_default_device = kCPU;
}  // namespace

Device default_device() { return g_default_device; }
void set_default_device(Device device) { g_default_device = device; }

}  // namespace tsl
