import { SECRET_SERVICE_PROVIDERS } from "../support/secret-service-providers.ts";
import { describeProtocol } from "../support/protocol-suite.ts";

for (const provider of SECRET_SERVICE_PROVIDERS) {
  describeProtocol(`the Secret Service (${provider.name})`, async () => {
    const session = await provider.start();
    return { env: session.env, args: [], close: () => session.close() };
  });
}
