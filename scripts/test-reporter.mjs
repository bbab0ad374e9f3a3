// node --test loads its reporters before `--import tsx` takes effect, so it cannot load the
// TypeScript reporter itself: this loads it through tsx's API.
import { tsImport } from "tsx/esm/api";

const { default: reporter } = await tsImport("./test-reporter.ts", import.meta.url);
export default reporter;
