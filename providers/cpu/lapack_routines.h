// LAPACK's decompositions (reference LAPACK's Fortran symbols, or any that
// replaces them) as C++ overloads over float, double, std::complex<float>
// and std::complex<double>, one signature per routine: the complex
// routines' real workspace `rwork` is ignored by the real ones, and sytrd and
// hetrd, orgqr and ungqr share a name. gfortran passes the lengths of the
// character arguments last. std::complex has Fortran COMPLEX's layout.
#pragma once

#include <complex>
#include <cstddef>

#define BRT_LAPACK_DECLARE_REAL(T, p)                                                             \
  void p##syevd_(const char*, const char*, const int*, T*, const int*, T*, T*, const int*, int*,  \
                 const int*, int*, size_t, size_t);                                               \
  void p##gesdd_(const char*, const int*, const int*, T*, const int*, T*, T*, const int*, T*,     \
                 const int*, T*, const int*, int*, int*, size_t);                                 \
  void p##orgqr_(const int*, const int*, const int*, T*, const int*, const T*, T*, const int*,    \
                 int*);                                                                           \
  void p##geev_(const char*, const char*, const int*, T*, const int*, T*, T*, T*, const int*, T*, \
                const int*, T*, const int*, int*, size_t, size_t);                                \
  void p##sytrd_(const char*, const int*, T*, const int*, T*, T*, T*, T*, const int*, int*, size_t);
#define BRT_LAPACK_DECLARE_COMPLEX(Z, R, p)                                                    \
  void p##heevd_(const char*, const char*, const int*, Z*, const int*, R*, Z*, const int*, R*, \
                 const int*, int*, const int*, int*, size_t, size_t);                          \
  void p##gesdd_(const char*, const int*, const int*, Z*, const int*, R*, Z*, const int*, Z*,  \
                 const int*, Z*, const int*, R*, int*, int*, size_t);                          \
  void p##ungqr_(const int*, const int*, const int*, Z*, const int*, const Z*, Z*, const int*, \
                 int*);                                                                        \
  void p##geev_(const char*, const char*, const int*, Z*, const int*, Z*, Z*, const int*, Z*,  \
                const int*, Z*, const int*, R*, int*, size_t, size_t);                         \
  void p##hetrd_(const char*, const int*, Z*, const int*, R*, R*, Z*, Z*, const int*, int*, size_t);
// The routines whose real and complex forms take the same arguments.
#define BRT_LAPACK_DECLARE_EITHER(T, p)                                                         \
  void p##geqrf_(const int*, const int*, T*, const int*, T*, T*, const int*, int*);             \
  void p##gehrd_(const int*, const int*, const int*, T*, const int*, T*, T*, const int*, int*); \
  void p##gtsv_(const int*, const int*, T*, T*, T*, T*, const int*, int*);

extern "C" {
BRT_LAPACK_DECLARE_REAL(float, s)
BRT_LAPACK_DECLARE_REAL(double, d)
BRT_LAPACK_DECLARE_COMPLEX(std::complex<float>, float, c)
BRT_LAPACK_DECLARE_COMPLEX(std::complex<double>, double, z)
BRT_LAPACK_DECLARE_EITHER(float, s)
BRT_LAPACK_DECLARE_EITHER(double, d)
BRT_LAPACK_DECLARE_EITHER(std::complex<float>, c)
BRT_LAPACK_DECLARE_EITHER(std::complex<double>, z)
}
#undef BRT_LAPACK_DECLARE_REAL
#undef BRT_LAPACK_DECLARE_COMPLEX
#undef BRT_LAPACK_DECLARE_EITHER

namespace brt::cpu::lapack {

// Every matrix is column-major with its leading dimension its row count.
#define BRT_LAPACK_OVERLOADS_REAL(T, p)                                                           \
  inline void Syevd(char jobz, char uplo, int n, T* a, T* w, T* work, int lwork, T*, int,         \
                    int* iwork, int liwork, int* info) {                                          \
    p##syevd_(&jobz, &uplo, &n, a, &n, w, work, &lwork, iwork, &liwork, info, 1, 1);              \
  }                                                                                               \
  inline void Gesdd(char jobz, int m, int n, T* a, T* s, T* u, int ldu, T* vt, int ldvt, T* work, \
                    int lwork, T*, int* iwork, int* info) {                                       \
    p##gesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);         \
  }                                                                                               \
  inline void Orgqr(int m, int n, int k, T* a, const T* tau, T* work, int lwork, int* info) {     \
    p##orgqr_(&m, &n, &k, a, &m, tau, work, &lwork, info);                                        \
  }                                                                                               \
  inline void Sytrd(char uplo, int n, T* a, T* d, T* e, T* tau, T* work, int lwork, int* info) {  \
    p##sytrd_(&uplo, &n, a, &n, d, e, tau, work, &lwork, info, 1);                                \
  }                                                                                               \
  /* wr, wi: the eigenvalues' parts; vl, vr: real and imaginary parts in */                       \
  /* consecutive columns for a complex pair (geev's packing). */                                  \
  inline void Geev(char jobvl, char jobvr, int n, T* a, T* wr, T* wi, T* vl, int ldvl, T* vr,     \
                   int ldvr, T* work, int lwork, int* info) {                                     \
    p##geev_(&jobvl, &jobvr, &n, a, &n, wr, wi, vl, &ldvl, vr, &ldvr, work, &lwork, info, 1, 1);  \
  }
#define BRT_LAPACK_OVERLOADS_COMPLEX(Z, R, p)                                                      \
  inline void Syevd(char jobz, char uplo, int n, Z* a, R* w, Z* work, int lwork, R* rwork,         \
                    int lrwork, int* iwork, int liwork, int* info) {                               \
    p##heevd_(&jobz, &uplo, &n, a, &n, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1,   \
              1);                                                                                  \
  }                                                                                                \
  inline void Gesdd(char jobz, int m, int n, Z* a, R* s, Z* u, int ldu, Z* vt, int ldvt, Z* work,  \
                    int lwork, R* rwork, int* iwork, int* info) {                                  \
    p##gesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1);   \
  }                                                                                                \
  inline void Orgqr(int m, int n, int k, Z* a, const Z* tau, Z* work, int lwork, int* info) {      \
    p##ungqr_(&m, &n, &k, a, &m, tau, work, &lwork, info);                                         \
  }                                                                                                \
  inline void Sytrd(char uplo, int n, Z* a, R* d, R* e, Z* tau, Z* work, int lwork, int* info) {   \
    p##hetrd_(&uplo, &n, a, &n, d, e, tau, work, &lwork, info, 1);                                 \
  }                                                                                                \
  inline void Geev(char jobvl, char jobvr, int n, Z* a, Z* w, Z* vl, int ldvl, Z* vr, int ldvr,    \
                   Z* work, int lwork, R* rwork, int* info) {                                      \
    p##geev_(&jobvl, &jobvr, &n, a, &n, w, vl, &ldvl, vr, &ldvr, work, &lwork, rwork, info, 1, 1); \
  }
#define BRT_LAPACK_OVERLOADS_EITHER(T, p)                                        \
  inline void Geqrf(int m, int n, T* a, T* tau, T* work, int lwork, int* info) { \
    p##geqrf_(&m, &n, a, &m, tau, work, &lwork, info);                           \
  }                                                                              \
  inline void Gehrd(int n, T* a, T* tau, T* work, int lwork, int* info) {        \
    const int ilo = 1;                                                           \
    p##gehrd_(&n, &ilo, &n, a, &n, tau, work, &lwork, info);                     \
  }                                                                              \
  inline void Gtsv(int n, int nrhs, T* dl, T* d, T* du, T* b, int* info) {       \
    p##gtsv_(&n, &nrhs, dl, d, du, b, &n, info);                                 \
  }

BRT_LAPACK_OVERLOADS_REAL(float, s)
BRT_LAPACK_OVERLOADS_REAL(double, d)
BRT_LAPACK_OVERLOADS_COMPLEX(std::complex<float>, float, c)
BRT_LAPACK_OVERLOADS_COMPLEX(std::complex<double>, double, z)
BRT_LAPACK_OVERLOADS_EITHER(float, s)
BRT_LAPACK_OVERLOADS_EITHER(double, d)
BRT_LAPACK_OVERLOADS_EITHER(std::complex<float>, c)
BRT_LAPACK_OVERLOADS_EITHER(std::complex<double>, z)
#undef BRT_LAPACK_OVERLOADS_REAL
#undef BRT_LAPACK_OVERLOADS_COMPLEX
#undef BRT_LAPACK_OVERLOADS_EITHER

}  // namespace brt::cpu::lapack
