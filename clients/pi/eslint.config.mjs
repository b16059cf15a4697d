// ESLint (flat config): typescript-eslint's type-checked recommended rules on the extension and
// its unit tests, the same set as clients/vscode. Runs first in `npm test`.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
	{ ignores: ["node_modules/", "**/*.mjs"] },
	js.configs.recommended,
	...tseslint.configs.recommendedTypeChecked,
	{
		languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
		rules: {
			// node:test's test() returns a promise that the runner itself awaits.
			"@typescript-eslint/no-floating-promises": [
				"error",
				{ allowForKnownSafeCalls: [{ from: "package", package: "node:test", name: ["describe", "it", "test"] }] },
			],
		},
	},
);
