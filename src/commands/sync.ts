import { CliError } from "../errors.ts";
import { storeFor, storesOn } from "../stores/registry.ts";
import { deadlineIn, timeoutSeconds } from "../system/deadline.ts";
import type { Io } from "../system/io.ts";
import type { GlobalOptions } from "./options.ts";

/**
 * `sync`: brings the store in step with the copies it shares (for pass: its git remote), for
 * a person or a scheduled job; Terraform's calls never sync. The whole of it ends by its own
 * deadline (`--timeout`), and it says in one line what happened.
 */
export async function sync(io: Io, options: GlobalOptions): Promise<string> {
  const store = storeFor(options.backend, io.platform);
  if (store.sync === undefined) {
    const able = storesOn(io.platform)
      .filter((description) => description.sync !== undefined)
      .map((description) => `--backend ${description.name}`);
    throw new CliError(
      `${store.title} keeps its entries on this machine only: there is nothing to sync${able.length === 0 ? "" : ` (sync is for a store shared through git: ${able.join(", ")})`}`,
    );
  }
  const deadline = deadlineIn(timeoutSeconds(options, io.env));
  return store.sync({ service: options.service, io, deadline });
}
