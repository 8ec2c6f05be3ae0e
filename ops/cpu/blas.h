/* <blis.h> warns under -Wextra (type limits, unused static inlines) and CMake adds its
 * directory as an ordinary include path; including it from a header marked as a system
 * header keeps our -Werror for our own code only. */
#ifndef TFSH_OPS_CPU_BLAS_H
#define TFSH_OPS_CPU_BLAS_H
#pragma GCC system_header
#include <blis.h>
#endif
