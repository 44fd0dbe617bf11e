// TSL_ADDRESS_SANITIZER: defined when the build runs under AddressSanitizer, which the
// caches and pools that reuse memory step aside for (so that it sees every object
// freed). GCC says so with __SANITIZE_ADDRESS__, clang (the fuzz build) with
// __has_feature(address_sanitizer).
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define TSL_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TSL_ADDRESS_SANITIZER 1
#endif
#endif
