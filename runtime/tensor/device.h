// Where a tensor's storage lives: the CPU or a CUDA device.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tsl {

enum class DeviceType : uint8_t { CPU = 0, CUDA = 1 };
constexpr int kNumDeviceTypes = 2;

struct Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = 0;  // the CUDA ordinal; always 0 for the CPU

  constexpr Device() = default;
  constexpr Device(DeviceType t, int8_t i = 0) : type(t), index(i) {}
  constexpr bool is_cpu() const { return type == DeviceType::CPU; }
  constexpr bool is_cuda() const { return type == DeviceType::CUDA; }
  constexpr bool operator==(const Device&) const = default;

  // "cpu" or "cuda:0", as PyTorch prints devices.
  std::string str() const;
  // Parses "cpu", "cuda", "cuda:1".
  static std::optional<Device> parse(std::string_view text);
};

constexpr Device kCPU{};

// The device factories create on when given no device= (`tsl --device cuda`); the CPU
// unless changed. Per process, set before code runs.
Device default_device();
void set_default_device(Device device);

}  // namespace tsl
