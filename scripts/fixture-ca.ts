// `npx tsx scripts/fixture-ca.ts DIR`: CI's macOS and Windows jobs only. Makes the one CA
// (DIR/ca.pem, DIR/ca.key) that signs every e2e fixture server of the run when
// TFCK_TEST_FIXTURE_CA=DIR, for the workflow to trust in the runner's system store: Go
// reads SSL_CERT_FILE on Linux only. Never trust it on a developer's machine.
import { mkdir } from "node:fs/promises";
import { createTestCa } from "../test/e2e/support/certificates.ts";

const [dir, ...rest] = process.argv.slice(2);
if (dir === undefined || rest.length > 0) {
  process.stderr.write("usage: npx tsx scripts/fixture-ca.ts DIR\n");
  process.exit(2);
}
await mkdir(dir, { recursive: true, mode: 0o700 });
const ca = await createTestCa(dir);
process.stdout.write(`${ca.caFile}\n`);
