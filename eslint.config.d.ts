// The one name tests read from eslint.config.js (the lint rules are ESLint's business).
export declare const PROTOCOL_PATH_FILES: readonly string[];
declare const config: readonly unknown[];
export default config;
