// Column padding for the text reports of the runtime (the profiler's table, memory
// plan charts).
#pragma once

#include <cstddef>
#include <string>

namespace tsl {

// `s` padded with spaces to `width`: on the right, or on the left when `right_align`.
inline std::string pad(std::string s, size_t width, bool right_align = false) {
  if (s.size() >= width) return s;
  if (right_align) {
    s.insert(0, width - s.size(), ' ');
  } else {
    s.append(width - s.size(), ' ');
  }
  return s;
}

}  // namespace tsl
