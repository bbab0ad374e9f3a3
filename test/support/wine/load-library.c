/*
 * Exits 0 when LoadLibraryW finds the DLL named, 1 when it does not: the tests under Wine
 * use it to prove that their prefix lacks the Visual C++ runtime.
 *   load-library.exe NAME.dll
 */
#include <windows.h>

int wmain(int argc, wchar_t **argv) {
  if (argc != 2) return 2;
  return LoadLibraryW(argv[1]) == NULL ? 1 : 0;
}
