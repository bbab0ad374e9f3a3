/*
 * Adds the DER certificate in the file named to the current user's trusted roots (the
 * system store "ROOT"), as a user who trusts a private CA would: the tests under Wine use
 * it to give the prefix the CA of a test server.
 *   trust-root.exe FILE.der
 */
#include <windows.h>
#include <wincrypt.h>
#include <stdio.h>

int wmain(int argc, wchar_t **argv) {
  if (argc != 2) return 2;
  FILE *file = _wfopen(argv[1], L"rb");
  if (file == NULL) return 3;
  static BYTE der[65536];
  size_t size = fread(der, 1, sizeof der, file);
  fclose(file);
  if (size == 0 || size == sizeof der) return 4;
  if (!CertAddEncodedCertificateToSystemStoreW(L"ROOT", der, (DWORD)size)) {
    fprintf(stderr, "CertAddEncodedCertificateToSystemStoreW: error %lu\n", GetLastError());
    return 1;
  }
  return 0;
}
