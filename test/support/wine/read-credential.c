/*
 * Reads a generic credential the way any Windows program would (CredReadW) and prints
 * "<LastWritten> <blob as hex>", or "none" with exit code 1 when there is none. The tests
 * under Wine use it to see the exact bytes the helper stored and whether an entry was
 * written again, independently of the helper's own reading code.
 *   read-credential.exe TARGET
 */
#include <windows.h>
#include <wincred.h>
#include <stdio.h>

int wmain(int argc, wchar_t **argv) {
  PCREDENTIALW credential;
  if (argc != 2) {
    fputs("usage: read-credential.exe TARGET\n", stderr);
    return 2;
  }
  if (!CredReadW(argv[1], CRED_TYPE_GENERIC, 0, &credential)) {
    DWORD error = GetLastError();
    if (error == ERROR_NOT_FOUND) {
      puts("none");
      return 1;
    }
    fprintf(stderr, "CredReadW failed with error %lu\n", (unsigned long)error);
    return 3;
  }
  ULONGLONG written = ((ULONGLONG)credential->LastWritten.dwHighDateTime << 32) |
                      credential->LastWritten.dwLowDateTime;
  printf("%llu ", written);
  for (DWORD i = 0; i < credential->CredentialBlobSize; i++) {
    printf("%02x", credential->CredentialBlob[i]);
  }
  putchar('\n');
  CredFree(credential);
  return 0;
}
