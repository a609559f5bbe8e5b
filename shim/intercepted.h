// How the entries of shim/intercepted.def become code: the kinds of argument, and for each kind
// its C parameter, its Fortran parameter and its translation from Fortran to C, so that one entry
// gives the declaration of the shim's on<Name> (shim/collectives.h), the C entry point
// (shim/c_wrappers.cc) and the Fortran body behind the five Fortran names
// (shim/fortran_wrappers.cc). The Fortran helpers the bodies use are here too.
//
// An entry's arguments are a parenthesised list of KIND(name), in the C function's order:
//
//   kind      C parameter           Fortran parameter    Fortran to C
//   BufIn     const void* name      const void* name     the sentinels MPI_IN_PLACE/MPI_BOTTOM
//   BufOut    void* name            void* name             translated (fortran::buffer)
//   Int       int name              const MPI_Fint* name *name
//   Ints      const int name[]      const MPI_Fint* name name, as is (MPI_Fint is int)
//   Datatype  MPI_Datatype name     const MPI_Fint* name PMPI_Type_f2c(*name)
//   Op        MPI_Op name           const MPI_Fint* name PMPI_Op_f2c(*name)
//   Comm      MPI_Comm name         const MPI_Fint* name PMPI_Comm_f2c(*name)
//   Request   MPI_Request* name     MPI_Fint* name       a local MPI_Request, whose handle is
//                                                          PMPI_Request_c2f'd into *name after a
//                                                          successful call
//
// Every Fortran body ends with MPI_Fint* ierror, which may be null (mpi_f08 omits it), and, under
// another MPI library than Open MPI, hands the call to that library's own Fortran binding.
//
// The kinds are pasted onto a prefix (OVERPASS_C_PARAM_ ## BufIn(x) -> OVERPASS_C_PARAM_BufIn(x)),
// so they must never be macros themselves.
#pragma once

#include <dlfcn.h>
#include <mpi.h>

#include <type_traits>

#include "shim/runtime.h"

// Fortran integer arrays (counts, displacements) are handed to the C functions as they are.
static_assert(std::is_same_v<MPI_Fint, int>, "Ints arguments pass MPI_Fint arrays as int arrays");

// ---- Applying a kind macro to every argument of an entry (up to 16).

#define OVERPASS_PP_PASTE(a, b) OVERPASS_PP_PASTE_(a, b)
#define OVERPASS_PP_PASTE_(a, b) a##b
#define OVERPASS_PP_SELECT(a, b) OVERPASS_PP_SELECT_(a, b)
#define OVERPASS_PP_SELECT_(a, b) a##b
#define OVERPASS_PP_COUNT(...) \
  OVERPASS_PP_COUNT_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, )
#define OVERPASS_PP_COUNT_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, \
                           n, ...)                                                                \
  n
#define OVERPASS_PP_STRIP(...) __VA_ARGS__
// The arguments after the first: drops the leading comma of a list built by the kinds.
#define OVERPASS_PP_TAIL(...) OVERPASS_PP_TAIL_(__VA_ARGS__)
#define OVERPASS_PP_TAIL_(first, ...) __VA_ARGS__

// OVERPASS_EACH(PREFIX_, (Kind1(a), Kind2(b))) -> PREFIX_Kind1(a) PREFIX_Kind2(b)
#define OVERPASS_EACH(prefix, args) OVERPASS_EACH_(prefix, OVERPASS_PP_STRIP args)
#define OVERPASS_EACH_(prefix, ...) \
  OVERPASS_PP_SELECT(OVERPASS_EACH_N, OVERPASS_PP_COUNT(__VA_ARGS__))(prefix, __VA_ARGS__)
#define OVERPASS_EACH_N1(p, a) OVERPASS_PP_PASTE(p, a)
#define OVERPASS_EACH_N2(p, a, ...) OVERPASS_PP_PASTE(p, a) OVERPASS_EACH_N1(p, __VA_ARGS__)
#define OVERPASS_EACH_N3(p, a, ...) OVERPASS_PP_PASTE(p, a) OVERPASS_EACH_N2(p, __VA_ARGS__)
#define OVERPASS_EACH_N4(p, a, ...) OVERPASS_PP_PASTE(p, a) OVERPASS_EACH_N3(p, __VA_ARGS__)
#define OVERPASS_EACH_N5(p, a, ...) OVERPASS_PP_PASTE(p, a) OVERPASS_EACH_N4(p, __VA_ARGS__)
#define OVERPASS_EACH_N6(p, a, ...) OVERPASS_PP_PASTE(p, a) OVERPASS_EACH_N5(p, __VA_ARGS__)
#define OVERPASS_EACH_N7(p, a, ...) OVERPASS_PP_PASTE(p, a) OVERPASS_EACH_N6(p, __VA_ARGS__)
#define OVERPASS_EACH_N8(p, a, ...) OVERPASS_PP_PASTE(p, a) OVERPASS_EACH_N7(p, __VA_ARGS__)
#define OVERPASS_EACH_N9(p, a, ...) OVERPASS_PP_PASTE(p, a) OVERPASS_EACH_N8(p, __VA_ARGS__)
#define OVERPASS_EACH_N10(p, a, ...) OVERPASS_PP_PASTE(p, a) OVERPASS_EACH_N9(p, __VA_ARGS__)
#define OVERPASS_EACH_N11(p, a, ...) OVERPASS_PP_PASTE(p, a) OVERPASS_EACH_N10(p, __VA_ARGS__)
#define OVERPASS_EACH_N12(p, a, ...) OVERPASS_PP_PASTE(p, a) OVERPASS_EACH_N11(p, __VA_ARGS__)
#define OVERPASS_EACH_N13(p, a, ...) OVERPASS_PP_PASTE(p, a) OVERPASS_EACH_N12(p, __VA_ARGS__)
#define OVERPASS_EACH_N14(p, a, ...) OVERPASS_PP_PASTE(p, a) OVERPASS_EACH_N13(p, __VA_ARGS__)
#define OVERPASS_EACH_N15(p, a, ...) OVERPASS_PP_PASTE(p, a) OVERPASS_EACH_N14(p, __VA_ARGS__)
#define OVERPASS_EACH_N16(p, a, ...) OVERPASS_PP_PASTE(p, a) OVERPASS_EACH_N15(p, __VA_ARGS__)

// ---- C: the parameters and the arguments of an entry.

#define OVERPASS_C_PARAMS(args) OVERPASS_PP_TAIL(OVERPASS_EACH(OVERPASS_C_PARAM_, args))
#define OVERPASS_C_ARGS(args) OVERPASS_PP_TAIL(OVERPASS_EACH(OVERPASS_NAME_, args))

#define OVERPASS_C_PARAM_BufIn(x) , const void* x
#define OVERPASS_C_PARAM_BufOut(x) , void* x
#define OVERPASS_C_PARAM_Int(x) , int x
#define OVERPASS_C_PARAM_Ints(x) , const int x[]
#define OVERPASS_C_PARAM_Datatype(x) , MPI_Datatype x
#define OVERPASS_C_PARAM_Op(x) , MPI_Op x
#define OVERPASS_C_PARAM_Comm(x) , MPI_Comm x
#define OVERPASS_C_PARAM_Request(x) , MPI_Request* x

#define OVERPASS_NAME_BufIn(x) , x
#define OVERPASS_NAME_BufOut(x) , x
#define OVERPASS_NAME_Int(x) , x
#define OVERPASS_NAME_Ints(x) , x
#define OVERPASS_NAME_Datatype(x) , x
#define OVERPASS_NAME_Op(x) , x
#define OVERPASS_NAME_Comm(x) , x
#define OVERPASS_NAME_Request(x) , x

// The C entry point MPI_<Name>: the shim's on<Name> with the same arguments.
#define OVERPASS_C_ENTRY(Name, args)                                                          \
  extern "C" __attribute__((visibility("default"))) int MPI_##Name(OVERPASS_C_PARAMS(args)) { \
    return overpass::shim::on##Name(OVERPASS_C_ARGS(args));                                   \
  }

// ---- Fortran: the parameters, the locals, the arguments of on<Name>, what follows the call.

#define OVERPASS_F_PARAMS(args) OVERPASS_PP_TAIL(OVERPASS_EACH(OVERPASS_F_PARAM_, args))
#define OVERPASS_F_NAMES(args) OVERPASS_PP_TAIL(OVERPASS_EACH(OVERPASS_NAME_, args))
#define OVERPASS_F_TO_C(args) OVERPASS_PP_TAIL(OVERPASS_EACH(OVERPASS_F_TO_C_, args))

#define OVERPASS_F_PARAM_BufIn(x) , const void* x
#define OVERPASS_F_PARAM_BufOut(x) , void* x
#define OVERPASS_F_PARAM_Int(x) , const MPI_Fint* x
#define OVERPASS_F_PARAM_Ints(x) , const MPI_Fint* x
#define OVERPASS_F_PARAM_Datatype(x) , const MPI_Fint* x
#define OVERPASS_F_PARAM_Op(x) , const MPI_Fint* x
#define OVERPASS_F_PARAM_Comm(x) , const MPI_Fint* x
#define OVERPASS_F_PARAM_Request(x) , MPI_Fint* x

// Qualified, so that a parameter named `buffer` (MPI_Bcast's) does not hide the function.
#define OVERPASS_F_TO_C_BufIn(x) , ::overpass::shim::fortran::buffer(x)
#define OVERPASS_F_TO_C_BufOut(x) , ::overpass::shim::fortran::buffer(x)
#define OVERPASS_F_TO_C_Int(x) , *x
#define OVERPASS_F_TO_C_Ints(x) , x
#define OVERPASS_F_TO_C_Datatype(x) , PMPI_Type_f2c(*x)
#define OVERPASS_F_TO_C_Op(x) , PMPI_Op_f2c(*x)
#define OVERPASS_F_TO_C_Comm(x) , PMPI_Comm_f2c(*x)
#define OVERPASS_F_TO_C_Request(x) , &x##_c

// Locals before the call, and what is written back after it (rc: the call's MPI error code).
#define OVERPASS_F_BEFORE_BufIn(x)
#define OVERPASS_F_BEFORE_BufOut(x)
#define OVERPASS_F_BEFORE_Int(x)
#define OVERPASS_F_BEFORE_Ints(x)
#define OVERPASS_F_BEFORE_Datatype(x)
#define OVERPASS_F_BEFORE_Op(x)
#define OVERPASS_F_BEFORE_Comm(x)
#define OVERPASS_F_BEFORE_Request(x) MPI_Request x##_c = MPI_REQUEST_NULL;

#define OVERPASS_F_AFTER_BufIn(x)
#define OVERPASS_F_AFTER_BufOut(x)
#define OVERPASS_F_AFTER_Int(x)
#define OVERPASS_F_AFTER_Ints(x)
#define OVERPASS_F_AFTER_Datatype(x)
#define OVERPASS_F_AFTER_Op(x)
#define OVERPASS_F_AFTER_Comm(x)
#define OVERPASS_F_AFTER_Request(x) \
  if (rc == MPI_SUCCESS) *x = PMPI_Request_c2f(x##_c);

// Under another MPI library, hand the call to that library's own Fortran binding (the next
// definition of mpi_<lower>_) and return.
#define OVERPASS_FORWARD_IF_FOREIGN(lower, ...)                                               \
  if (::overpass::shim::fortran::foreign()) {                                                 \
    static const auto next =                                                                  \
        reinterpret_cast<decltype(&overpass_f_##lower)>(dlsym(RTLD_NEXT, "mpi_" #lower "_")); \
    if (next) next(__VA_ARGS__);                                                              \
    return;                                                                                   \
  }

// The Fortran body overpass_f_<lower>, to which the five Fortran names are aliases
// (OVERPASS_FORTRAN_ALIASES). Declared extern "C" by the includer.
#define OVERPASS_FORTRAN_BODY(Name, lower, args)                       \
  void overpass_f_##lower(OVERPASS_F_PARAMS(args), MPI_Fint* ierror) { \
    OVERPASS_FORWARD_IF_FOREIGN(lower, OVERPASS_F_NAMES(args), ierror) \
    OVERPASS_EACH(OVERPASS_F_BEFORE_, args)                            \
    const int rc = ::overpass::shim::on##Name(OVERPASS_F_TO_C(args));  \
    OVERPASS_EACH(OVERPASS_F_AFTER_, args)                             \
    ::overpass::shim::fortran::setError(ierror, rc);                   \
  }

// The five names a Fortran compiler may give the function mpi_<lower>: mpi_x, mpi_x_, mpi_x__,
// MPI_X and mpi_x_f08_, each an alias of overpass_f_<lower>.
#define OVERPASS_FORTRAN_ALIASES(lower, UPPER)                                           \
  __attribute__((visibility("default"))) decltype(overpass_f_##lower) mpi_##lower        \
      __attribute__((alias("overpass_f_" #lower)));                                      \
  __attribute__((visibility("default"))) decltype(overpass_f_##lower) mpi_##lower##_     \
      __attribute__((alias("overpass_f_" #lower)));                                      \
  __attribute__((visibility("default"))) decltype(overpass_f_##lower) mpi_##lower##__    \
      __attribute__((alias("overpass_f_" #lower)));                                      \
  __attribute__((visibility("default"))) decltype(overpass_f_##lower) MPI_##UPPER        \
      __attribute__((alias("overpass_f_" #lower)));                                      \
  __attribute__((visibility("default"))) decltype(overpass_f_##lower) mpi_##lower##_f08_ \
      __attribute__((alias("overpass_f_" #lower)));

namespace overpass::shim::fortran {

// The addresses of the Fortran sentinels, one per name-mangling convention.
struct Sentinels {
  void* inPlace[4] = {};
  void* bottom[4] = {};

  Sentinels() {
    const char* inPlaceNames[4] = {"mpi_fortran_in_place_", "mpi_fortran_in_place",
                                   "mpi_fortran_in_place__", "MPI_FORTRAN_IN_PLACE"};
    const char* bottomNames[4] = {"mpi_fortran_bottom_", "mpi_fortran_bottom",
                                  "mpi_fortran_bottom__", "MPI_FORTRAN_BOTTOM"};
    for (int i = 0; i < 4; ++i) {
      inPlace[i] = dlsym(RTLD_DEFAULT, inPlaceNames[i]);
      bottom[i] = dlsym(RTLD_DEFAULT, bottomNames[i]);
    }
  }
};

// A Fortran buffer argument as C sees it: MPI_IN_PLACE and MPI_BOTTOM are, in Fortran, the
// addresses of Open MPI's common blocks.
inline const void* buffer(const void* p) {
  static const Sentinels sentinels;
  if (p == nullptr) return p;
  for (int i = 0; i < 4; ++i) {
    if (p == sentinels.inPlace[i]) return MPI_IN_PLACE;
    if (p == sentinels.bottom[i]) return MPI_BOTTOM;
  }
  return p;
}
inline void* buffer(void* p) {
  return const_cast<void*>(buffer(static_cast<const void*>(p)));
}

// ierror is optional in mpi_f08.
inline void setError(MPI_Fint* ierror, int rc) {
  if (ierror) *ierror = static_cast<MPI_Fint>(rc);
}

inline bool foreign() {
  return runtime().phase.load() == Phase::kForeignMpi;
}

}  // namespace overpass::shim::fortran
