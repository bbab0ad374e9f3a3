/*
 * Never exits, reads nothing, prints nothing: a Windows helper that hangs, for the test
 * that a call from WSL ends it at the call's deadline.
 *   hang.exe [anything...]
 */
#include <windows.h>

int wmain(void) {
  Sleep(INFINITE);
  return 0;
}
