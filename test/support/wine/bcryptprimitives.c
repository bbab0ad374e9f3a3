/*
 * A stand-in bcryptprimitives.dll for the tests under Wine (test/support/wine-prefix.ts
 * compiles it with x86_64-w64-mingw32-gcc into the test prefix's system32; it is never
 * shipped).
 *
 * Why: Bun's Windows runtime and Rust's standard library (so the @napi-rs/keyring addon)
 * import ProcessPrng from bcryptprimitives.dll, which Windows 10 and later have and Wine 8
 * (Debian 12's) does not. Without it, Wine's loader refuses the executable before any of
 * its code runs (exit code 53, nothing printed). ProcessPrng
 * fills a buffer from the system's CSPRNG; RtlGenRandom (advapi32's SystemFunction036),
 * which Wine has, does the same for at most a ULONG's worth at a time.
 */
#include <windows.h>
#include <ntsecapi.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size) {
  while (size > 0) {
    ULONG chunk = size > 0x80000000u ? 0x80000000u : (ULONG)size;
    if (!RtlGenRandom(data, chunk)) return FALSE;
    data += chunk;
    size -= chunk;
  }
  return TRUE;
}
