// @ts-check
import js from "@eslint/js";
import prettier from "eslint-config-prettier";
import n from "eslint-plugin-n";
import tseslint from "typescript-eslint";

/** Modules that only some folders may import: the lint keeps the architecture honest. */
const restrictedImports = (...names) => ({
  paths: names.map((name) => ({
    name,
    message: `${name} belongs to another layer; see STYLE.md section 4`,
  })),
});

/**
 * The layers (STYLE.md section 1), each with those above it, which it may not import:
 * main → cli → commands → stores/terraform → protocol/system. Imports of one's own layer
 * start with "./" (or climb within it), so a layer above is reached only by going up.
 */
const LAYERS_ABOVE = {
  cli: ["main.ts"],
  commands: ["cli", "main.ts"],
  stores: ["commands", "cli", "main.ts"],
  terraform: ["stores", "commands", "cli", "main.ts"],
  protocol: ["terraform", "stores", "commands", "cli", "main.ts"],
  system: ["protocol", "terraform", "stores", "commands", "cli", "main.ts"],
};

/** An import of `name` (a folder or a file of src/) from anywhere below src/. */
const upTo = (name) => ({
  regex: `^(\\.\\./)+${name.replace(".", "\\.")}${name.endsWith(".ts") ? "$" : "/"}`,
  message: `${name} is above this layer (STYLE.md section 1): move what both need below them`,
});

/** A store's own folder, from outside src/stores/: only the registry names a store. */
const STORE_FOLDER = {
  regex: "^(\\./|(\\.\\./)+)stores/[^/]+/",
  message: "ask src/stores/registry.ts: nothing outside src/stores/ names a particular store",
};

/** Another store's folder, from inside one: each store is a folder of its own. */
const OTHER_STORE_FOLDER = {
  regex: "^\\.\\./[^./][^/]*/",
  message: "a store imports no other store's folder: move what both need to src/stores/",
};

const NO_ENUMS = { selector: "TSEnumDeclaration", message: "use `as const` objects" };

/**
 * Refuses imports matching `patterns`, static (`import`, `export … from`) and dynamic
 * (`import("…")`, which no-restricted-imports does not see) alike.
 */
const layerRules = (patterns) => ({
  "@typescript-eslint/no-restricted-imports": ["error", { patterns }],
  "no-restricted-syntax": [
    "error",
    NO_ENUMS,
    ...patterns.map(({ regex, message }) => ({
      // esquery ends a regular expression at the first "/": write it as \x2F.
      selector: `ImportExpression[source.value=/${regex.replaceAll("/", "\\x2F")}/]`,
      message,
    })),
  ],
});

const layerBlocks = [
  ...Object.entries(LAYERS_ABOVE).map(([layer, above]) => ({
    files: [`src/${layer}/**/*.ts`],
    rules: layerRules([...above.map(upTo), ...(layer === "stores" ? [] : [STORE_FOLDER])]),
  })),
  {
    files: ["src/stores/*/**/*.ts"],
    rules: layerRules([...LAYERS_ABOVE.stores.map(upTo), OTHER_STORE_FOLDER]),
  },
  { files: ["src/main.ts"], rules: layerRules([STORE_FOLDER]) },
];

export default tseslint.config(
  { ignores: ["dist/", "build/", "release/", "node_modules/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: [
            "eslint.config.js",
            "packaging/npm-launcher.cjs",
            "test/support/deadline-watchdog-worker.mjs",
            "scripts/test-reporter.mjs",
          ],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { n },
    rules: {
      "@typescript-eslint/switch-exhaustiveness-check": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-floating-promises": [
        "error",
        {
          // node:test runs what these return by itself.
          allowForKnownSafeCalls: [
            { from: "package", package: "node:test", name: ["test", "describe", "it", "suite"] },
          ],
        },
      ],
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true }],
      "@typescript-eslint/no-confusing-void-expression": ["error", { ignoreArrowShorthand: true }],
      // Stores implement an async interface; a synchronous body is fine.
      "@typescript-eslint/require-await": "off",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { varsIgnorePattern: "^_", argsIgnorePattern: "^_" },
      ],
      "n/prefer-node-protocol": "error",
      "no-restricted-syntax": ["error", NO_ENUMS],
    },
  },
  {
    // Only main.ts and the process edge beside it (system/: descriptors, signals, exit
    // clean-ups) touch `process`; the macOS store loads its addon with process.dlopen, and the
    // Secret Service's socket is Bun's. Those are the only places that know the program runs
    // on Bun.
    files: ["src/**/*.ts"],
    ignores: [
      "src/main.ts",
      "src/stores/macos-keychain/load-keyring.ts",
      "src/stores/secret-service/unix-socket.ts",
      "src/system/**",
      "src/stores/credential-manager/advapi32.ts",
      "src/system/deadline-watchdog-worker.ts",
    ],
    rules: {
      "no-restricted-globals": [
        "error",
        { name: "process", message: "use Io; only src/main.ts and src/system/ touch process" },
        {
          name: "Bun",
          message:
            "only src/system/, the macOS addon loader and the D-Bus socket know the runtime is Bun",
        },
      ],
      "no-restricted-imports": [
        "error",
        restrictedImports("node:process", "bun", "bun:ffi", "@napi-rs/keyring"),
      ],
    },
  },
  {
    // The FFI module holds every pointer (STYLE.md section 1): with system/core-dumps.ts (one
    // prctl call, at the process edge), the only file with bun:ffi.
    files: ["src/stores/credential-manager/advapi32.ts"],
    rules: {
      "no-restricted-globals": [
        "error",
        { name: "process", message: "use Io; only src/main.ts touches process" },
      ],
      "no-restricted-imports": [
        "error",
        restrictedImports("node:process", "bun", "@napi-rs/keyring"),
      ],
    },
  },
  {
    // The watchdog thread stands at the process edge, as main.ts does: it ends the process.
    files: ["src/system/deadline-watchdog-worker.ts"],
    rules: {
      "no-restricted-imports": ["error", restrictedImports("bun", "bun:ffi", "@napi-rs/keyring")],
    },
  },
  {
    // Those that may touch process and Bun still stay below cli/, like every layer.
    files: [
      "src/system/**/*.ts",
      "src/stores/macos-keychain/load-keyring.ts",
      "src/stores/secret-service/unix-socket.ts",
    ],
    rules: { "no-restricted-imports": ["error", restrictedImports()] },
  },
  {
    // The file system is for commands/, the macOS addon cache and stores that are files by nature.
    files: [
      "src/cli/**/*.ts",
      "src/protocol/**/*.ts",
      "src/terraform/**/*.ts",
      "src/stores/macos-keychain/keychain-store.ts",
    ],
    rules: {
      "no-restricted-imports": [
        "error",
        restrictedImports("node:process", "bun", "@napi-rs/keyring", "node:fs", "node:fs/promises"),
      ],
    },
  },
  {
    files: ["test/**/*.ts", "scripts/**/*.ts"],
    rules: {
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
  ...layerBlocks,
  { files: ["**/*.js", "**/*.cjs", "**/*.mjs"], ...tseslint.configs.disableTypeChecked },
  {
    // Plain CommonJS run directly by Node: the npm package's launcher.
    files: ["**/*.cjs"],
    languageOptions: {
      sourceType: "commonjs",
      globals: { require: "readonly", process: "readonly" },
    },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  prettier,
);
