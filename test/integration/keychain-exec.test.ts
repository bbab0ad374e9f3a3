import { SECRET_SERVICE_PROVIDERS } from "../support/secret-service-providers.ts";
import { describeExec } from "../support/exec-suite.ts";

for (const provider of SECRET_SERVICE_PROVIDERS) {
  describeExec(`the Secret Service (${provider.name})`, async () => {
    const session = await provider.start();
    return { env: session.env, args: [], close: () => session.close() };
  });
}
