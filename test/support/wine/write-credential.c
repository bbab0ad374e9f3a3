/*
 * Writes a generic credential exactly as the landed version (the @napi-rs/keyring 2.1.2
 * addon, through windows-native-keyring-store) wrote one: Flags 0, Persist
 * CRED_PERSIST_ENTERPRISE, no attributes, an empty comment and target alias, the user name
 * given, and the blob's bytes as given (hex). The tests under Wine use it to check that
 * the helper reads, lists and forgets such entries.
 *   write-credential.exe TARGET USERNAME BLOB-HEX
 */
#include <windows.h>
#include <wincred.h>
#include <stdio.h>
#include <wchar.h>

int wmain(int argc, wchar_t **argv) {
  static BYTE blob[CRED_MAX_CREDENTIAL_BLOB_SIZE + 1];
  wchar_t empty[] = L"";
  CREDENTIALW credential = {0};
  size_t digits;
  if (argc != 4 || (digits = wcslen(argv[3])) % 2 != 0 || digits / 2 > sizeof blob) {
    fputs("usage: write-credential.exe TARGET USERNAME BLOB-HEX\n", stderr);
    return 2;
  }
  for (size_t i = 0; i < digits / 2; i++) {
    unsigned int byte;
    if (swscanf(argv[3] + 2 * i, L"%2x", &byte) != 1) return 2;
    blob[i] = (BYTE)byte;
  }
  credential.Flags = 0;
  credential.Type = CRED_TYPE_GENERIC;
  credential.TargetName = argv[1];
  credential.Comment = empty;
  credential.CredentialBlobSize = (DWORD)(digits / 2);
  credential.CredentialBlob = blob;
  credential.Persist = CRED_PERSIST_ENTERPRISE;
  credential.AttributeCount = 0;
  credential.Attributes = NULL;
  credential.TargetAlias = empty;
  credential.UserName = argv[2];
  if (!CredWriteW(&credential, 0)) {
    fprintf(stderr, "CredWriteW failed with error %lu\n", (unsigned long)GetLastError());
    return 3;
  }
  return 0;
}
