/*
 * Reads a generic credential the way any Windows program would (CredReadW) and prints one
 * line: "<LastWritten> <blob> <Persist> <Flags> <AttributeCount> <UserName> <Comment>
 * <TargetAlias>", numbers in decimal, the blob in hex, each string as "x" and its UTF-8
 * in hex, or "-" when it is NULL; or "none" with exit code 1 when there is none. The tests under Wine use it
 * to see the exact bytes and metadata the helper stored and whether an entry was written
 * again, independently of the helper's own code.
 *   read-credential.exe TARGET
 */
#include <windows.h>
#include <wincred.h>
#include <stdio.h>

static void print_hex(const BYTE *bytes, DWORD length) {
  for (DWORD i = 0; i < length; i++) printf("%02x", bytes[i]);
}

static void print_string(const wchar_t *text) {
  char utf8[4096];
  putchar(' ');
  if (text == NULL) {
    putchar('-');
    return;
  }
  /* The length counts the NUL. "x" first, so that an empty string is still a field. */
  int length = WideCharToMultiByte(CP_UTF8, 0, text, -1, utf8, sizeof utf8, NULL, NULL);
  putchar('x');
  if (length > 1) print_hex((const BYTE *)utf8, (DWORD)(length - 1));
}

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
  print_hex(credential->CredentialBlob, credential->CredentialBlobSize);
  printf(" %lu %lu %lu", (unsigned long)credential->Persist, (unsigned long)credential->Flags,
         (unsigned long)credential->AttributeCount);
  print_string(credential->UserName);
  print_string(credential->Comment);
  print_string(credential->TargetAlias);
  putchar('\n');
  CredFree(credential);
  return 0;
}
