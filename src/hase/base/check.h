// HASE_CHECK: a broken invariant is a bug; print where and abort. Never for bad input
// (that is a Status, see status.h).
#pragma once

#include <cstdio>
#include <cstdlib>

#define HASE_CHECK(cond)                                                             \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "hase: internal check failed at %s:%d: %s\n", __FILE__, \
                   __LINE__, #cond);                                                 \
      std::abort();                                                                  \
    }                                                                                \
  } while (0)
